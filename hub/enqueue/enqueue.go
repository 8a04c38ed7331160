// Package enqueue holds the watch mappings the placement-pipeline controllers
// share: from an object labelled with its placement to that placement, from a
// cluster to the placements on it, and the classification of MemberCluster
// updates by what placements read of them.
package enqueue

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// PlacementOf maps an object labelled placement.flotilla.io/placement-name (a
// snapshot, binding or Work of a ClusterResourcePlacement) to its placement.
func PlacementOf(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[placementv1beta1.LabelPlacementName]
	if name == "" || o.GetLabels()[placementv1beta1.LabelPlacementNamespace] != "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
}

// ByPlacementLabel enqueues the placement an object belongs to.
func ByPlacementLabel() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(PlacementOf)
}

// PlacementsOnCluster returns the placements with a binding on cluster, looked
// up through the binding index of hub/pipeline (a manager's cached client).
func PlacementsOnCluster(ctx context.Context, c client.Reader, cluster string) []reconcile.Request {
	list := &placementv1beta1.ClusterResourceBindingList{}
	if err := c.List(ctx, list, client.MatchingFields{pipeline.IndexBindingCluster: cluster}); err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []reconcile.Request
	for i := range list.Items {
		for _, req := range PlacementOf(ctx, &list.Items[i]) {
			if !seen[req.Name] {
				seen[req.Name] = true
				out = append(out, req)
			}
		}
	}
	return out
}

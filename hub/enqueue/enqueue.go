/*
Copyright 2026 The Flotilla Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

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

	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// PlacementOf maps an object labelled placement.flotilla.io/placement-name (a
// snapshot, binding or Work of a placement) to its placement: a
// ClusterResourcePlacement (a request without namespace), or a
// ResourcePlacement when the object is labelled with its namespace too.
func PlacementOf(_ context.Context, o client.Object) []reconcile.Request {
	key, ok := pipeline.OwnerKey(o)
	if !ok {
		return nil
	}
	return []reconcile.Request{key.Request()}
}

// ByPlacementLabel enqueues the placement an object belongs to.
func ByPlacementLabel() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(PlacementOf)
}

// PlacementsOnCluster returns the placements with a binding on cluster, looked
// up through the binding index of hub/pipeline (a manager's cached client).
func PlacementsOnCluster(ctx context.Context, c client.Reader, cluster string) []reconcile.Request {
	bindings, err := pipeline.ListBindingsOnCluster(ctx, c, cluster)
	if err != nil {
		return nil
	}
	seen := map[types.NamespacedName]bool{}
	var out []reconcile.Request
	for _, b := range bindings {
		for _, req := range PlacementOf(ctx, b) {
			if !seen[req.NamespacedName] {
				seen[req.NamespacedName] = true
				out = append(out, req)
			}
		}
	}
	return out
}

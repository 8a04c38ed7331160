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

package scheduler

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/enqueue"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/scheduler/fleet"
	"github.com/flotilla-io/flotilla/hub/schedulinggroup"
)

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// SetupWithManager registers the controller. Each watch wakes only the
// placements an event can change:
//   - a placement whose spec or annotations (rebalance, dynamic selectors)
//     changed, and its policy snapshots;
//   - a binding's own placement when its spec, deletion or the conditions the
//     scheduler reads (EvictionRequested, Available) change — and the placements
//     with placement (anti-)affinity when a placement arrives on or leaves a cluster;
//   - on a MemberCluster change of labels, taints, strictMatchLabels, health or
//     membership: the placements on the cluster and those that could pick it
//     (enqueue.ClusterMatters: not a full PickN, not a PickAll whose required
//     labels the cluster never had); for a change of properties only the
//     placements that select or sort on them; for a heartbeat refresh none;
//   - on a Location change, the placements with locationSelectors;
//   - on an eviction, its placement.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := pipeline.SetupIndexes(mgr); err != nil {
		return err
	}
	if r.fleet == nil {
		r.fleet = fleet.New()
	}
	placementChanged := builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))
	snapshotChanged := builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))
	return ctrl.NewControllerManagedBy(mgr).
		Named("scheduler").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		For(&placementv1beta1.ClusterResourcePlacement{}, placementChanged).
		Watches(&placementv1beta1.ResourcePlacement{}, &handler.EnqueueRequestForObject{}, placementChanged).
		Watches(&placementv1beta1.ClusterSchedulingPolicySnapshot{}, enqueue.ByPlacementLabel(), snapshotChanged).
		Watches(&placementv1beta1.SchedulingPolicySnapshot{}, enqueue.ByPlacementLabel(), snapshotChanged).
		Watches(&placementv1beta1.ClusterResourceBinding{}, r.bindingHandler()).
		Watches(&placementv1beta1.ResourceBinding{}, r.bindingHandler()).
		Watches(&clusterv1beta1.MemberCluster{}, r.clusterHandler()).
		Watches(&clusterv1beta1.Location{}, r.placementsWhere(func(p placementv1beta1.PlacementObj) bool {
			policy := p.GetPlacementSpec().Policy
			return policy != nil && len(policy.LocationSelectors) > 0
		})).
		Watches(&placementv1beta1.ClusterResourcePlacementEviction{}, handler.EnqueueRequestsFromMapFunc(placementOfEviction)).
		Complete(r)
}

// bindingHandler maps binding events to the placements they can change.
func (r *Reconciler) bindingHandler() handler.EventHandler {
	own := func(ctx context.Context, o placementv1beta1.BindingObj, q queue) {
		for _, req := range enqueue.PlacementOf(ctx, o) {
			q.Add(req)
		}
	}
	peers := func(ctx context.Context, q queue) {
		r.addPlacementsWhere(ctx, q, func(p placementv1beta1.PlacementObj) bool { return usesPlacementAffinity(p.GetPlacementSpec().Policy) })
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			if b, ok := e.Object.(placementv1beta1.BindingObj); ok {
				own(ctx, b, q)
				peers(ctx, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			if b, ok := e.Object.(placementv1beta1.BindingObj); ok {
				own(ctx, b, q)
				peers(ctx, q)
			}
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			o, ok1 := e.ObjectOld.(placementv1beta1.BindingObj)
			n, ok2 := e.ObjectNew.(placementv1beta1.BindingObj)
			if !ok1 || !ok2 {
				return
			}
			if pipeline.IsActive(o) != pipeline.IsActive(n) {
				peers(ctx, q)
			}
			oc, nc := o.GetBindingStatus().Conditions, n.GetBindingStatus().Conditions
			if o.GetGeneration() != n.GetGeneration() || !o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) ||
				pipeline.ConditionChanged(oc, nc, placementv1beta1.ConditionEvictionRequested) ||
				pipeline.ConditionChanged(oc, nc, placementv1beta1.ConditionFailbackRequested) ||
				pipeline.ConditionChanged(oc, nc, placementv1beta1.ConditionAvailable) {
				own(ctx, n, q)
			}
		},
	}
}

// clusterHandler applies MemberCluster events to the fleet snapshot and maps
// them to the placements they can change. It applies an event before it
// enqueues, so a cycle it wakes sees the change; and the controller starts its
// workers only once this handler has had every cluster of the initial list.
func (r *Reconciler) clusterHandler() handler.EventHandler {
	all := func(ctx context.Context, q queue, o, n client.Object) {
		oc, ok1 := o.(*clusterv1beta1.MemberCluster)
		nc, ok2 := n.(*clusterv1beta1.MemberCluster)
		if ok1 && ok2 {
			r.addPlacementsWhere(ctx, q, r.clusterMatters(ctx, oc, nc))
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			if mc, ok := e.Object.(*clusterv1beta1.MemberCluster); ok {
				r.fleet.Upsert(mc)
			}
			all(ctx, q, e.Object, e.Object)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			if e.Object != nil {
				r.fleet.Delete(e.Object.GetName())
			}
			all(ctx, q, e.Object, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			o, ok1 := e.ObjectOld.(*clusterv1beta1.MemberCluster)
			n, ok2 := e.ObjectNew.(*clusterv1beta1.MemberCluster)
			if !ok1 || !ok2 {
				return
			}
			r.fleet.Upsert(n)
			change := enqueue.DiffCluster(o, n)
			switch {
			case change.Placement:
				all(ctx, q, o, n)
			case len(change.Properties) > 0:
				r.addPlacementsWhere(ctx, q, func(p placementv1beta1.PlacementObj) bool {
					return enqueue.UsesProperty(p.GetPlacementSpec().Policy, change.Properties)
				})
			}
		},
	}
}

// clusterMatters selects the placements whose decision a change of a cluster
// (o → n) can change (enqueue.ClusterMatters): those on it, and those that could
// pick it.
func (r *Reconciler) clusterMatters(ctx context.Context, o, n *clusterv1beta1.MemberCluster) func(placementv1beta1.PlacementObj) bool {
	bound := map[types.NamespacedName]bool{}
	for _, req := range enqueue.PlacementsOnCluster(ctx, r.Client, n.Name) {
		bound[req.NamespacedName] = true
	}
	return func(p placementv1beta1.PlacementObj) bool {
		k := pipeline.KeyOf(p)
		policy := p.GetPlacementSpec().Policy
		on := enqueue.PlacementOnCluster{Policy: policy, Bound: bound[k.Request().NamespacedName],
			Dynamic: p.GetAnnotations()[schedulinggroup.AnnotationDynamicSelectors] != ""}
		if !on.Bound && policy != nil && policy.PlacementType == placementv1beta1.PickN {
			on.Held = enqueue.HeldClusters(ctx, r.Client, k)
		}
		return enqueue.ClusterMatters(on, o, n)
	}
}

// placementsWhere enqueues, for any event, the placements of ours that match.
func (r *Reconciler) placementsWhere(match func(placementv1beta1.PlacementObj) bool) handler.EventHandler {
	add := func(ctx context.Context, q queue) { r.addPlacementsWhere(ctx, q, match) }
	return handler.Funcs{
		CreateFunc:  func(ctx context.Context, _ event.CreateEvent, q queue) { add(ctx, q) },
		UpdateFunc:  func(ctx context.Context, _ event.UpdateEvent, q queue) { add(ctx, q) },
		DeleteFunc:  func(ctx context.Context, _ event.DeleteEvent, q queue) { add(ctx, q) },
		GenericFunc: func(ctx context.Context, _ event.GenericEvent, q queue) { add(ctx, q) },
	}
}

func (r *Reconciler) addPlacementsWhere(ctx context.Context, q queue, match func(placementv1beta1.PlacementObj) bool) {
	all, err := pipeline.ListPlacements(ctx, r.Client)
	if err != nil {
		return
	}
	for _, p := range all {
		if IsOurs(p) && match(p) {
			q.Add(pipeline.KeyOf(p).Request())
		}
	}
}

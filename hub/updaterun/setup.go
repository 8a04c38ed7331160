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

package updaterun

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// indexPlacementName indexes runs by spec.placementName.
const indexPlacementName = "spec.placementName"

// SetupWithManager registers the controller. A run is woken by its own spec
// changes; by its placement, the placement's resource snapshots and bindings (a
// cluster becoming Available moves the run on); by its approval requests; by a
// strategy it waits for; and by another run of its placement finishing, when it
// waits for that one. Nothing else wakes it, except a TimedWait's end.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &placementv1beta1.ClusterStagedUpdateRun{}, indexPlacementName,
		func(o client.Object) []string {
			return []string{o.(*placementv1beta1.ClusterStagedUpdateRun).Spec.PlacementName}
		}); err != nil {
		return err
	}
	c := mgr.GetClient()
	byPlacementLabel := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		if o.GetLabels()[placementv1beta1.LabelPlacementNamespace] != "" {
			return nil
		}
		return unfinishedRuns(ctx, c, o.GetLabels()[placementv1beta1.LabelPlacementName], nil)
	})
	byPlacementName := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		return unfinishedRuns(ctx, c, o.GetName(), nil)
	})
	byStrategy := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		list := &placementv1beta1.ClusterStagedUpdateRunList{}
		if err := c.List(ctx, list); err != nil {
			return nil
		}
		var reqs []reconcile.Request
		for i := range list.Items {
			run := &list.Items[i]
			if run.Spec.StagedUpdateStrategyName == o.GetName() && !isInitialized(run) {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: run.Name}})
			}
		}
		return reqs
	})
	byRunLabel := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if run := o.GetLabels()[placementv1beta1.LabelUpdateRun]; run != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: run}}}
		}
		return nil
	})
	// A run that waits for another run of its placement is woken when that one
	// changes (succeeds, stops, is deleted).
	waitingForThisRun := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		run := o.(*placementv1beta1.ClusterStagedUpdateRun)
		return unfinishedRuns(ctx, c, run.Spec.PlacementName, func(other *placementv1beta1.ClusterStagedUpdateRun) bool {
			init := conditions.Get(other.Status.Conditions, placementv1beta1.ConditionUpdateRunInitialized)
			return other.Name != run.Name && init != nil && init.Reason == placementv1beta1.ReasonUpdateRunWaitingForOtherRun
		})
	})
	workers := r.Workers
	if workers <= 0 {
		workers = 1
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("updaterun").
		For(&placementv1beta1.ClusterStagedUpdateRun{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, retryAnnotationChanged()))).
		Watches(&placementv1beta1.ClusterStagedUpdateRun{}, waitingForThisRun).
		Watches(&placementv1beta1.ClusterResourcePlacement{}, byPlacementName, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&placementv1beta1.ClusterResourceSnapshot{}, byPlacementLabel).
		Watches(&placementv1beta1.ClusterResourceBinding{}, byPlacementLabel).
		Watches(&placementv1beta1.ClusterApprovalRequest{}, byRunLabel).
		Watches(&placementv1beta1.ClusterStagedUpdateStrategy{}, byStrategy).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// unfinishedRuns returns the placement's runs that have not finished (and that
// keep returns true for, if given).
func unfinishedRuns(ctx context.Context, c client.Reader, placement string, keep func(*placementv1beta1.ClusterStagedUpdateRun) bool) []reconcile.Request {
	if placement == "" {
		return nil
	}
	list := &placementv1beta1.ClusterStagedUpdateRunList{}
	if err := c.List(ctx, list, client.MatchingFields{indexPlacementName: placement}); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		run := &list.Items[i]
		if isFinished(run) || (keep != nil && !keep(run)) {
			continue
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: run.Name}})
	}
	return reqs
}

// retryAnnotationChanged passes a run whose retry-analysis annotation changed.
func retryAnnotationChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(ctrlevent.CreateEvent) bool { return false },
		DeleteFunc:  func(ctrlevent.DeleteEvent) bool { return false },
		GenericFunc: func(ctrlevent.GenericEvent) bool { return false },
		UpdateFunc: func(e ctrlevent.UpdateEvent) bool {
			if e.ObjectOld == nil || e.ObjectNew == nil {
				return false
			}
			key := placementv1beta1.AnnotationRetryAnalysis
			return e.ObjectOld.GetAnnotations()[key] != e.ObjectNew.GetAnnotations()[key]
		},
	}
}

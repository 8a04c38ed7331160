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
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/enqueue"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// ExternalReconciler keeps the bindings of External placements that no run is
// moving: it deletes Unscheduled bindings (the work generator then removes their
// Work, and so the resources, from the cluster) and marks a Scheduled binding no
// run has touched RolloutStarted=Unknown (RolloutControlledExternally), so that
// the placement's status says a run is awaited.
type ExternalReconciler struct {
	// Client reads from the cache and writes. Required.
	Client client.Client
}

// Reconcile handles one ClusterResourcePlacement, if it is External.
func (r *ExternalReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := r.Client.Get(ctx, req.NamespacedName, crp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !crp.DeletionTimestamp.IsZero() || crp.Spec.Strategy.Type != placementv1beta1.ExternalRolloutStrategyType {
		return ctrl.Result{}, nil
	}
	bindings, err := listClusterBindings(ctx, r.Client, crp.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	for i := range bindings {
		b := &bindings[i]
		switch {
		case !b.DeletionTimestamp.IsZero():
		case b.Spec.State == placementv1beta1.BindingStateUnscheduled:
			if err := client.IgnoreNotFound(r.Client.Delete(ctx, b)); err != nil {
				return ctrl.Result{}, fmt.Errorf("failed to delete unscheduled binding %s: %w", b.Name, err)
			}
			log.FromContext(ctx).Info("deleted unscheduled binding", "binding", b.Name, "cluster", b.Spec.TargetCluster)
		case untouched(b):
			// Conditional on the resourceVersion read: a run may have moved the
			// binding since (a stale cache), and its RolloutStarted must win.
			err := applyRolloutStarted(ctx, r.Client, b, bindingControlledExternally(crp.Name), true)
			switch {
			case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
				return ctrl.Result{RequeueAfter: staleBindingRetry}, nil
			case err != nil:
				return ctrl.Result{}, err
			}
		}
	}
	return ctrl.Result{}, nil
}

// staleBindingRetry is how soon a binding that changed (or went) after it was
// read is looked at again: the cache catches up within milliseconds.
const staleBindingRetry = 200 * time.Millisecond

// untouched reports whether no run has moved the binding yet.
func untouched(b *placementv1beta1.ClusterResourceBinding) bool {
	return b.DeletionTimestamp.IsZero() && b.Spec.State == placementv1beta1.BindingStateScheduled &&
		conditions.Get(b.Status.Conditions, placementv1beta1.ConditionRolloutStarted) == nil
}

// SetupWithManager registers the controller: placements and their bindings.
func (r *ExternalReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("updaterun-external").
		For(&placementv1beta1.ClusterResourcePlacement{}).
		Watches(&placementv1beta1.ClusterResourceBinding{}, enqueue.ByPlacementLabel()).
		Complete(r)
}

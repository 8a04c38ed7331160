// Package rollout moves each placement's bindings onto its latest resource
// snapshot: a binding the scheduler created (Scheduled) becomes Bound, and a Bound
// binding follows every new snapshot. The RolloutStarted condition records it.
package rollout

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/conflict"
	"github.com/flotilla-io/flotilla/hub/enqueue"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Reconciler rolls a placement's resources out to its bindings.
type Reconciler struct {
	Client client.Client
}

// Reconcile handles one ClusterResourcePlacement.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := r.Client.Get(ctx, req.NamespacedName, crp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// Placements with strategy type External are left alone entirely: staged
	// update runs (hub/updaterun) bind their bindings, move them between resource
	// snapshots and write their RolloutStarted condition.
	if !crp.DeletionTimestamp.IsZero() || crp.Spec.Strategy.Type == placementv1beta1.ExternalRolloutStrategyType {
		return ctrl.Result{}, nil
	}
	latest, err := r.latestSnapshot(ctx, crp.Name)
	if err != nil || latest == nil {
		return ctrl.Result{}, err
	}
	bindings := &placementv1beta1.ClusterResourceBindingList{}
	if err := r.Client.List(ctx, bindings, client.MatchingLabels{placementv1beta1.LabelPlacementName: crp.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to list bindings: %w", err)
	}
	for i := range bindings.Items {
		b := &bindings.Items[i]
		if !b.DeletionTimestamp.IsZero() || b.Spec.State == placementv1beta1.BindingStateUnscheduled {
			continue
		}
		if err := r.rollOut(ctx, crp, b, latest); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// rollOut binds b to the latest snapshot with the placement's apply strategy.
func (r *Reconciler) rollOut(ctx context.Context, crp *placementv1beta1.ClusterResourcePlacement, b *placementv1beta1.ClusterResourceBinding, latest *placementv1beta1.ClusterResourceSnapshot) error {
	want := b.Spec.DeepCopy()
	want.State = placementv1beta1.BindingStateBound
	want.ResourceSnapshotName = latest.Name
	want.ApplyStrategy = crp.Spec.Strategy.ApplyStrategy.DeepCopy()
	if !equality.Semantic.DeepEqual(*want, b.Spec) {
		b.Spec = *want
		if err := r.Client.Update(ctx, b); err != nil {
			return fmt.Errorf("failed to bind %s to snapshot %s: %w", b.Name, latest.Name, err)
		}
	}
	if conditions.IsCurrentTrue(b.Status.Conditions, placementv1beta1.ConditionRolloutStarted, b.Generation) {
		return nil
	}
	conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionRolloutStarted, metav1.ConditionTrue,
		placementv1beta1.ReasonRolloutStarted, fmt.Sprintf("rolling out resource snapshot %s", latest.Name), b.Generation)
	if err := r.Client.Status().Update(ctx, b); err != nil {
		return fmt.Errorf("failed to update status of binding %s: %w", b.Name, err)
	}
	return nil
}

func (r *Reconciler) latestSnapshot(ctx context.Context, placement string) (*placementv1beta1.ClusterResourceSnapshot, error) {
	list := &placementv1beta1.ClusterResourceSnapshotList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{
		placementv1beta1.LabelPlacementName:    placement,
		placementv1beta1.LabelIsLatestSnapshot: "true",
	}); err != nil {
		return nil, fmt.Errorf("failed to list resource snapshots: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	return &list.Items[0], nil
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("rollout").
		For(&placementv1beta1.ClusterResourcePlacement{}).
		Watches(&placementv1beta1.ClusterResourceBinding{}, enqueue.ByPlacementLabel()).
		Watches(&placementv1beta1.ClusterResourceSnapshot{}, enqueue.ByPlacementLabel()).
		Complete(conflict.RequeueOnConflict(r))
}

// Package workgen turns each Bound binding into the Work its member cluster's agent
// applies — one Work per placement and cluster, in flotilla-member-<cluster> — and
// reports the Work's progress (synchronised, applied, available, per-manifest
// failures) back on the binding. It also removes the Work when the binding goes.
package workgen

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/conflict"
	"github.com/flotilla-io/flotilla/hub/schedulinggroup"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Reconciler generates Work from bindings.
type Reconciler struct {
	Client client.Client
	Scheme *runtime.Scheme
}

// WorkName is the name of a placement's Work in a member's namespace.
func WorkName(placement string) string { return placement + "-work" }

// workName is the name of a binding's Work: WorkName for the placement's own
// resources, with the scheduling group in it for a group's.
func workName(b *placementv1beta1.ClusterResourceBinding) string {
	placement := b.Labels[placementv1beta1.LabelPlacementName]
	if g := schedulinggroup.Of(b.Labels); g != "" {
		return placement + "-" + g + "-work"
	}
	return WorkName(placement)
}

// Reconcile handles one ClusterResourceBinding.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	b := &placementv1beta1.ClusterResourceBinding{}
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	lg := log.FromContext(ctx).WithValues("cluster", b.Spec.TargetCluster)
	if !b.DeletionTimestamp.IsZero() || b.Spec.State == placementv1beta1.BindingStateUnscheduled {
		return r.reconcileRemoval(ctx, lg, b)
	}
	if b.Spec.State != placementv1beta1.BindingStateBound || b.Spec.ResourceSnapshotName == "" {
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(b, placementv1beta1.WorkCleanupFinalizer) {
		if err := r.Client.Update(ctx, b); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to add the finalizer: %w", err)
		}
	}
	before := b.Status.DeepCopy()
	work, err := r.syncWork(ctx, b)
	if err != nil {
		conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionWorkSynchronized, metav1.ConditionFalse,
			placementv1beta1.ReasonWorkNotSynchronized, err.Error(), b.Generation)
	} else {
		conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionOverridden, metav1.ConditionTrue,
			placementv1beta1.ReasonNoOverrideSpecified, "no override applies", b.Generation)
		conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionWorkSynchronized, metav1.ConditionTrue,
			placementv1beta1.ReasonWorkSynchronized, fmt.Sprintf("Work %s/%s holds snapshot %s", work.Namespace, work.Name, b.Spec.ResourceSnapshotName), b.Generation)
		copyWorkStatus(b, work)
		copyAgentReports(b, work)
	}
	if !equality.Semantic.DeepEqual(*before, b.Status) {
		if uerr := r.Client.Status().Update(ctx, b); uerr != nil {
			return ctrl.Result{}, fmt.Errorf("failed to update binding status: %w", uerr)
		}
	}
	if err != nil {
		lg.Info("work not synchronised", "error", err.Error())
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	return ctrl.Result{}, nil
}

// syncWork creates or updates the Work for a Bound binding.
func (r *Reconciler) syncWork(ctx context.Context, b *placementv1beta1.ClusterResourceBinding) (*placementv1beta1.Work, error) {
	snap := &placementv1beta1.ClusterResourceSnapshot{}
	if err := r.Client.Get(ctx, types.NamespacedName{Name: b.Spec.ResourceSnapshotName}, snap); err != nil {
		return nil, fmt.Errorf("failed to get resource snapshot %s: %w", b.Spec.ResourceSnapshotName, err)
	}
	placement := b.Labels[placementv1beta1.LabelPlacementName]
	ns := clusterv1beta1.MemberNamespace(b.Spec.TargetCluster)
	manifests := make([]placementv1beta1.Manifest, 0, len(snap.Spec.SelectedResources))
	for _, c := range snap.Spec.SelectedResources {
		manifests = append(manifests, placementv1beta1.Manifest{RawExtension: *c.RawExtension.DeepCopy()})
	}
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := r.Client.Get(ctx, types.NamespacedName{Name: placement}, crp); err != nil {
		return nil, fmt.Errorf("failed to get placement %s: %w", placement, err)
	}
	// Kratix scheduling groups: each group's objects go in a Work of their own.
	dyn, err := schedulinggroup.Selectors(crp)
	if err != nil {
		return nil, err
	}
	group := schedulinggroup.Of(b.Labels)
	manifests = schedulinggroup.Filter(manifests, group, schedulinggroup.OwnGroups(dyn))
	work := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: workName(b), Namespace: ns}}
	_, err = controllerutil.CreateOrUpdate(ctx, r.Client, work, func() error {
		if work.Labels == nil {
			work.Labels = map[string]string{}
		}
		work.Labels[placementv1beta1.LabelPlacementName] = placement
		work.Labels[placementv1beta1.LabelParentBinding] = b.Name
		if group != "" {
			work.Labels[schedulinggroup.LabelGroup] = group
		}
		// The member removes the Work's objects before the hub lets the Work go
		// (the tunnel server drops the finalizer on the agent's confirmation).
		controllerutil.AddFinalizer(work, placementv1beta1.AppliedResourcesCleanupFinalizer)
		work.Spec.Workload.Manifests = manifests
		work.Spec.ApplyStrategy = b.Spec.ApplyStrategy.DeepCopy()
		setAgentSpec(work, crp)
		return controllerutil.SetControllerReference(b, work, r.Scheme)
	})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("namespace %s does not exist: has member %s joined?", ns, b.Spec.TargetCluster)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to write Work %s/%s: %w", ns, work.Name, err)
	}
	return work, nil
}

// copyWorkStatus reports the agent's Applied and Available conditions of the Work
// on the binding, with the manifests that failed.
func copyWorkStatus(b *placementv1beta1.ClusterResourceBinding, work *placementv1beta1.Work) {
	for _, t := range []string{placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable} {
		c := conditions.Get(work.Status.Conditions, t)
		if c == nil || c.ObservedGeneration != work.Generation {
			pending := placementv1beta1.ReasonApplyPending
			if t == placementv1beta1.ConditionAvailable {
				pending = placementv1beta1.ReasonNotAvailableYet
			}
			conditions.Set(&b.Status.Conditions, t, metav1.ConditionUnknown, pending,
				fmt.Sprintf("waiting for member %s to report the current Work", b.Spec.TargetCluster), b.Generation)
			continue
		}
		conditions.Set(&b.Status.Conditions, t, c.Status, c.Reason, c.Message, b.Generation)
	}
	var failed []placementv1beta1.FailedResourcePlacement
	for _, mc := range work.Status.ManifestConditions {
		for _, t := range []string{placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable} {
			c := conditions.Get(mc.Conditions, t)
			if c == nil || c.Status != metav1.ConditionFalse {
				continue
			}
			failed = append(failed, placementv1beta1.FailedResourcePlacement{
				ResourceIdentifier: placementv1beta1.ResourceIdentifier{
					Group: mc.Identifier.Group, Version: mc.Identifier.Version, Kind: mc.Identifier.Kind,
					Name: mc.Identifier.Name, Namespace: mc.Identifier.Namespace,
				},
				Condition: *c,
			})
			break
		}
		if len(failed) == 100 {
			break
		}
	}
	b.Status.FailedPlacements = failed
}

// reconcileRemoval deletes the binding's Work and, once it is gone, lets the
// binding go (an Unscheduled binding is deleted here too).
func (r *Reconciler) reconcileRemoval(ctx context.Context, lg logr.Logger, b *placementv1beta1.ClusterResourceBinding) (ctrl.Result, error) {
	work := &placementv1beta1.Work{}
	key := types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace(b.Spec.TargetCluster), Name: workName(b)}
	err := r.Client.Get(ctx, key, work)
	switch {
	case err == nil && metav1.IsControlledBy(work, b):
		if work.DeletionTimestamp.IsZero() {
			if err := client.IgnoreNotFound(r.Client.Delete(ctx, work)); err != nil {
				return ctrl.Result{}, fmt.Errorf("failed to delete Work %s: %w", key, err)
			}
			lg.Info("deleted work", "work", key.String())
		}
		// The Work's deletion requeues us through the watch.
		return ctrl.Result{RequeueAfter: 10 * time.Second}, nil
	case err != nil && !apierrors.IsNotFound(err):
		return ctrl.Result{}, fmt.Errorf("failed to get Work %s: %w", key, err)
	}
	if controllerutil.RemoveFinalizer(b, placementv1beta1.WorkCleanupFinalizer) {
		if err := r.Client.Update(ctx, b); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	if b.DeletionTimestamp.IsZero() && b.Spec.State == placementv1beta1.BindingStateUnscheduled {
		if err := client.IgnoreNotFound(r.Client.Delete(ctx, b)); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to delete unscheduled binding: %w", err)
		}
	}
	return ctrl.Result{}, nil
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("workgen").
		For(&placementv1beta1.ClusterResourceBinding{}).
		Watches(&placementv1beta1.Work{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &placementv1beta1.ClusterResourceBinding{}, handler.OnlyControllerOwner())).
		Watches(&placementv1beta1.ClusterResourcePlacement{}, bindingsOfPlacement(mgr.GetClient())).
		Complete(conflict.RequeueOnConflict(r))
}

package placement

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/enqueue"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/resources"
)

// Selector answers resource selectors on the hub (resources.Watcher).
type Selector interface {
	Select(ctx context.Context, selectors []placementv1beta1.ResourceSelector) ([]*unstructured.Unstructured, error)
	OnChange(func(resources.Change))
}

// Reconciler snapshots each ClusterResourcePlacement's resources and policy and
// reports its status.
type Reconciler struct {
	Client    client.Client
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
	Resources Selector
	// Workers is how many placements are reconciled at once. Default: 1.
	Workers int

	// changedAt remembers, per placement, when this process last created a
	// snapshot for it, for flotilla_placement_available_seconds.
	changedAt sync.Map
}

// scope carries what the phases of one reconcile learn.
type scope struct {
	// placement is the object being reconciled (set by Reconcile).
	placement *placementv1beta1.ClusterResourcePlacement
	// selected are the hub objects the selectors pick (set by selectResources).
	selected []*unstructured.Unstructured
	// selectErr is why selection failed, reported in status (set by selectResources).
	selectErr error
	// policySnapshot is the latest policy snapshot (set by ensurePolicySnapshot).
	policySnapshot *placementv1beta1.ClusterSchedulingPolicySnapshot
	// resourceSnapshot is the latest resource snapshot (set by ensureResourceSnapshot).
	resourceSnapshot *placementv1beta1.ClusterResourceSnapshot
}

type phase func(ctx context.Context, s *scope) error

// Reconcile drives one placement.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (_ ctrl.Result, reterr error) {
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := r.Client.Get(ctx, req.NamespacedName, crp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !crp.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, crp)
	}
	if !controllerutil.ContainsFinalizer(crp, placementv1beta1.PlacementCleanupFinalizer) {
		// The placement controller is the only writer of a placement's finalizers.
		patch := client.MergeFrom(crp.DeepCopy())
		controllerutil.AddFinalizer(crp, placementv1beta1.PlacementCleanupFinalizer)
		if err := r.Client.Patch(ctx, crp, patch, client.FieldOwner(pipeline.ManagerPlacement)); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to add the finalizer: %w", err)
		}
	}
	s := &scope{placement: crp}
	before := crp.DeepCopy()
	defer func() {
		if err := r.updateStatus(ctx, s, before); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		}
	}()
	for _, p := range []phase{r.selectResources, r.ensurePolicySnapshot, r.ensureResourceSnapshot} {
		if err := p(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// selectResources picks the hub objects; a selection error is a user error
// (e.g. an unknown kind), reported in status and retried when kinds change.
func (r *Reconciler) selectResources(ctx context.Context, s *scope) error {
	start := time.Now()
	objs, err := r.Resources.Select(ctx, s.placement.Spec.ResourceSelectors)
	if d := time.Since(start); d > 2*time.Second {
		log.FromContext(ctx).Info("resource selection was slow", "took", d.String(), "objects", len(objs))
	}
	if err != nil {
		s.selectErr = err
		log.FromContext(ctx).Info("resource selection failed", "error", err.Error())
		return nil
	}
	s.selected = objs
	return nil
}

// reconcileDelete removes the placement's bindings (whose own cleanup removes the
// Work and so the resources on members) and then lets the placement go.
func (r *Reconciler) reconcileDelete(ctx context.Context, crp *placementv1beta1.ClusterResourcePlacement) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(crp, placementv1beta1.PlacementCleanupFinalizer) {
		return ctrl.Result{}, nil
	}
	bindings := &placementv1beta1.ClusterResourceBindingList{}
	if err := r.Client.List(ctx, bindings, client.MatchingLabels{placementv1beta1.LabelPlacementName: crp.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to list bindings: %w", err)
	}
	for i := range bindings.Items {
		b := &bindings.Items[i]
		if b.DeletionTimestamp.IsZero() {
			if err := client.IgnoreNotFound(r.Client.Delete(ctx, b)); err != nil {
				return ctrl.Result{}, fmt.Errorf("failed to delete binding %s: %w", b.Name, err)
			}
		}
	}
	if len(bindings.Items) > 0 {
		// Bindings go once their Work is gone; their deletion wakes us.
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(crp.DeepCopy())
	controllerutil.RemoveFinalizer(crp, placementv1beta1.PlacementCleanupFinalizer)
	if err := r.Client.Patch(ctx, crp, patch, client.FieldOwner(pipeline.ManagerPlacement)); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.changedAt.Delete(crp.Name)
	return ctrl.Result{}, nil
}

// SetupWithManager registers the controller: placements, their snapshots and
// bindings, and every change of a hub object they may select.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	changes := make(chan event.GenericEvent, 4096)
	lg := mgr.GetLogger().WithName("placement")
	r.Resources.OnChange(func(c resources.Change) { r.enqueueSelecting(mgr.GetClient(), lg, changes, c) })
	return ctrl.NewControllerManagedBy(mgr).
		Named("placement").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		For(&placementv1beta1.ClusterResourcePlacement{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, deletingPredicate()))).
		Watches(&placementv1beta1.ClusterResourceBinding{}, enqueue.ByPlacementLabel()).
		Watches(&placementv1beta1.ClusterSchedulingPolicySnapshot{}, enqueue.ByPlacementLabel()).
		WatchesRawSource(source.Channel(changes, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

func deletingPredicate() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool { return !o.GetDeletionTimestamp().IsZero() })
}

// enqueueSelecting queues every placement that may select the changed object.
// It errs on the side of queueing: a reconcile that finds nothing new is cheap.
func (r *Reconciler) enqueueSelecting(c client.Client, lg logr.Logger, out chan<- event.GenericEvent, ch resources.Change) {
	list := &placementv1beta1.ClusterResourcePlacementList{}
	if err := c.List(context.Background(), list); err != nil {
		lg.V(1).Info("cannot list placements for a resource change", "error", err.Error())
		return
	}
	for i := range list.Items {
		crp := &list.Items[i]
		if mightSelect(crp, ch) {
			select {
			case out <- event.GenericEvent{Object: crp}:
			default:
				lg.Info("placement queue is full; the next periodic resync catches up", "placement", crp.Name)
			}
		}
	}
}

func mightSelect(crp *placementv1beta1.ClusterResourcePlacement, ch resources.Change) bool {
	for _, sel := range crp.Spec.ResourceSelectors {
		isNamespaceSelector := sel.Group == "" && sel.Kind == "Namespace"
		if ch.Namespace != "" && isNamespaceSelector && (sel.Name == "" || sel.Name == ch.Namespace) {
			return true
		}
		if ch.Namespace == "" && sel.Group == ch.GVK.Group && sel.Kind == ch.GVK.Kind && (sel.Name == "" || sel.Name == ch.Name) {
			return true
		}
	}
	return false
}

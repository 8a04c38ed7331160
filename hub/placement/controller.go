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

package placement

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// Select answers a ClusterResourcePlacement's selectors.
	Select(ctx context.Context, selectors []placementv1beta1.ResourceSelector) ([]*unstructured.Unstructured, error)
	// SelectNamespaced answers a ResourcePlacement's selectors in its namespace;
	// the Namespace itself comes first, reduced and marked create-only.
	SelectNamespaced(ctx context.Context, namespace string, selectors []placementv1beta1.ResourceSelector) ([]*unstructured.Unstructured, error)
	OnChange(func(resources.Change))
}

// Reconciler snapshots each placement's resources and policy and reports its
// status, for both scopes: a ClusterResourcePlacement (a request without
// namespace) and a ResourcePlacement.
type Reconciler struct {
	Client    client.Client
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
	Resources Selector
	// Workers is how many placements are reconciled at once. Default: 1.
	Workers int

	// Spans times each change of a placement through the pipeline; this
	// controller starts a change when it writes a snapshot and ends it when the
	// placement is Available (flotilla_placement_available_seconds and
	// flotilla_placement_stage_seconds). Nil: not timed.
	Spans *pipeline.Spans
	// created remembers the newest snapshot indexes this process created per
	// placement (snapshotKey → int), so that a reconcile whose cached list
	// does not show them yet waits for the cache instead of writing a second
	// set under an index already taken (snapshot.go, cacheBehind).
	created sync.Map
}

// scope carries what the phases of one reconcile learn.
type scope struct {
	// key and placement are the placement being reconciled (set by Reconcile).
	key       pipeline.PlacementKey
	placement placementv1beta1.PlacementObj
	// now is when the reconcile started: the time a state hand-off value the
	// status takes is stamped with (set by Reconcile).
	now metav1.Time
	// selected are the hub objects the selectors pick (set by selectResources,
	// less those an earlier placement places, by resolveConflicts).
	selected []*unstructured.Unstructured
	// selectErr is why selection failed, reported in status (set by selectResources).
	selectErr error
	// reservedLeftOut are the reserved namespaces Namespace selectors by labels
	// match, left out of selected (set by selectResources; reserved.go).
	reservedLeftOut []string
	// conflicts are the selected objects left out because an earlier placement
	// places them (set by resolveConflicts).
	conflicts []conflict
	// policySnapshot is the latest policy snapshot (set by ensurePolicySnapshot).
	policySnapshot placementv1beta1.PolicySnapshotObj
	// resourceSnapshot is the latest resource snapshot (set by ensureResourceSnapshot).
	resourceSnapshot placementv1beta1.ResourceSnapshotObj
	// cacheBehind is set when the cache does not show a snapshot this process
	// created yet: the reconcile stops, writes no status, and comes back.
	cacheBehind bool
	// changed is set when this reconcile created a policy or resource snapshot.
	changed bool
}

// Reconcile drives one placement.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (_ ctrl.Result, reterr error) {
	key := pipeline.KeyFromRequest(req)
	crp, err := pipeline.GetPlacement(ctx, r.Client, key)
	if err != nil {
		if apierrors.IsNotFound(err) {
			// Gone without its own deletion here (someone removed its
			// finalizer): nothing of it is kept.
			r.forgetCreated(key)
			r.Spans.Forget(key)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !crp.GetDeletionTimestamp().IsZero() {
		return r.reconcileDelete(ctx, key, crp)
	}
	if !controllerutil.ContainsFinalizer(crp, placementv1beta1.PlacementCleanupFinalizer) {
		if err := pipeline.AddFinalizer(ctx, r.Client, crp, placementv1beta1.PlacementCleanupFinalizer, pipeline.ManagerPlacement); err != nil {
			return ctrl.Result{}, err
		}
	}
	s := &scope{key: key, placement: crp, now: metav1.Now()}
	before := crp.DeepCopyObject().(placementv1beta1.PlacementObj)
	defer func() {
		if s.cacheBehind {
			return
		}
		if err := r.updateStatus(ctx, s, before); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		}
	}()
	err = pipeline.RunPhases(ctx, s, func(s *scope) bool { return s.cacheBehind },
		pipeline.Phase[scope]{Name: "select the resources", Run: r.selectResources},
		pipeline.Phase[scope]{Name: "resolve conflicts", Run: r.resolveConflicts},
		pipeline.Phase[scope]{Name: "write the policy snapshot", Run: r.ensurePolicySnapshot},
		pipeline.Phase[scope]{Name: "write the resource snapshot", Run: r.ensureResourceSnapshot},
	)
	if s.changed && s.resourceSnapshot != nil {
		// Name the change's resource snapshot (the policy alone changed).
		r.Spans.Start(key, s.now.Time, s.resourceSnapshot.GetName())
	}
	if err == nil && s.cacheBehind {
		// Snapshots are not watched here: look again once the cache has had
		// time to catch up.
		return ctrl.Result{RequeueAfter: cacheBehindRetry}, nil
	}
	return ctrl.Result{}, err
}

// selectResources picks the hub objects; a selection error is a user error
// (e.g. an unknown kind), reported in status and retried when kinds change.
func (r *Reconciler) selectResources(ctx context.Context, s *scope) error {
	start := time.Now()
	selectors := s.placement.GetPlacementSpec().ResourceSelectors
	if err := reservedSelectors(s.key, selectors); err != nil {
		s.selectErr = err
		log.FromContext(ctx).Info("resource selectors name a reserved namespace", "error", err.Error())
		return nil
	}
	var objs []*unstructured.Unstructured
	var err error
	if s.key.Namespaced() {
		objs, err = r.Resources.SelectNamespaced(ctx, s.key.Namespace, selectors)
	} else {
		objs, err = r.Resources.Select(ctx, selectors)
	}
	if d := time.Since(start); d > 2*time.Second {
		log.FromContext(ctx).Info("resource selection was slow", "took", d.String(), "objects", len(objs))
	}
	if err != nil {
		s.selectErr = err
		log.FromContext(ctx).Info("resource selection failed", "error", err.Error())
		return nil
	}
	s.selected = objs
	r.findReservedLeftOut(ctx, s)
	return nil
}

// reconcileDelete removes the placement's bindings (whose own cleanup removes the
// Work and so the resources on members) and then lets the placement go.
func (r *Reconciler) reconcileDelete(ctx context.Context, key pipeline.PlacementKey, crp placementv1beta1.PlacementObj) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(crp, placementv1beta1.PlacementCleanupFinalizer) {
		return ctrl.Result{}, nil
	}
	bindings, err := pipeline.ListBindings(ctx, r.Client, key)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, b := range bindings {
		if b.GetDeletionTimestamp().IsZero() {
			if err := client.IgnoreNotFound(r.Client.Delete(ctx, b)); err != nil {
				return ctrl.Result{}, fmt.Errorf("failed to delete binding %s: %w", b.GetName(), err)
			}
		}
	}
	if len(bindings) > 0 {
		// Bindings go once their Work is gone; their deletion wakes us.
		return ctrl.Result{}, nil
	}
	if err := pipeline.RemoveFinalizer(ctx, r.Client, crp, placementv1beta1.PlacementCleanupFinalizer, pipeline.ManagerPlacement); err != nil {
		return ctrl.Result{}, err
	}
	r.Spans.Forget(key)
	r.forgetCreated(key)
	return ctrl.Result{}, nil
}

// SetupWithManager registers the controller: placements of both scopes, their
// snapshots and bindings, every change of a hub object they may select, and a
// change of what another placement places (for conflicts).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := setupClaimsIndex(mgr); err != nil {
		return err
	}
	changes := make(chan event.GenericEvent, 4096)
	lg := mgr.GetLogger().WithName("placement")
	r.Resources.OnChange(func(c resources.Change) { r.enqueueSelecting(mgr.GetClient(), lg, changes, c) })
	placementChanged := builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, deletingPredicate()))
	others := handler.EnqueueRequestsFromMapFunc(r.mayConflictWith)
	return ctrl.NewControllerManagedBy(mgr).
		Named("placement").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		For(&placementv1beta1.ClusterResourcePlacement{}, placementChanged).
		Watches(&placementv1beta1.ResourcePlacement{}, &handler.EnqueueRequestForObject{}, placementChanged).
		Watches(&placementv1beta1.ClusterResourcePlacement{}, others, builder.WithPredicates(selectedResourcesChanged())).
		Watches(&placementv1beta1.ResourcePlacement{}, others, builder.WithPredicates(selectedResourcesChanged())).
		Watches(&placementv1beta1.ClusterResourceBinding{}, enqueue.ByPlacementLabel()).
		Watches(&placementv1beta1.ResourceBinding{}, enqueue.ByPlacementLabel()).
		Watches(&placementv1beta1.ClusterSchedulingPolicySnapshot{}, enqueue.ByPlacementLabel()).
		Watches(&placementv1beta1.SchedulingPolicySnapshot{}, enqueue.ByPlacementLabel()).
		WatchesRawSource(source.Channel(changes, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

// selectedResourcesChanged passes a placement's creation, deletion and changes
// of what it places (status.selectedResources, or its deletion starting).
func selectedResourcesChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(placementv1beta1.PlacementObj)
			n, ok2 := e.ObjectNew.(placementv1beta1.PlacementObj)
			if !ok1 || !ok2 {
				return false
			}
			return !equality.Semantic.DeepEqual(o.GetPlacementStatus().SelectedResources, n.GetPlacementStatus().SelectedResources) ||
				o.GetDeletionTimestamp().IsZero() != n.GetDeletionTimestamp().IsZero()
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// mayConflictWith maps a placement whose placed objects changed (called with
// the old and the new object of an update, and with a deleted one) to the
// placements whose conflict decision that may change: those placing one of
// its objects or, for a Namespace it places, objects in it (wakeKeys), and
// those that leave objects out for an earlier placement. Waking every
// placement instead made placements created together wake each other: each
// one's first status write queued all the others again.
func (r *Reconciler) mayConflictWith(ctx context.Context, o client.Object) []reconcile.Request {
	changed := pipeline.KeyOf(o)
	p, ok := o.(placementv1beta1.PlacementObj)
	if !ok {
		return nil
	}
	all, err := pipeline.ListPlacements(ctx, r.Client)
	if err != nil {
		log.FromContext(ctx).Error(err, "failed to list placements to wake after a change of placed objects", "placement", changed.String())
		return nil
	}
	keys, bounded := wakeKeys(p)
	wake := map[pipeline.PlacementKey]bool{}
	for _, q := range all {
		if k := pipeline.KeyOf(q); mayConflict(changed, k) && (!bounded || conflicted(q)) {
			wake[k] = true
		}
	}
	if bounded {
		for _, key := range keys {
			claiming, err := r.listClaiming(ctx, key, "")
			if err != nil {
				log.FromContext(ctx).Error(err, "failed to look up placements to wake after a change of placed objects", "placement", changed.String())
				return nil
			}
			for _, q := range claiming {
				if k := pipeline.KeyOf(q); mayConflict(changed, k) {
					wake[k] = true
				}
			}
		}
	}
	out := make([]reconcile.Request, 0, len(wake))
	for k := range wake {
		out = append(out, k.Request())
	}
	return out
}

func deletingPredicate() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool { return !o.GetDeletionTimestamp().IsZero() })
}

// enqueueSelecting queues every placement that may select the changed object.
// It errs on the side of queueing: a reconcile that finds nothing new is cheap.
func (r *Reconciler) enqueueSelecting(c client.Client, lg logr.Logger, out chan<- event.GenericEvent, ch resources.Change) {
	all, err := pipeline.ListPlacements(context.Background(), c)
	if err != nil {
		lg.V(1).Info("cannot list placements for a resource change", "error", err.Error())
		return
	}
	for _, p := range all {
		if mightSelect(p, ch) {
			select {
			case out <- event.GenericEvent{Object: p}:
			default:
				lg.Info("placement queue is full; the next periodic resync catches up", "placement", pipeline.KeyOf(p).String())
			}
		}
	}
}

// mightSelect reports whether a placement may select the changed object: for
// a ResourcePlacement, an object of its namespace of a selected kind or its
// Namespace itself; for a ClusterResourcePlacement, a selected cluster-scoped
// object or any object of a selected Namespace.
func mightSelect(p placementv1beta1.PlacementObj, ch resources.Change) bool {
	if ns := p.GetNamespace(); ns != "" {
		if ch.Namespace == "" {
			return ch.GVK.Group == "" && ch.GVK.Kind == "Namespace" && ch.Name == ns
		}
		if ch.Namespace != ns {
			return false
		}
		for _, sel := range p.GetPlacementSpec().ResourceSelectors {
			if sel.Group == ch.GVK.Group && sel.Kind == ch.GVK.Kind && (sel.Name == "" || sel.Name == ch.Name) {
				return true
			}
		}
		return false
	}
	for _, sel := range p.GetPlacementSpec().ResourceSelectors {
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

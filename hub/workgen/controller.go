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

// Package workgen turns each Bound binding into the Work its member cluster's agent
// applies — one Work per placement and cluster, in flotilla-member-<cluster> — and
// reports the Work's progress (synchronised, applied, available, per-manifest
// failures) back on the binding. It also removes the Work when the binding goes.
//
// It serves bindings of both scopes. A ClusterResourceBinding controls its Work
// (an owner reference); a ResourceBinding lives in its placement's namespace and
// cannot own an object in a member's namespace, so its Work names it by labels
// (LabelParentBinding and LabelPlacementNamespace) and the generator deletes the
// Work itself before it lets the binding go.
package workgen

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
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

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/enqueue"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/schedulinggroup"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Reconciler generates Work from bindings.
type Reconciler struct {
	Client client.Client
	Scheme *runtime.Scheme
	// Workers is how many bindings are handled at once. Default: 1.
	Workers int
	// Recorder reports, as Warning Events on the placement, an override or an
	// envelope that stops resources from reaching a cluster. Optional.
	Recorder events.EventRecorder
	// HubName is put in the provenance annotation placement.flotilla.io/hub of
	// every manifest; "" leaves that annotation out. The hub sets it from
	// --hub-name.
	HubName string
	// Spans times each change of a placement through the pipeline: this
	// controller marks each binding's Work written, applied and available
	// (pipeline.StageWork, StageApplied, StageAvailable). Nil: not timed.
	Spans *pipeline.Spans
	// ReportWait is how long a binding's status write waits, after its Work
	// was written, for the agent's report on it, so that one write says both
	// (holdForReport). 0 writes at once. The hub sets it from
	// --work-report-wait.
	ReportWait time.Duration

	// holds are the bindings whose status write waits, or waited, for a
	// report.
	holds holds
}

// ownedConditions are the binding conditions the work generator writes.
var ownedConditions = []string{
	placementv1beta1.ConditionOverridden, placementv1beta1.ConditionWorkSynchronized,
	placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable,
	placementv1beta1.ConditionDiffReported,
}

// WorkName is the name of a ClusterResourcePlacement's Work in a member's
// namespace; see pipeline.PlacementKey.WorkName for both scopes.
func WorkName(placement string) string { return pipeline.PlacementKey{Name: placement}.WorkName("") }

// placementOf is the key of the placement a binding belongs to.
func placementOf(b placementv1beta1.BindingObj) pipeline.PlacementKey {
	return pipeline.PlacementKey{Namespace: b.GetNamespace(), Name: b.GetLabels()[placementv1beta1.LabelPlacementName]}
}

// workName is the name of a binding's Work: its placement's Work name for the
// placement's own resources, with the scheduling group in it for a group's.
func workName(b placementv1beta1.BindingObj) string {
	return placementOf(b).WorkName(schedulinggroup.Of(b.GetLabels()))
}

// workNames are the names the binding's Work may have: workName, then the name
// an older hub gave it (pipeline.PlacementKey.LegacyWorkName), if another.
func workNames(b placementv1beta1.BindingObj) []string {
	names := []string{workName(b)}
	if legacy := placementOf(b).LegacyWorkName(schedulinggroup.Of(b.GetLabels())); legacy != "" && legacy != names[0] {
		names = append(names, legacy)
	}
	return names
}

// existingWorkName returns the name of the binding's Work: the legacy name while
// a Work of that name, which the binding owns, exists; else workName.
func (r *Reconciler) existingWorkName(ctx context.Context, b placementv1beta1.BindingObj) (string, error) {
	names := workNames(b)
	ns := clusterv1beta1.MemberNamespace(b.GetBindingSpec().TargetCluster)
	for _, name := range names[1:] {
		w := &placementv1beta1.Work{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, w)
		switch {
		case err == nil && ownsWork(w, b):
			return name, nil
		case err != nil && !apierrors.IsNotFound(err):
			return "", fmt.Errorf("failed to get Work %s/%s: %w", ns, name, err)
		}
	}
	return names[0], nil
}

// ownsWork reports whether a Work is the binding's: controlled by a
// ClusterResourceBinding, or labelled with a ResourceBinding's name and
// namespace.
func ownsWork(work *placementv1beta1.Work, b placementv1beta1.BindingObj) bool {
	if b.GetNamespace() == "" {
		return metav1.IsControlledBy(work, b)
	}
	return work.Labels[placementv1beta1.LabelParentBinding] == b.GetName() &&
		work.Labels[placementv1beta1.LabelPlacementNamespace] == b.GetNamespace()
}

// Reconcile handles one binding: a ClusterResourceBinding for a request without
// namespace, a ResourceBinding otherwise. A Bound binding gets its Work; a
// deleted one loses it. An Unscheduled binding keeps its Work until the rollout
// deletes the binding (within maxUnavailable).
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	b, err := pipeline.GetBinding(ctx, r.Client, req.NamespacedName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.holds.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	spec := b.GetBindingSpec()
	lg := log.FromContext(ctx).WithValues("cluster", spec.TargetCluster)
	if !b.GetDeletionTimestamp().IsZero() {
		r.holds.forget(req.NamespacedName)
		return ctrl.Result{}, r.reconcileRemoval(ctx, lg, b)
	}
	if spec.State != placementv1beta1.BindingStateBound || spec.ResourceSnapshotName == "" {
		return ctrl.Result{}, nil
	}
	s := &scope{status: statusInput{binding: b}, log: lg, key: req.NamespacedName}
	if err := pipeline.RunPhases(ctx, s, nil,
		pipeline.Phase[scope]{Name: "add the finalizer", Run: r.addFinalizer},
		pipeline.Phase[scope]{Name: "render the resources", Run: r.renderWork},
		pipeline.Phase[scope]{Name: "write the Work", Run: r.writeWork},
		pipeline.Phase[scope]{Name: "load the member cluster", Run: r.loadMember},
		pipeline.Phase[scope]{Name: "wait for the agent's report", Run: r.holdStatus},
		pipeline.Phase[scope]{Name: "write the binding status", Run: r.writeStatus},
	); err != nil {
		return ctrl.Result{}, err
	}
	if s.hold.wait > 0 {
		// The Work's status event wakes the binding sooner when the report comes.
		return ctrl.Result{RequeueAfter: s.hold.wait}, nil
	}
	// Retried with backoff; the condition says why meanwhile.
	return ctrl.Result{}, s.plan.retry
}

// scope carries what the phases of one reconcile learn.
type scope struct {
	log logr.Logger
	key types.NamespacedName
	// status is what planStatus decides from: the binding, then the rendered
	// overrides, the Work or the failure to write it, the member's connection.
	status statusInput
	// work is what the Work gets (set by renderWork).
	work workSpec
	// wrote says writeWork created the Work or changed it.
	wrote bool
	// hold is whether the status write waits for the agent's report (set by
	// holdStatus).
	hold holdDecision
	// plan is the binding's status (set by writeStatus).
	plan statusPlan
}

// addFinalizer makes the binding wait for its Work's removal. The scheduler
// creates bindings with the finalizer; this adds it to one an older hub
// created without it. Only the work generator removes it.
func (r *Reconciler) addFinalizer(ctx context.Context, s *scope) error {
	b := s.status.binding
	if controllerutil.ContainsFinalizer(b, placementv1beta1.WorkCleanupFinalizer) {
		return nil
	}
	return pipeline.AddFinalizer(ctx, r.Client, b, placementv1beta1.WorkCleanupFinalizer, pipeline.ManagerWorkGenerator)
}

// renderWork loads what the binding's Work holds: the snapshot's resources of
// the binding's scheduling group, envelopes unwrapped, the binding's overrides
// applied for its cluster and the provenance annotations stamped. A failure is the status's (planStatus), not
// the phase's.
func (r *Reconciler) renderWork(ctx context.Context, s *scope) error {
	b := s.status.binding
	spec, key := b.GetBindingSpec(), placementOf(b)
	s.status.err = func() error {
		master, err := pipeline.GetResourceSnapshot(ctx, r.Client, key, spec.ResourceSnapshotName)
		if err != nil {
			return fmt.Errorf("failed to get resource snapshot %s: %w", spec.ResourceSnapshotName, err)
		}
		set, err := pipeline.ResourceSnapshotSetOf(ctx, r.Client, master)
		if err != nil {
			return err
		}
		selected := set.Resources()
		manifests := make([]placementv1beta1.Manifest, 0, len(selected))
		for _, c := range selected {
			manifests = append(manifests, placementv1beta1.Manifest{RawExtension: *c.RawExtension.DeepCopy()})
		}
		crp, err := pipeline.GetPlacement(ctx, r.Client, key)
		if err != nil {
			return fmt.Errorf("failed to get placement %s: %w", key, err)
		}
		// Kratix scheduling groups: each group's objects go in a Work of their own.
		dyn, err := schedulinggroup.Selectors(crp)
		if err != nil {
			return err
		}
		manifests = schedulinggroup.Filter(manifests, schedulinggroup.Of(b.GetLabels()), schedulinggroup.OwnGroups(dyn))
		out, err := r.render(ctx, b, manifests)
		if err != nil {
			return err
		}
		stamped := stampProvenance(out.manifests, provenance{hub: r.HubName, placement: key, resourceIndex: set.Index()})
		s.work = workSpec{binding: b, placement: crp, manifests: stamped, unstamped: out.manifests}
		s.status.overrides = out.applied
		return nil
	}()
	return nil
}

// writeWork creates or updates the binding's Work in its member's namespace
// (fillWork), under the work generator's field manager.
func (r *Reconciler) writeWork(ctx context.Context, s *scope) error {
	if s.status.err != nil {
		return nil
	}
	b := s.status.binding
	ns := clusterv1beta1.MemberNamespace(b.GetBindingSpec().TargetCluster)
	name, err := r.existingWorkName(ctx, b)
	if err != nil {
		s.status.err = err
		return nil
	}
	work := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	op, err := controllerutil.CreateOrPatch(ctx, client.WithFieldOwner(r.Client, pipeline.ManagerWorkGenerator), work, func() error {
		return fillWork(work, s.work, r.Scheme)
	})
	s.wrote = err == nil && op != controllerutil.OperationResultNone
	if err == nil && work.DeletionTimestamp.IsZero() {
		// A Work created here has the finalizer; one read lacks it only if
		// someone took it off.
		if err := pipeline.AddFinalizer(ctx, r.Client, work, placementv1beta1.AppliedResourcesCleanupFinalizer, pipeline.ManagerWorkGenerator); err != nil {
			s.status.err = err
			return nil
		}
	}
	switch {
	case apierrors.IsAlreadyExists(err):
		// The cache did not show the Work yet (one this controller just
		// created): nothing is wrong that the binding's status should say;
		// the reconcile is retried once the cache has it.
		return fmt.Errorf("the cache does not show Work %s/%s yet: %w", ns, work.Name, err)
	case apierrors.IsNotFound(err):
		s.status.err = fmt.Errorf("namespace %s does not exist: has member %s joined?", ns, b.GetBindingSpec().TargetCluster)
	case err != nil:
		s.status.err = fmt.Errorf("failed to write Work %s/%s: %w", ns, work.Name, err)
	default:
		s.status.work = work
		r.Spans.Mark(placementOf(b), b.GetBindingSpec().TargetCluster, pipeline.StageWork, b.GetBindingSpec().ResourceSnapshotName)
	}
	return nil
}

// loadMember reads the member's AgentConnected condition: while its agent is
// away, what it last reported may no longer hold.
func (r *Reconciler) loadMember(ctx context.Context, s *scope) error {
	if s.status.err != nil {
		return nil
	}
	mc := &clusterv1beta1.MemberCluster{}
	err := r.Client.Get(ctx, types.NamespacedName{Name: s.status.binding.GetBindingSpec().TargetCluster}, mc)
	switch {
	case err == nil:
		s.status.connected = conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected)
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("failed to get member cluster %s: %w", mc.Name, err)
	}
	return nil
}

// holdStatus decides whether the status write waits for the agent's report on
// the Work (holdForReport) and records a hold that begins.
func (r *Reconciler) holdStatus(_ context.Context, s *scope) error {
	now := time.Now()
	h := reportHold{wait: r.ReportWait, wrote: s.wrote, held: r.holds.get(s.key), now: now}
	s.hold = holdForReport(s.status, h)
	switch outcome := holdEnds(s.status, h, s.hold); {
	case s.hold.start:
		r.holds.set(s.key, heldFor{generation: s.status.binding.GetGeneration(), until: now.Add(s.hold.wait)})
	case outcome != "":
		reportHolds.WithLabelValues(outcome).Inc()
		ended := *h.held
		ended.ended = true
		r.holds.set(s.key, ended)
	}
	return nil
}

// writeStatus writes the binding's status as planStatus decides, and announces
// content that newly stops resources from reaching the cluster; not while the
// write waits for the agent's report.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope) error {
	if s.hold.wait > 0 {
		return nil
	}
	b := s.status.binding
	s.plan = planStatus(s.status)
	if s.plan.warning != "" && r.Recorder != nil {
		if crp, err := pipeline.GetPlacement(ctx, r.Client, placementOf(b)); err == nil {
			r.Recorder.Eventf(crp, nil, corev1.EventTypeWarning, s.plan.warningReason, "Override", "%s", s.plan.warning)
		}
	}
	var content *contentError
	if errors.As(s.status.err, &content) {
		s.log.Info("not sending resources", "reason", content.reason, "error", content.Error())
	}
	w := pipeline.BindingWriter{Client: r.Client, Manager: pipeline.ManagerWorkGenerator, Conditions: ownedConditions}
	if err := w.ApplyStatus(ctx, b, s.plan.status); err != nil {
		return err
	}
	spec := b.GetBindingSpec()
	for _, m := range []struct {
		condition string
		stage     pipeline.Stage
	}{{placementv1beta1.ConditionApplied, pipeline.StageApplied}, {placementv1beta1.ConditionAvailable, pipeline.StageAvailable}} {
		if conditions.IsTrue(s.plan.status.Conditions, m.condition) {
			r.Spans.Mark(placementOf(b), spec.TargetCluster, m.stage, spec.ResourceSnapshotName)
		}
	}
	return nil
}

// keepPlacementLists keeps the lists the binding reports while its Work cannot
// be written.
func keepPlacementLists(want *pipeline.BindingStatus, b placementv1beta1.BindingObj) {
	st := b.GetBindingStatus()
	want.FailedPlacements, want.DiffedPlacements = st.FailedPlacements, st.DiffedPlacements
	want.DriftedPlacements, want.Feedback = st.DriftedPlacements, st.Feedback
}

// copyWorkStatus sets in own the agent's Applied and Available conditions of the
// Work, for the binding, and returns the manifests that failed.
func copyWorkStatus(own *[]metav1.Condition, b placementv1beta1.BindingObj, work *placementv1beta1.Work) []placementv1beta1.FailedResourcePlacement {
	for _, t := range []string{placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable} {
		c := conditions.Get(work.Status.Conditions, t)
		if c == nil || c.ObservedGeneration != work.Generation {
			pending := placementv1beta1.ReasonApplyPending
			if t == placementv1beta1.ConditionAvailable {
				pending = placementv1beta1.ReasonNotAvailableYet
			}
			conditions.Set(own, t, metav1.ConditionUnknown, pending,
				fmt.Sprintf("waiting for member %s to report the current Work", b.GetBindingSpec().TargetCluster), b.GetGeneration())
			continue
		}
		conditions.Set(own, t, c.Status, c.Reason, c.Message, b.GetGeneration())
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
	return failed
}

// markDisconnected turns Applied and Available to Unknown, reason
// AgentDisconnected, while the member's agent is disconnected (connected is
// its AgentConnected condition): what the agent last reported may no longer
// hold. The message says since when and what the last report was. The agent's
// next report, once it reconnects, brings the real values back.
func markDisconnected(own *[]metav1.Condition, cluster string, connected *metav1.Condition, gen int64) {
	if connected == nil || connected.Status != metav1.ConditionFalse {
		return
	}
	since := connected.LastTransitionTime.UTC().Format(time.RFC3339)
	for _, t := range []string{placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable} {
		last := "nothing"
		if c := conditions.Get(*own, t); c != nil {
			if c.Reason == placementv1beta1.ReasonAgentDisconnected {
				continue
			}
			last = fmt.Sprintf("%s=%s (%s)", t, c.Status, c.Reason)
		}
		conditions.Set(own, t, metav1.ConditionUnknown, placementv1beta1.ReasonAgentDisconnected,
			fmt.Sprintf("the agent of member %s has been disconnected since %s (%s); it last reported %s", cluster, since, connected.Reason, last), gen)
	}
}

// reconcileRemoval deletes a deleted binding's Work and, once it is gone, lets
// the binding go. The Work's deletion wakes us (the Work watch), so nothing polls.
func (r *Reconciler) reconcileRemoval(ctx context.Context, lg logr.Logger, b placementv1beta1.BindingObj) error {
	if !controllerutil.ContainsFinalizer(b, placementv1beta1.WorkCleanupFinalizer) {
		return nil
	}
	for _, name := range workNames(b) {
		work := &placementv1beta1.Work{}
		key := types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace(b.GetBindingSpec().TargetCluster), Name: name}
		err := r.Client.Get(ctx, key, work)
		switch {
		case err == nil && ownsWork(work, b):
			if work.DeletionTimestamp.IsZero() {
				if err := client.IgnoreNotFound(r.Client.Delete(ctx, work)); err != nil {
					return fmt.Errorf("failed to delete Work %s: %w", key, err)
				}
				lg.Info("deleted work", "work", key.String())
			}
			return nil
		case err != nil && !apierrors.IsNotFound(err):
			return fmt.Errorf("failed to get Work %s: %w", key, err)
		}
	}
	return pipeline.RemoveFinalizer(ctx, r.Client, b, placementv1beta1.WorkCleanupFinalizer, pipeline.ManagerWorkGenerator)
}

// SetupWithManager registers the controller: binding changes other than status
// (the generator's own writes and the rollout's condition wake nothing), the
// status and deletion of the Works it made, and placement changes that alter
// Works (delete strategy, scheduling groups), mapped to that placement's bindings.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := pipeline.SetupIndexes(mgr); err != nil {
		return err
	}
	bindingChanged := builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, deletingOrFinalizersChanged()))
	placementChanged := builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))
	return ctrl.NewControllerManagedBy(mgr).
		Named("workgen").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		For(&placementv1beta1.ClusterResourceBinding{}, bindingChanged).
		Watches(&placementv1beta1.ResourceBinding{}, &handler.EnqueueRequestForObject{}, bindingChanged).
		Watches(&placementv1beta1.Work{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &placementv1beta1.ClusterResourceBinding{}, handler.OnlyControllerOwner()),
			builder.WithPredicates(workChanged())).
		Watches(&placementv1beta1.Work{}, handler.EnqueueRequestsFromMapFunc(resourceBindingOfWork), builder.WithPredicates(workChanged())).
		Watches(&placementv1beta1.ClusterResourcePlacement{}, handler.EnqueueRequestsFromMapFunc(r.bindingsOf), placementChanged).
		Watches(&placementv1beta1.ResourcePlacement{}, handler.EnqueueRequestsFromMapFunc(r.bindingsOf), placementChanged).
		Watches(&clusterv1beta1.MemberCluster{}, handler.EnqueueRequestsFromMapFunc(r.bindingsOnCluster),
			builder.WithPredicates(enqueue.OverrideInputsChanged())).
		Watches(&clusterv1beta1.MemberCluster{}, handler.EnqueueRequestsFromMapFunc(r.allBindingsOnCluster),
			builder.WithPredicates(enqueue.AgentConnectedChanged())).
		Complete(r)
}

// resourceBindingOfWork maps a ResourceBinding's Work (which it cannot own) to
// the binding its labels name.
func resourceBindingOfWork(_ context.Context, o client.Object) []reconcile.Request {
	ns, name := o.GetLabels()[placementv1beta1.LabelPlacementNamespace], o.GetLabels()[placementv1beta1.LabelParentBinding]
	if ns == "" || name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// bindingsOnCluster maps a member cluster to the bindings on it that apply
// overrides (the values of override variables come from the cluster).
func (r *Reconciler) bindingsOnCluster(ctx context.Context, o client.Object) []reconcile.Request {
	bs, err := pipeline.ListBindingsOnCluster(ctx, r.Client, o.GetName())
	if err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, b := range bs {
		if spec := b.GetBindingSpec(); len(spec.ClusterResourceOverrideSnapshots)+len(spec.ResourceOverrideSnapshots) > 0 {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.GetNamespace(), Name: b.GetName()}})
		}
	}
	return out
}

// allBindingsOnCluster maps a member cluster to every binding on it (its
// agent connected or disconnected: Applied and Available change).
func (r *Reconciler) allBindingsOnCluster(ctx context.Context, o client.Object) []reconcile.Request {
	bs, err := pipeline.ListBindingsOnCluster(ctx, r.Client, o.GetName())
	if err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(bs))
	for _, b := range bs {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.GetNamespace(), Name: b.GetName()}})
	}
	return out
}

// bindingsOf maps a placement to its bindings.
func (r *Reconciler) bindingsOf(ctx context.Context, o client.Object) []reconcile.Request {
	bs, err := pipeline.ListBindings(ctx, r.Client, pipeline.KeyOf(o))
	if err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(bs))
	for _, b := range bs {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.GetNamespace(), Name: b.GetName()}})
	}
	return out
}

func deletingOrFinalizersChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !e.ObjectNew.GetDeletionTimestamp().IsZero() || len(e.ObjectOld.GetFinalizers()) != len(e.ObjectNew.GetFinalizers())
	}}
}

// workChanged passes Work events the binding reports: status, generation and
// deletion (not the Work's own metadata churn).
func workChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*placementv1beta1.Work)
		n, ok2 := e.ObjectNew.(*placementv1beta1.Work)
		if !ok1 || !ok2 {
			return true
		}
		return o.Generation != n.Generation || !n.DeletionTimestamp.IsZero() || !equality.Semantic.DeepEqual(o.Status, n.Status)
	}}
}

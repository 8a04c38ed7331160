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

// Package rollout moves each placement's bindings onto its latest resource
// snapshot with KubeFleet's rolling update: a binding the scheduler created
// (Scheduled) becomes Bound, a Bound binding follows new snapshots, and an
// Unscheduled binding is deleted (which removes its resources), in waves that
// keep within spec.strategy.rollingUpdate's maxUnavailable and maxSurge. Which
// bindings may move now is decided by SelectWave, a pure function. The
// RolloutStarted condition of each binding says whether it moved, or who holds it.
//
// Maintenance windows (spec.strategy.rollingUpdate.maintenanceWindows): while
// they are all closed no binding is bound or updated (WindowHold decides, with
// the rules in its comment); RolloutStarted=False, OutsideMaintenanceWindow, says
// when the next window opens, and the controller looks again then. Removals
// never wait for a window. An Event on the placement marks the rollout being
// held and moving again.
//
// Analysis (spec.strategy.rollingUpdate.analysis): each wave of clusters moved
// to a new snapshot is judged before the next moves, and a failed wave pauses
// the rollout or rolls every moved cluster back (DecideGate decides, with the
// rules in its comment; hub/analysis evaluates the checks). The progress is in
// the placement's status.rolloutAnalysis and RolloutAnalysis condition, which
// this controller writes with server-side apply, and in Events.
//
// Placements with strategy type External are left alone entirely: their bindings
// are moved by staged update runs (docs/concepts/pipeline.md). The controller serves both
// scopes: a ClusterResourcePlacement (a request without namespace) and a
// ResourcePlacement (whose strategy cannot be External).
package rollout

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/analysis"
	"github.com/flotilla-io/flotilla/hub/enqueue"
	"github.com/flotilla-io/flotilla/hub/overrides"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/schedulinggroup"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Reconciler rolls a placement's resources out to its bindings.
type Reconciler struct {
	Client client.Client
	// Workers is how many placements are rolled out at once. Default: 1.
	Workers int
	// Spans times each change of a placement through the pipeline: this
	// controller marks each binding it moves to the latest resource snapshot
	// (pipeline.StageBound). Nil: not timed.
	Spans *pipeline.Spans
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Recorder records Events on the placement when its maintenance windows
	// start or stop holding the rollout, and as its analysis judges waves.
	// Default: none.
	Recorder events.EventRecorder
	// Prometheus runs the queries of the analysis's prometheus checks
	// (analysis.NewPrometheus). Default: none (such checks fail their rounds,
	// saying so).
	Prometheus analysis.Prometheus

	waves  waveClock
	checks analysis.Cache
}

// scope carries what the phases of one reconcile learn.
type scope struct {
	// key and placement are the placement being reconciled (set by Reconcile).
	key       pipeline.PlacementKey
	placement placementv1beta1.PlacementObj
	// latest is the master of the latest resource snapshot set (set by loadLatest).
	latest placementv1beta1.ResourceSnapshotObj
	// bindings are the placement's bindings not being deleted (set by loadBindings).
	bindings []placementv1beta1.BindingObj
	// overrides are the override snapshots each binding should apply, by name
	// (set by loadOverrides).
	overrides map[string]overrides.BindingRefs
	// steps are the decisions for each binding, by name (set by plan).
	steps map[string]Step
	// ready is whether each binding is ready, by name (set by plan).
	ready map[string]bool
	// recheck is when a not-trackable binding counts as available, or when the
	// next maintenance window opens, whichever is first (set by plan).
	recheck time.Duration
	// window is the step the maintenance windows impose on binds and updates,
	// or nil (set by plan).
	window *Step
	// snapshots are the placement's resource snapshots (masters) by name, when
	// it has an analysis or its latest snapshot is marked failed (set by
	// loadSnapshots).
	snapshots map[string]placementv1beta1.ResourceSnapshotObj
	// gate is what the wave analysis lets through (set by plan; its status by
	// judge and recordWave).
	gate *Gate
	// again asks for another reconcile at once: a verdict changed what the
	// gate lets through (set by judge and markFailed).
	again bool
	// done stops the phases after the current one (no snapshot yet).
	done bool
}

// requeueIn makes the reconcile look again in d at the latest.
func (s *scope) requeueIn(d time.Duration) {
	if d > 0 && (s.recheck == 0 || d < s.recheck) {
		s.recheck = d
	}
}

// stopped reports whether a phase decided that nothing is left to do.
func (s *scope) stopped() bool { return s.done }

// Reconcile handles one placement of either scope.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	key := pipeline.KeyFromRequest(req)
	crp, err := pipeline.GetPlacement(ctx, r.Client, key)
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !crp.GetDeletionTimestamp().IsZero() || External(crp) {
		return ctrl.Result{}, nil
	}
	s := &scope{key: key, placement: crp}
	if err := pipeline.RunPhases(ctx, s, (*scope).stopped,
		pipeline.Phase[scope]{Name: "load the latest resource snapshot", Run: r.loadLatest},
		pipeline.Phase[scope]{Name: "load the bindings", Run: r.loadBindings},
		pipeline.Phase[scope]{Name: "load the overrides", Run: r.loadOverrides},
		pipeline.Phase[scope]{Name: "load the resource snapshots", Run: r.loadSnapshots},
		pipeline.Phase[scope]{Name: "select the wave", Run: r.plan},
		pipeline.Phase[scope]{Name: "judge the wave", Run: r.judge},
		pipeline.Phase[scope]{Name: "mark a failed snapshot", Run: r.markFailed},
		pipeline.Phase[scope]{Name: "record the wave", Run: r.recordWave},
		pipeline.Phase[scope]{Name: "roll clusters back", Run: r.rollBack},
		pipeline.Phase[scope]{Name: "move the bindings", Run: r.move},
	); err != nil || s.done {
		return ctrl.Result{}, err
	}
	if s.again {
		// A verdict changed what the gate lets through: decide again soon,
		// once the cache has the status just written.
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	// Time wakes us for resources the agent cannot track (they count as
	// available unavailablePeriodSeconds after they were applied) and for the
	// next maintenance window.
	return ctrl.Result{RequeueAfter: s.recheck}, nil
}

// External reports whether a placement's bindings are moved by staged update
// runs rather than by this controller.
func External(crp placementv1beta1.PlacementObj) bool {
	return crp.GetPlacementSpec().Strategy.Type == placementv1beta1.ExternalRolloutStrategyType
}

func (r *Reconciler) loadLatest(ctx context.Context, s *scope) error {
	latest, err := pipeline.LatestResourceSnapshot(ctx, r.Client, s.key)
	if err != nil {
		return err
	}
	s.latest = latest
	s.done = latest == nil
	return nil
}

func (r *Reconciler) loadBindings(ctx context.Context, s *scope) error {
	all, err := pipeline.ListBindings(ctx, r.Client, s.key)
	if err != nil {
		return err
	}
	for _, b := range all {
		if b.GetDeletionTimestamp().IsZero() {
			s.bindings = append(s.bindings, b)
		}
	}
	return nil
}

// plan runs wave selection for each scheduling group of the placement.
func (r *Reconciler) plan(_ context.Context, s *scope) error {
	crp := s.placement
	now := r.now()
	period := unavailablePeriod(crp)
	s.steps, s.ready = map[string]Step{}, map[string]bool{}
	hold, opensIn := WindowHold(crp.GetPlacementSpec().Strategy.RollingUpdate, now)
	s.window = hold
	if opensIn > 0 {
		s.recheck = opensIn
	}
	groups := map[string][]Binding{}
	for _, b := range s.bindings {
		spec := b.GetBindingSpec()
		ready, why, recheck := readiness(b, now, period)
		if recheck > 0 && (s.recheck == 0 || recheck < s.recheck) {
			s.recheck = recheck
		}
		s.ready[b.GetName()] = ready
		hasResources := spec.State == placementv1beta1.BindingStateBound ||
			(spec.State == placementv1beta1.BindingStateUnscheduled && spec.ResourceSnapshotName != "")
		if !hasResources {
			ready, why = false, ""
		}
		g := schedulinggroup.Of(b.GetLabels())
		groups[g] = append(groups[g], Binding{
			Name: b.GetName(), Cluster: spec.TargetCluster, State: spec.State,
			HasResources: hasResources, Current: isCurrent(crp, b, s.latest, s.overrides[b.GetName()]), Ready: ready, NotReady: why,
		})
	}
	// The analysis holds binds and updates as the maintenance windows do; a
	// closed window says so first.
	r.gate(s)
	held := s.window
	if held == nil {
		held = s.gate.Hold
	}
	for g, bs := range groups {
		target := targetCount(crp, g, bs)
		maxUnavailable, maxSurge := Limits(crp.GetPlacementSpec().Strategy.RollingUpdate, target)
		for name, step := range SelectWave(Input{Target: target, MaxUnavailable: maxUnavailable, MaxSurge: maxSurge, Bindings: bs, Window: held}).Steps {
			s.steps[name] = step
		}
	}
	// A cluster on a snapshot marked failed is held from it too, whether it
	// moves back now or waits for its turn.
	if g := s.gate; g.Hold != nil && g.Hold.Reason == placementv1beta1.ReasonRolloutResourceSnapshotFailed {
		for _, b := range s.bindings {
			if name := b.GetName(); s.steps[name].Action == ActionNone && b.GetBindingSpec().State == placementv1beta1.BindingStateBound {
				s.steps[name] = *g.Hold
			}
		}
	}
	return nil
}

// move carries the plan out: binds, updates and removes bindings, and records
// RolloutStarted on every binding that is not being removed.
func (r *Reconciler) move(ctx context.Context, s *scope) error {
	crp, latest := s.placement, s.latest
	lg := log.FromContext(ctx)
	now := r.now()
	// Each binding's writes are its own: they go to the API server
	// pipeline.WritesAtOnce bindings at a time.
	var held, resumed atomic.Int32
	if errs := pipeline.Parallel(len(s.bindings), func(i int) error {
		b := s.bindings[i]
		name, cluster := b.GetName(), b.GetBindingSpec().TargetCluster
		// The wave clock is per binding; a ResourceBinding's name is unique in
		// its namespace only.
		wave := pipeline.PlacementKey{Namespace: b.GetNamespace(), Name: name}.String()
		step := s.steps[name]
		switch step.Action {
		case ActionRemove:
			uid, rv := b.GetUID(), b.GetResourceVersion()
			if err := r.Client.Delete(ctx, b, client.Preconditions{UID: &uid, ResourceVersion: &rv}); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("failed to remove binding %s: %w", name, err)
			}
			r.waves.forget(wave)
			lg.V(1).Info("removed binding", "binding", name, "cluster", cluster)
			return nil
		case ActionBind, ActionUpdate:
			if err := r.moveTo(ctx, crp, b, latest, s.overrides[name], step.Action == ActionBind); err != nil {
				return err
			}
			r.Spans.Mark(s.key, cluster, pipeline.StageBound, latest.GetName())
			r.waves.start(wave, latest.GetName(), now)
			lg.V(1).Info("moved binding", "binding", name, "cluster", cluster, "snapshot", latest.GetName(), "action", step.Action)
		case ActionNone:
			if s.ready[name] {
				r.waves.ready(wave, latest.GetName(), now)
			}
		}
		if b.GetBindingSpec().State == placementv1beta1.BindingStateUnscheduled {
			return nil
		}
		switch before := heldByWindow(b); {
		case step.Action == ActionHold && s.window != nil && step.Reason == s.window.Reason && before != step.Reason:
			held.Add(1)
		case (step.Action == ActionBind || step.Action == ActionUpdate) && before != "":
			resumed.Add(1)
		}
		return r.setRolloutStarted(ctx, b, latest, step)
	}); errs != nil {
		return errors.Join(errs...)
	}
	r.announceWindow(ctx, s, int(held.Load()), int(resumed.Load()))
	return nil
}

// EventMaintenanceWindowOpen is the reason of the Event a placement gets when
// a maintenance window opens and the rolling update moves the clusters it held
// (the Event of their being held has the condition's reason).
const EventMaintenanceWindowOpen = "MaintenanceWindowOpen"

// heldByWindow returns the reason of b's RolloutStarted condition when the
// maintenance windows held it, or "".
func heldByWindow(b placementv1beta1.BindingObj) string {
	c := conditions.Get(b.GetBindingStatus().Conditions, placementv1beta1.ConditionRolloutStarted)
	if c == nil || c.Status != metav1.ConditionFalse ||
		(c.Reason != placementv1beta1.ReasonOutsideMaintenanceWindow && c.Reason != placementv1beta1.ReasonInvalidMaintenanceWindow) {
		return ""
	}
	return c.Reason
}

// announceWindow records an Event on the placement when its maintenance
// windows start holding clusters (held of them newly) or let held clusters
// move again (resumed of them).
func (r *Reconciler) announceWindow(ctx context.Context, s *scope, held, resumed int) {
	if r.Recorder == nil || held+resumed == 0 {
		return
	}
	switch {
	case held > 0 && s.window != nil:
		eventType := corev1.EventTypeNormal
		if s.window.Reason == placementv1beta1.ReasonInvalidMaintenanceWindow {
			eventType = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(s.placement, nil, eventType, s.window.Reason, "Hold", "the rolling update holds %d cluster(s): %s", held, s.window.Why)
	case resumed > 0:
		r.Recorder.Eventf(s.placement, nil, corev1.EventTypeNormal, EventMaintenanceWindowOpen, "Resume", "a maintenance window is open: the rolling update moves %d held cluster(s)", resumed)
	}
	log.FromContext(ctx).V(1).Info("maintenance windows changed the rollout", "held", held, "resumed", resumed)
}

// moveTo binds b to a snapshot (the latest, or the earlier one of a rollback)
// with the placement's apply strategy. Binding a Scheduled binding changes its
// state, which the scheduler writes too, so that patch applies only while the
// binding is still Scheduled.
func (r *Reconciler) moveTo(ctx context.Context, crp placementv1beta1.PlacementObj, b placementv1beta1.BindingObj,
	latest placementv1beta1.ResourceSnapshotObj, ov overrides.BindingRefs, bind bool) error {
	set := map[string]any{"resourceSnapshotName": latest.GetName(), "applyStrategy": nil}
	ov.Set(set)
	if s := crp.GetPlacementSpec().Strategy.ApplyStrategy; s != nil {
		set["applyStrategy"] = s
	}
	ifState := placementv1beta1.BindingState("")
	if bind {
		ifState = placementv1beta1.BindingStateScheduled
		set["state"] = placementv1beta1.BindingStateBound
	}
	patch, err := pipeline.SpecPatch(b, ifState, set)
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, b, patch, client.FieldOwner(pipeline.ManagerRollout)); err != nil {
		return fmt.Errorf("failed to move binding %s to snapshot %s: %w", b.GetName(), latest.GetName(), err)
	}
	return nil
}

// setRolloutStarted records on the binding whether it is on the latest
// resources (True) or held by the rolling update (False, saying by whom).
func (r *Reconciler) setRolloutStarted(ctx context.Context, b placementv1beta1.BindingObj, latest placementv1beta1.ResourceSnapshotObj, step Step) error {
	own := pipeline.OwnConditions(b.GetBindingStatus().Conditions, placementv1beta1.ConditionRolloutStarted)
	index := latest.GetLabels()[placementv1beta1.LabelResourceIndex]
	if step.Action == ActionHold {
		reason := step.Reason
		if reason == "" {
			reason = placementv1beta1.ReasonRolloutNotStartedYet
		}
		conditions.Set(&own, placementv1beta1.ConditionRolloutStarted, metav1.ConditionFalse, reason,
			fmt.Sprintf("resource snapshot %s (index %s) waits: %s", latest.GetName(), index, step.Why), b.GetGeneration())
	} else {
		conditions.Set(&own, placementv1beta1.ConditionRolloutStarted, metav1.ConditionTrue, placementv1beta1.ReasonRolloutStarted,
			fmt.Sprintf("rolled out resource snapshot %s (index %s)", b.GetBindingSpec().ResourceSnapshotName, index), b.GetGeneration())
	}
	return pipeline.ApplyBindingStatus(ctx, r.Client, b, pipeline.ManagerRollout, []string{placementv1beta1.ConditionRolloutStarted}, pipeline.BindingStatus{Conditions: own})
}

// isCurrent reports whether b is Bound to the latest snapshot with the
// placement's apply strategy and the latest applicable override snapshots.
func isCurrent(crp placementv1beta1.PlacementObj, b placementv1beta1.BindingObj, latest placementv1beta1.ResourceSnapshotObj, ov overrides.BindingRefs) bool {
	spec := b.GetBindingSpec()
	return spec.State == placementv1beta1.BindingStateBound && spec.ResourceSnapshotName == latest.GetName() &&
		equality.Semantic.DeepEqual(spec.ApplyStrategy, crp.GetPlacementSpec().Strategy.ApplyStrategy) && ov.Matches(spec)
}

// targetCount is how many clusters a group of the placement should be on.
func targetCount(crp placementv1beta1.PlacementObj, group string, bs []Binding) int {
	if p := crp.GetPlacementSpec().Policy; group == "" && p != nil {
		switch {
		case p.PlacementType == placementv1beta1.PickN && p.NumberOfClusters != nil:
			return int(*p.NumberOfClusters)
		case p.PlacementType == placementv1beta1.PickFixed:
			return len(p.ClusterNames)
		}
	}
	n := 0
	for _, b := range bs {
		if b.State != placementv1beta1.BindingStateUnscheduled {
			n++
		}
	}
	return n
}

func unavailablePeriod(crp placementv1beta1.PlacementObj) time.Duration {
	if ru := crp.GetPlacementSpec().Strategy.RollingUpdate; ru != nil && ru.UnavailablePeriodSeconds != nil {
		return time.Duration(*ru.UnavailablePeriodSeconds) * time.Second
	}
	return 60 * time.Second
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// SetupWithManager registers the controller: placements whose spec changed,
// their resource snapshots, override snapshots (for the placements they may
// concern), member label and property changes (for the placements on that
// member), and binding changes the rollout reads (spec, state,
// and the progress conditions a wave waits for).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := pipeline.SetupIndexes(mgr); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("rollout").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		For(&placementv1beta1.ClusterResourcePlacement{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&placementv1beta1.ResourcePlacement{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&placementv1beta1.ClusterResourceBinding{}, enqueue.ByPlacementLabel(), builder.WithPredicates(bindingProgressChanged())).
		Watches(&placementv1beta1.ResourceBinding{}, enqueue.ByPlacementLabel(), builder.WithPredicates(bindingProgressChanged())).
		Watches(&placementv1beta1.ClusterResourceSnapshot{}, enqueue.ByPlacementLabel()).
		Watches(&placementv1beta1.ResourceSnapshot{}, enqueue.ByPlacementLabel()).
		Watches(&placementv1beta1.ClusterResourceOverrideSnapshot{}, handler.EnqueueRequestsFromMapFunc(r.placementsOfOverride)).
		Watches(&placementv1beta1.ResourceOverrideSnapshot{}, handler.EnqueueRequestsFromMapFunc(r.placementsOfOverride)).
		Watches(&clusterv1beta1.MemberCluster{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return enqueue.PlacementsOnCluster(ctx, r.Client, o.GetName())
		}), builder.WithPredicates(enqueue.OverrideInputsChanged())).
		Complete(r)
}

// placementsOfOverride maps an override snapshot to the placements it may
// concern: those it names (a ClusterResourceOverride's placement.name names a
// ClusterResourcePlacement; a ResourceOverride's names one, or a
// ResourcePlacement in its namespace), or every placement.
func (r *Reconciler) placementsOfOverride(ctx context.Context, o client.Object) []reconcile.Request {
	var placement string
	switch s := o.(type) {
	case *placementv1beta1.ClusterResourceOverrideSnapshot:
		if p := s.Spec.OverrideSpec.Placement; p != nil {
			placement = p.Name
		}
		if placement != "" {
			return []reconcile.Request{pipeline.PlacementKey{Name: placement}.Request()}
		}
	case *placementv1beta1.ResourceOverrideSnapshot:
		if p := s.Spec.OverrideSpec.Placement; p != nil {
			placement = p.Name
		}
		if placement != "" {
			return []reconcile.Request{pipeline.PlacementKey{Name: placement}.Request(),
				pipeline.PlacementKey{Namespace: s.Namespace, Name: placement}.Request()}
		}
	}
	all, err := pipeline.ListPlacements(ctx, r.Client)
	if err != nil {
		log.FromContext(ctx).Error(err, "failed to list placements for an override snapshot", "snapshot", o.GetName())
		return nil
	}
	out := make([]reconcile.Request, 0, len(all))
	for _, p := range all {
		out = append(out, pipeline.KeyOf(p).Request())
	}
	return out
}

// bindingProgressChanged passes binding events that can change a wave: anything
// but an update that leaves spec, deletion and progress conditions as they were.
func bindingProgressChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(placementv1beta1.BindingObj)
		n, ok2 := e.ObjectNew.(placementv1beta1.BindingObj)
		if !ok1 || !ok2 {
			return true
		}
		if o.GetGeneration() != n.GetGeneration() || !o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) {
			return true
		}
		for _, t := range []string{placementv1beta1.ConditionWorkSynchronized, placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable} {
			if pipeline.ConditionChanged(o.GetBindingStatus().Conditions, n.GetBindingStatus().Conditions, t) {
				return true
			}
		}
		return false
	}}
}

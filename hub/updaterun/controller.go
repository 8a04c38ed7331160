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
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/analysis"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/readiness"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Reconciler carries out ClusterStagedUpdateRuns.
type Reconciler struct {
	// Client reads from the cache and writes. Required.
	Client client.Client

	// Reader reads the other runs of a placement when a run is initialized. It
	// should read from the API server rather than a cache, so that two runs of one
	// placement created together never both start. Default: Client.
	Reader client.Reader

	// Recorder records Events on runs. Default: no Events.
	Recorder events.EventRecorder

	// Now returns the current time. Default: time.Now.
	Now func() time.Time

	// Workers is how many runs are handled at once. Default: 1.
	Workers int

	// Prometheus runs the queries of prometheus analysis checks (analysis.NewPrometheus).
	// Default: none, and a prometheus check fails its round with a message
	// that names the hub's --prometheus-url.
	Prometheus analysis.Prometheus

	// Spans times each placement's change stage by stage; a run marks each
	// cluster it moves as bound. Default: none.
	Spans *pipeline.Spans

	// checks holds the runs' compiled analysis checks.
	checks analysis.Cache
}

// scope carries what the phases of one reconcile learn.
type scope struct {
	// run is the run being reconciled (set by Reconcile).
	run *placementv1beta1.ClusterStagedUpdateRun
	// now is the time of this reconcile (set by Reconcile).
	now metav1.Time
	// placement is the run's placement (set by loadPlacement).
	placement *placementv1beta1.ClusterResourcePlacement
	// target is the master snapshot of the run's resource index (set by
	// loadSnapshots).
	target *placementv1beta1.ClusterResourceSnapshot
	// indexOf maps the placement's resource snapshot names to their index (set by
	// loadSnapshots).
	indexOf map[string]string
	// bindings are the placement's bindings by cluster (set by loadBindings).
	bindings map[string]*placementv1beta1.ClusterResourceBinding
	// events are the transitions to announce once the status is written (added
	// by any phase).
	events []event
	// requeue is when to look again for a deadline a phase computed (a TimedWait,
	// an analysis's next round; see requeueIn).
	requeue time.Duration
	// clustersUpdated counts the clusters this reconcile saw succeed, and result is
	// "succeeded" or "failed" when the run finished in it; both go to the metrics
	// once the status is written (set by updateStages and fail).
	clustersUpdated int
	result          string
	// done says the phases after the current one do not run (set by any phase).
	done bool
}

// event is an Event to record on the run.
type event struct {
	eventType, reason, note string
}

func (s *scope) announce(eventType, reason, format string, args ...any) {
	s.events = append(s.events, event{eventType, reason, fmt.Sprintf(format, args...)})
}

// requeueIn asks to look again in d at the latest.
func (s *scope) requeueIn(d time.Duration) {
	if d <= 0 {
		d = time.Millisecond
	}
	if s.requeue == 0 || d < s.requeue {
		s.requeue = d
	}
}

// stopped reports whether a phase decided that nothing is left to do.
func (s *scope) stopped() bool { return s.done }

// Reconcile advances one run as far as it can go now.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (_ ctrl.Result, reterr error) {
	run := &placementv1beta1.ClusterStagedUpdateRun{}
	if err := r.Client.Get(ctx, req.NamespacedName, run); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !run.DeletionTimestamp.IsZero() || isFinished(run) {
		r.checks.Forget(string(run.UID))
		return ctrl.Result{}, nil
	}
	s := &scope{run: run, now: metav1.NewTime(r.now().Truncate(time.Second))}
	before := run.DeepCopy()
	defer func() {
		if err := r.patchStatus(ctx, before, run); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
			return
		}
		r.record(ctx, s)
	}()
	if err := pipeline.RunPhases(ctx, s, (*scope).stopped,
		pipeline.Phase[scope]{Name: "load the placement", Run: r.loadPlacement},
		pipeline.Phase[scope]{Name: "load the resource snapshots", Run: r.loadSnapshots},
		pipeline.Phase[scope]{Name: "load the bindings", Run: r.loadBindings},
		pipeline.Phase[scope]{Name: "initialize", Run: r.initialize},
		pipeline.Phase[scope]{Name: "honour spec.state", Run: r.checkStopped},
		pipeline.Phase[scope]{Name: "take in clusters that joined", Run: r.takeInJoiners},
		pipeline.Phase[scope]{Name: "update the stages", Run: r.updateStages},
	); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: s.requeue}, nil
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) reader() client.Reader {
	if r.Reader != nil {
		return r.Reader
	}
	return r.Client
}

// isInitialized reports whether the run computed its stages.
func isInitialized(run *placementv1beta1.ClusterStagedUpdateRun) bool {
	return conditions.IsTrue(run.Status.Conditions, placementv1beta1.ConditionUpdateRunInitialized)
}

// isFinished reports whether the run succeeded or failed.
func isFinished(run *placementv1beta1.ClusterStagedUpdateRun) bool {
	return conditions.Get(run.Status.Conditions, placementv1beta1.ConditionUpdateRunSucceeded) != nil
}

// notInitialized records why the run cannot be initialized; nothing else runs.
func (r *Reconciler) notInitialized(s *scope, c condition) {
	prev := conditions.Get(s.run.Status.Conditions, placementv1beta1.ConditionUpdateRunInitialized)
	set(&s.run.Status.Conditions, placementv1beta1.ConditionUpdateRunInitialized, c, s.run.Generation)
	if prev == nil || prev.Message != c.message {
		s.announce(corev1.EventTypeWarning, c.reason, "%s", c.message)
	}
	s.done = true
}

// fail ends an initialized run that cannot go on.
func (r *Reconciler) fail(s *scope, why string) {
	set(&s.run.Status.Conditions, placementv1beta1.ConditionUpdateRunSucceeded, runFailed(why), s.run.Generation)
	set(&s.run.Status.Conditions, placementv1beta1.ConditionUpdateRunProgressing, finished(why), s.run.Generation)
	s.announce(corev1.EventTypeWarning, placementv1beta1.ReasonUpdateRunFailed, "%s", why)
	s.result = metricResultFailed
	s.done = true
}

// loadPlacement reads the placement, which must exist and be External.
func (r *Reconciler) loadPlacement(ctx context.Context, s *scope) error {
	name := s.run.Spec.PlacementName
	crp := &placementv1beta1.ClusterResourcePlacement{}
	err := r.Client.Get(ctx, types.NamespacedName{Name: name}, crp)
	switch {
	case apierrors.IsNotFound(err) || (err == nil && !crp.DeletionTimestamp.IsZero()):
		if isInitialized(s.run) {
			r.fail(s, fmt.Sprintf("ClusterResourcePlacement %s was deleted", name))
		} else {
			r.notInitialized(s, placementNotFound(name))
		}
		return nil
	case err != nil:
		return err
	}
	if crp.Spec.Strategy.Type != placementv1beta1.ExternalRolloutStrategyType {
		c := placementNotExternal(name, crp.Spec.Strategy.Type)
		if isInitialized(s.run) {
			r.fail(s, c.message)
		} else {
			r.notInitialized(s, c)
		}
		return nil
	}
	s.placement = crp
	return nil
}

// loadSnapshots finds the placement's resource snapshot set of the run's index.
func (r *Reconciler) loadSnapshots(ctx context.Context, s *scope) error {
	list := &placementv1beta1.ClusterResourceSnapshotList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: s.placement.Name}); err != nil {
		return fmt.Errorf("failed to list resource snapshots: %w", err)
	}
	s.indexOf = make(map[string]string, len(list.Items))
	kept := map[int]bool{}
	for i := range list.Items {
		snap := &list.Items[i]
		index := snap.Labels[placementv1beta1.LabelResourceIndex]
		s.indexOf[snap.Name] = index
		if !pipeline.IsMaster(snap) || !snap.DeletionTimestamp.IsZero() {
			continue
		}
		if n, err := strconv.Atoi(index); err == nil {
			kept[n] = true
		}
		if index == s.run.Spec.ResourceSnapshotIndex {
			s.target = snap
		}
	}
	if s.target != nil {
		return nil
	}
	if isInitialized(s.run) {
		r.fail(s, fmt.Sprintf("resource snapshot %s (index %s) of ClusterResourcePlacement %s was deleted",
			s.run.Status.ResourceSnapshotName, s.run.Spec.ResourceSnapshotIndex, s.placement.Name))
		return nil
	}
	indexes := make([]int, 0, len(kept))
	for n := range kept {
		indexes = append(indexes, n)
	}
	sort.Ints(indexes)
	names := make([]string, 0, len(indexes))
	for _, n := range indexes {
		names = append(names, strconv.Itoa(n))
	}
	r.notInitialized(s, snapshotNotFound(s.placement.Name, s.run.Spec.ResourceSnapshotIndex, names))
	return nil
}

// loadBindings reads the placement's active bindings.
func (r *Reconciler) loadBindings(ctx context.Context, s *scope) error {
	bindings, err := listClusterBindings(ctx, r.Client, s.placement.Name)
	if err != nil {
		return err
	}
	s.bindings = make(map[string]*placementv1beta1.ClusterResourceBinding, len(bindings))
	for i := range bindings {
		b := &bindings[i]
		if pipeline.IsActive(b) {
			s.bindings[b.Spec.TargetCluster] = b
		}
	}
	return nil
}

// initialize computes the run's stages from the strategy and the placement's
// current clusters, once.
func (r *Reconciler) initialize(ctx context.Context, s *scope) error {
	run := s.run
	if isInitialized(run) {
		return nil
	}
	other, err := r.otherRunInProgress(ctx, run)
	if err != nil {
		return err
	}
	if other != "" {
		r.notInitialized(s, waitingForOtherRun(run.Spec.PlacementName, other))
		return nil
	}
	strategy := &placementv1beta1.ClusterStagedUpdateStrategy{}
	err = r.Client.Get(ctx, types.NamespacedName{Name: run.Spec.StagedUpdateStrategyName}, strategy)
	switch {
	case apierrors.IsNotFound(err):
		r.notInitialized(s, strategyNotFound(run.Spec.StagedUpdateStrategyName))
		return nil
	case err != nil:
		return err
	}
	clusters := make([]memberCluster, 0, len(s.bindings))
	for name := range s.bindings {
		mc := &clusterv1beta1.MemberCluster{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: name}, mc); client.IgnoreNotFound(err) != nil {
			return err
		}
		clusters = append(clusters, memberCluster{name: name, labels: mc.Labels})
	}
	stages, unselected, err := computeStages(&strategy.Spec, clusters)
	if err == nil {
		err = validateAnalyses(&strategy.Spec)
	}
	if err == nil {
		err = validateWindows(&strategy.Spec)
	}
	if err != nil {
		r.notInitialized(s, invalidStrategy(strategy.Name, err))
		return nil
	}
	if mark, ok := s.target.Annotations[placementv1beta1.AnnotationFailedAnalysis]; ok {
		r.notInitialized(s, snapshotFailed(s.target.Name, run.Spec.ResourceSnapshotIndex, mark))
		return nil
	}
	recordPreviousSnapshots(stages, s.bindings)
	if err := pinOverrides(ctx, r.Client, s.placement.Name, s.target, stages); err != nil {
		return err
	}
	run.Status.ResourceSnapshotName = s.target.Name
	run.Status.StagedUpdateStrategySnapshot = strategy.Spec.DeepCopy()
	run.Status.StagesStatus = stages
	run.Status.UnselectedClusters = unselected
	c := initialized(s.target.Name, run.Spec.ResourceSnapshotIndex, stages, unselected)
	set(&run.Status.Conditions, placementv1beta1.ConditionUpdateRunInitialized, c, run.Generation)
	s.announce(corev1.EventTypeNormal, c.reason, "%s", c.message)
	// The snapshots the clusters run now (what a rollback returns them to) are
	// written before any cluster moves: the stages start at the next reconcile.
	s.requeueIn(0)
	s.done = true
	return nil
}

// recordPreviousSnapshots records in every cluster of the stages the resource
// snapshot its binding names now, if Bound: what the cluster ran before the run.
func recordPreviousSnapshots(stages []placementv1beta1.StageUpdatingStatus, bindings map[string]*placementv1beta1.ClusterResourceBinding) {
	for i := range stages {
		for j := range stages[i].Clusters {
			c := &stages[i].Clusters[j]
			if b := bindings[c.ClusterName]; b != nil && b.Spec.State == placementv1beta1.BindingStateBound {
				c.PreviousResourceSnapshotName = b.Spec.ResourceSnapshotName
			}
		}
	}
}

// otherRunInProgress returns the name of another run of the same placement that
// is initialized, not finished, not stopped and not being deleted, or "".
func (r *Reconciler) otherRunInProgress(ctx context.Context, run *placementv1beta1.ClusterStagedUpdateRun) (string, error) {
	list := &placementv1beta1.ClusterStagedUpdateRunList{}
	if err := r.reader().List(ctx, list); err != nil {
		return "", fmt.Errorf("failed to list update runs: %w", err)
	}
	for i := range list.Items {
		o := &list.Items[i]
		if o.Name != run.Name && o.Spec.PlacementName == run.Spec.PlacementName && o.DeletionTimestamp.IsZero() &&
			isInitialized(o) && !isFinished(o) && o.Spec.State != placementv1beta1.StagedUpdateRunStateStop {
			return o.Name, nil
		}
	}
	return "", nil
}

// checkStopped stops here when spec.state is Stop.
func (r *Reconciler) checkStopped(_ context.Context, s *scope) error {
	if s.run.Spec.State != placementv1beta1.StagedUpdateRunStateStop {
		return nil
	}
	if !conditions.IsFalse(s.run.Status.Conditions, placementv1beta1.ConditionUpdateRunProgressing) ||
		conditions.Get(s.run.Status.Conditions, placementv1beta1.ConditionUpdateRunProgressing).Reason != placementv1beta1.ReasonUpdateRunStopped {
		s.announce(corev1.EventTypeNormal, placementv1beta1.ReasonUpdateRunStopped, "stopped: no further cluster is updated until spec.state is Run")
	}
	set(&s.run.Status.Conditions, placementv1beta1.ConditionUpdateRunProgressing, stopped(), s.run.Generation)
	s.done = true
	return nil
}

// patchStatus writes the run's status if it changed. The optimistic lock makes a
// reconcile that read a stale run fail with a conflict (and be retried) rather
// than write an old view of the stages.
func (r *Reconciler) patchStatus(ctx context.Context, before, run *placementv1beta1.ClusterStagedUpdateRun) error {
	readiness.SetUpdateRun(run)
	if equality.Semantic.DeepEqual(before.Status, run.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, run, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("failed to update the status of update run %s: %w", run.Name, err)
	}
	return nil
}

// record logs the run's transitions, records them as Events and counts them in
// the metrics.
func (r *Reconciler) record(ctx context.Context, s *scope) {
	clustersUpdatedTotal.Add(float64(s.clustersUpdated))
	if s.result != "" {
		runsFinishedTotal.WithLabelValues(s.result).Inc()
	}
	lg := log.FromContext(ctx)
	for _, e := range s.events {
		lg.Info("update run "+e.reason, "run", klog.KObj(s.run), "placement", s.run.Spec.PlacementName, "message", e.note)
		if r.Recorder != nil {
			r.Recorder.Eventf(s.run, nil, e.eventType, e.reason, "StagedUpdate", "%s", e.note)
		}
	}
}

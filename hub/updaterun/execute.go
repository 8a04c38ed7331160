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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/analysis"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// updateStages advances the first stage that has not succeeded; when it succeeds,
// the next one, and so on. The run succeeds after the last stage.
func (r *Reconciler) updateStages(ctx context.Context, s *scope) error {
	run := s.run
	gen := run.Generation
	defer r.reportSnapshots(s)
	for i := range run.Status.StagesStatus {
		st := &run.Status.StagesStatus[i]
		if conditions.IsTrue(st.Conditions, placementv1beta1.ConditionUpdateRunSucceeded) {
			continue
		}
		cfg := r.stageConfig(run, i)
		win := windowOf(cfg, i, s.now.Time)
		if st.StartTime == nil && win.open {
			st.StartTime = s.now.DeepCopy()
			s.announce(corev1.EventTypeNormal, "StageStarted", "stage %s started: %d clusters, at most %d at a time",
				st.StageName, len(st.Clusters), maxConcurrency(cfg.MaxConcurrency, len(st.Clusters)))
		}
		limit := maxConcurrency(cfg.MaxConcurrency, len(st.Clusters))
		plan, err := r.updateClusters(ctx, s, st, limit, win.open)
		if err != nil {
			return err
		}
		if !plan.done && !win.open {
			// Clusters already moving finish; the others wait for the window.
			if !win.opens.IsZero() {
				s.requeueIn(win.opens.Sub(s.now.Time))
			}
		}
		if !plan.done && !win.open && len(plan.updating) == 0 {
			c := outsideWindow(st.StageName, waitingClusters(st), win)
			set(&st.Conditions, placementv1beta1.ConditionUpdateRunProgressing, c, gen)
			if set(&run.Status.Conditions, placementv1beta1.ConditionUpdateRunProgressing, c, gen) {
				s.announce(corev1.EventTypeNormal, placementv1beta1.ReasonOutsideMaintenanceWindow, "%s", c.message)
			}
			return nil
		}
		if !plan.done {
			set(&st.Conditions, placementv1beta1.ConditionUpdateRunProgressing, stageProgressing(plan.updating), gen)
			set(&run.Status.Conditions, placementv1beta1.ConditionUpdateRunProgressing, progressing(st.StageName, plan.updating, limit), gen)
			return nil
		}
		waits, failure, err := r.runTasks(ctx, s, i, st, cfg)
		if err != nil {
			return err
		}
		if failure != nil {
			if failure.rollback {
				return r.rollBack(ctx, s, i, failure.message)
			}
			c := analysisPaused(st.StageName, failure.message)
			set(&st.Conditions, placementv1beta1.ConditionUpdateRunProgressing, c, gen)
			set(&run.Status.Conditions, placementv1beta1.ConditionUpdateRunProgressing, c, gen)
			return nil
		}
		if len(waits) > 0 {
			c := waiting(st.StageName, waits)
			set(&st.Conditions, placementv1beta1.ConditionUpdateRunProgressing, c, gen)
			set(&run.Status.Conditions, placementv1beta1.ConditionUpdateRunProgressing, c, gen)
			return nil
		}
		if st.StartTime == nil {
			// Every cluster finished without starting (none left to move).
			st.StartTime = s.now.DeepCopy()
		}
		st.EndTime = s.now.DeepCopy()
		set(&st.Conditions, placementv1beta1.ConditionUpdateRunProgressing, finished("the stage succeeded"), gen)
		set(&st.Conditions, placementv1beta1.ConditionUpdateRunSucceeded, stageSucceeded(len(st.Clusters)), gen)
		s.announce(corev1.EventTypeNormal, "StageSucceeded", "stage %s succeeded", st.StageName)
	}
	c := runSucceeded(run.Status.StagesStatus, s.target.Name, run.Spec.ResourceSnapshotIndex)
	set(&run.Status.Conditions, placementv1beta1.ConditionUpdateRunSucceeded, c, gen)
	set(&run.Status.Conditions, placementv1beta1.ConditionUpdateRunProgressing, finished("the run succeeded"), gen)
	s.announce(corev1.EventTypeNormal, c.reason, "%s", c.message)
	s.result = metricResultSucceeded
	return nil
}

// stageConfig returns the strategy's stage i as the run copied it.
func (r *Reconciler) stageConfig(run *placementv1beta1.ClusterStagedUpdateRun, i int) *placementv1beta1.StageConfig {
	return &run.Status.StagedUpdateStrategySnapshot.Stages[i]
}

// updateClusters records the stage's finished clusters and moves the next ones,
// within limit, until nothing changes: a cluster that already runs the snapshot
// finishes at once. While the stage's maintenance windows are closed (open is
// false) no cluster starts. It returns the last plan.
func (r *Reconciler) updateClusters(ctx context.Context, s *scope, st *placementv1beta1.StageUpdatingStatus, limit int, open bool) (stagePlan, error) {
	run, target := s.run, s.target.Name
	index := run.Spec.ResourceSnapshotIndex
	byName := make(map[string]*placementv1beta1.ClusterUpdatingStatus, len(st.Clusters))
	for i := range st.Clusters {
		byName[st.Clusters[i].ClusterName] = &st.Clusters[i]
	}
	for {
		views := make(map[string]bindingView, len(st.Clusters))
		for _, c := range st.Clusters {
			views[c.ClusterName] = viewOf(s.bindings[c.ClusterName])
		}
		plan := planStage(st.Clusters, views, target, limit)
		if !open {
			plan = holdStarts(plan)
		}
		for _, name := range plan.succeeded {
			c := byName[name]
			c.EndTime = s.now.DeepCopy()
			set(&c.Conditions, placementv1beta1.ConditionUpdateRunSucceeded, clusterSucceeded(target, index), run.Generation)
			s.clustersUpdated++
		}
		for _, name := range plan.unscheduled {
			set(&byName[name].Conditions, placementv1beta1.ConditionUpdateRunSucceeded, clusterUnscheduled(run.Spec.PlacementName), run.Generation)
			s.announce(corev1.EventTypeNormal, placementv1beta1.ReasonClusterUnscheduled, "stage %s: %s left the placement; the run leaves it", st.StageName, name)
		}
		starting := map[string]bool{}
		for _, name := range plan.start {
			starting[name] = true
		}
		// Every updating cluster is (re)moved: one that started before keeps the
		// run's snapshot even if something else changed its binding.
		for _, name := range plan.updating {
			b := s.bindings[name]
			refs, gone, err := pinnedOverrides(ctx, r.Client, byName[name])
			if err != nil {
				return plan, err
			}
			if len(gone) > 0 && starting[name] {
				s.announce(corev1.EventTypeWarning, "OverrideSnapshotGone", "stage %s: %s moves without the override snapshots pinned at initialization that were deleted since: %s",
					st.StageName, name, strings.Join(gone, ", "))
			}
			if err := moveBinding(ctx, r.Client, b, target, s.placement.Spec.Strategy.ApplyStrategy, refs); err != nil {
				return plan, err
			}
			r.Spans.Mark(pipeline.KeyOf(s.placement), name, pipeline.StageBound, target)
			if err := applyRolloutStarted(ctx, r.Client, b, bindingRolloutStarted(run.Name, target, index), false); err != nil {
				return plan, err
			}
			if starting[name] {
				c := byName[name]
				c.StartTime = s.now.DeepCopy()
				set(&c.Conditions, placementv1beta1.ConditionClusterUpdatingStarted, clusterStartedCondition(target, index), run.Generation)
			}
		}
		if len(plan.succeeded)+len(plan.unscheduled)+len(plan.start) == 0 {
			return plan, nil
		}
	}
}

// reportSnapshots records which resource snapshot each cluster of the run runs
// now. (The override snapshots in the same status are those the run pinned at
// initialization, pinOverrides.)
func (r *Reconciler) reportSnapshots(s *scope) {
	for i := range s.run.Status.StagesStatus {
		st := &s.run.Status.StagesStatus[i]
		for j := range st.Clusters {
			c := &st.Clusters[j]
			b := s.bindings[c.ClusterName]
			if b == nil {
				continue
			}
			c.ResourceSnapshotName = b.Spec.ResourceSnapshotName
			c.ResourceSnapshotIndex = s.indexOf[b.Spec.ResourceSnapshotName]
		}
	}
}

// runTasks runs the stage's after-stage tasks (the stage's index is stage) and
// returns what the run still waits for (nothing: the stage is complete), or the
// failure of its analysis.
func (r *Reconciler) runTasks(ctx context.Context, s *scope, stage int, st *placementv1beta1.StageUpdatingStatus, cfg *placementv1beta1.StageConfig) ([]taskWait, *analysisFailure, error) {
	var waits []taskWait
	for i := range st.AfterStageTaskStatus {
		ts := &st.AfterStageTaskStatus[i]
		if ts.StartTime == nil {
			ts.StartTime = s.now.DeepCopy()
		}
		switch ts.Type {
		case placementv1beta1.AfterStageTaskTypeApproval:
			w, err := r.approvalTask(ctx, s, st, ts)
			if err != nil {
				return nil, nil, err
			}
			if w != nil {
				waits = append(waits, *w)
			}
		case placementv1beta1.AfterStageTaskTypeTimedWait:
			if w := r.timedWaitTask(s, ts, waitTimeOf(cfg, ts.Type)); w != nil {
				waits = append(waits, *w)
			}
		case placementv1beta1.AfterStageTaskTypeAnalysis:
			w, failure, err := r.analysisTask(ctx, s, stage, st, ts, analysisOf(cfg))
			if err != nil || failure != nil {
				return nil, failure, err
			}
			if w != nil {
				waits = append(waits, *w)
			}
		}
	}
	return waits, nil, nil
}

// analysisOf returns the analysis of the stage's Analysis task.
func analysisOf(cfg *placementv1beta1.StageConfig) *placementv1beta1.Analysis {
	for _, t := range cfg.AfterStageTasks {
		if t.Type == placementv1beta1.AfterStageTaskTypeAnalysis {
			return t.Analysis
		}
	}
	return nil
}

// analysisTask runs a round of the stage's analysis when one is due (every
// interval, the first at once), judges it, and returns what the run waits for
// (the next round), nothing (it passed) or the failure. A failed analysis stays
// failed: later reconciles return the same failure.
func (r *Reconciler) analysisTask(ctx context.Context, s *scope, stage int, st *placementv1beta1.StageUpdatingStatus, ts *placementv1beta1.AfterStageTaskStatus, spec *placementv1beta1.Analysis) (*taskWait, *analysisFailure, error) {
	gen := s.run.Generation
	verdict := conditions.Get(ts.Conditions, placementv1beta1.ConditionAnalysisPassed)
	switch {
	case verdict != nil && verdict.Status == metav1.ConditionTrue:
		return nil, nil, nil
	case verdict != nil && verdict.Status == metav1.ConditionFalse:
		rollback := spec != nil && spec.OnFailure == placementv1beta1.AnalysisFailureRollback
		token, retry := retryRequested(s.run.Annotations[placementv1beta1.AnnotationRetryAnalysis], ts.Analysis, rollback)
		if !retry {
			return nil, &analysisFailure{rollback: rollback, message: verdict.Message}, nil
		}
		ts.Analysis = &placementv1beta1.AnalysisStatus{Retried: token}
		meta.RemoveStatusCondition(&ts.Conditions, placementv1beta1.ConditionAnalysisPassed)
		s.announce(corev1.EventTypeNormal, placementv1beta1.EventAnalysisRetried, "stage %s: the analysis runs again from its first round (annotation %s); it had failed: %s",
			st.StageName, placementv1beta1.AnnotationRetryAnalysis, verdict.Message)
	case spec == nil:
		// The API requires an analysis; initialization checked it.
		c := analysisFailedCondition(ts.Analysis, "the Analysis task has no analysis")
		set(&ts.Conditions, placementv1beta1.ConditionAnalysisPassed, c, gen)
		return nil, &analysisFailure{message: c.message}, nil
	}
	if ts.Analysis == nil {
		ts.Analysis = &placementv1beta1.AnalysisStatus{}
	}
	interval := spec.Interval.Duration
	if d := analysis.NextRoundIn(ts.Analysis.LastRoundTime, interval, r.now()); d > 0 {
		s.requeueIn(d)
		return &taskWait{analysis: analysisRunningMessage(spec, ts.Analysis, d)}, nil, nil
	}
	inputs, stale, err := r.analysisInputs(ctx, s, st)
	if err != nil {
		return nil, nil, err
	}
	if len(stale) > 0 {
		// The placement's status lags behind the bindings: a round over it would
		// judge the old snapshot.
		s.requeueIn(staleStatusRetry)
		c := analysisWaitingForStatus(s.placement.Name, s.run.Spec.ResourceSnapshotIndex, stale)
		set(&ts.Conditions, placementv1beta1.ConditionAnalysisPassed, c, gen)
		return &taskWait{analysis: c.message}, nil, nil
	}
	checks, err := r.checks.Get(string(s.run.UID), stage, spec.Checks)
	if err != nil {
		// Initialization compiled the checks; this is a hub whose CEL changed.
		c := analysisFailedCondition(ts.Analysis, err.Error())
		set(&ts.Conditions, placementv1beta1.ConditionAnalysisPassed, c, gen)
		s.announce(corev1.EventTypeWarning, placementv1beta1.ReasonAnalysisFailed, "stage %s: %s", st.StageName, c.message)
		return nil, &analysisFailure{message: c.message}, nil
	}
	results, err := analysis.Run(ctx, checks, analysis.Round{Clusters: inputs, Prometheus: r.Prometheus, Now: s.now.Time})
	if err != nil {
		return nil, nil, err
	}
	next, phase := analysis.JudgeRound(spec, *ts.Analysis, results, s.now)
	roundFailed := next.Failures > ts.Analysis.Failures
	*ts.Analysis = next
	switch phase {
	case analysis.Passed:
		c := analysisPassedCondition(&next)
		set(&ts.Conditions, placementv1beta1.ConditionAnalysisPassed, c, gen)
		s.announce(corev1.EventTypeNormal, placementv1beta1.ReasonAnalysisPassed, "stage %s: %s", st.StageName, c.message)
		return nil, nil, nil
	case analysis.Failed:
		c := analysisFailedCondition(&next, next.LastFailure)
		set(&ts.Conditions, placementv1beta1.ConditionAnalysisPassed, c, gen)
		s.announce(corev1.EventTypeWarning, placementv1beta1.ReasonAnalysisFailed, "stage %s: %s", st.StageName, c.message)
		return nil, &analysisFailure{rollback: spec.OnFailure == placementv1beta1.AnalysisFailureRollback, message: c.message}, nil
	}
	if roundFailed {
		s.announce(corev1.EventTypeWarning, "AnalysisRoundFailed", "stage %s: round %d failed (%d of %d failing rounds allowed): %s",
			st.StageName, next.Rounds, next.Failures, analysis.AtLeastOne(spec.FailureLimit)-1, next.LastFailure)
	}
	s.requeueIn(interval)
	c := analysisRunningCondition(spec, &next, interval)
	set(&ts.Conditions, placementv1beta1.ConditionAnalysisPassed, c, gen)
	return &taskWait{analysis: c.message}, nil, nil
}

// reportedAvailable reports whether a placement status entry shows the
// cluster's resources Available (or, for ReportDiff, compared).
func reportedAvailable(pcs *placementv1beta1.PerClusterPlacementStatus) bool {
	return conditions.IsTrue(pcs.Conditions, placementv1beta1.ConditionAvailable) ||
		conditions.IsTrue(pcs.Conditions, placementv1beta1.ConditionDiffReported)
}

// staleStatusRetry is how soon an analysis looks again at a placement status
// that does not show the run's snapshot on every cluster of the stage yet.
const staleStatusRetry = time.Second

// analysisInputs returns what the checks see of the stage's clusters that the
// run updated (not those that left the placement): their entries of the
// placement's status.placementStatuses and their labels. The clusters whose entry
// does not show the run's resource index, Available (DiffReported for
// ReportDiff), yet are in stale: the placement's status is written after the
// bindings', and an entry from before the agent reported on the run's snapshot
// would show the old version's feedback, or none.
func (r *Reconciler) analysisInputs(ctx context.Context, s *scope, st *placementv1beta1.StageUpdatingStatus) ([]analysis.Cluster, []string, error) {
	byCluster := make(map[string]*placementv1beta1.PerClusterPlacementStatus, len(s.placement.Status.PlacementStatuses))
	for i := range s.placement.Status.PlacementStatuses {
		pcs := &s.placement.Status.PlacementStatuses[i]
		byCluster[pcs.ClusterName] = pcs
	}
	var inputs []analysis.Cluster
	var stale []string
	for _, c := range st.Clusters {
		if !conditions.IsTrue(c.Conditions, placementv1beta1.ConditionUpdateRunSucceeded) {
			continue
		}
		pcs := byCluster[c.ClusterName]
		if pcs == nil || pcs.ObservedResourceIndex != s.run.Spec.ResourceSnapshotIndex || !reportedAvailable(pcs) {
			stale = append(stale, c.ClusterName)
			continue
		}
		mc := &clusterv1beta1.MemberCluster{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: c.ClusterName}, mc); client.IgnoreNotFound(err) != nil {
			return nil, nil, fmt.Errorf("failed to get MemberCluster %s: %w", c.ClusterName, err)
		}
		inputs = append(inputs, analysis.Cluster{Status: *pcs, Labels: mc.Labels})
	}
	return inputs, stale, nil
}

// waitTimeOf returns the waitTime of the stage's task of the type.
func waitTimeOf(cfg *placementv1beta1.StageConfig, typ placementv1beta1.AfterStageTaskType) time.Duration {
	for _, t := range cfg.AfterStageTasks {
		if t.Type == typ && t.WaitTime != nil {
			return t.WaitTime.Duration
		}
	}
	return 0
}

// timedWaitTask completes waitTime after the task started; until then the run
// looks again when the time is up.
func (r *Reconciler) timedWaitTask(s *scope, ts *placementv1beta1.AfterStageTaskStatus, waitTime time.Duration) *taskWait {
	if conditions.IsTrue(ts.Conditions, placementv1beta1.ConditionWaitTimeElapsed) {
		return nil
	}
	remaining := ts.StartTime.Add(waitTime).Sub(r.now())
	if remaining > 0 {
		if s.requeue == 0 || remaining < s.requeue {
			s.requeue = remaining
		}
		return &taskWait{remaining: remaining, waitTime: waitTime}
	}
	set(&ts.Conditions, placementv1beta1.ConditionWaitTimeElapsed, waitTimeElapsed(waitTime), s.run.Generation)
	return nil
}

// approvalTask makes sure the stage's ClusterApprovalRequest exists and, once a
// user approved it, accepts the approval.
func (r *Reconciler) approvalTask(ctx context.Context, s *scope, st *placementv1beta1.StageUpdatingStatus, ts *placementv1beta1.AfterStageTaskStatus) (*taskWait, error) {
	if conditions.IsTrue(ts.Conditions, placementv1beta1.ConditionApprovalRequestApproved) {
		return nil, nil
	}
	run := s.run
	req, wait, err := r.ensureApprovalRequest(ctx, s, st.StageName)
	if err != nil || wait != nil {
		if wait != nil {
			ts.ApprovalRequestName = wait.approvalRequest
		}
		return wait, err
	}
	name := req.Name
	ts.ApprovalRequestName = name
	set(&ts.Conditions, placementv1beta1.ConditionApprovalRequestCreated, approvalRequestCreated(name), run.Generation)
	if !conditions.IsTrue(req.Status.Conditions, placementv1beta1.ConditionApprovalRequestApprovedByUser) {
		return &taskWait{approvalRequest: name}, nil
	}
	if err := r.acceptApproval(ctx, req, run.Name); err != nil {
		return nil, err
	}
	set(&ts.Conditions, placementv1beta1.ConditionApprovalRequestApproved, approvalRequestApproved(name), run.Generation)
	s.announce(corev1.EventTypeNormal, "StageApproved", "stage %s: ClusterApprovalRequest %s was approved", st.StageName, name)
	return nil, nil
}

// acceptApproval sets the request's ApprovalAccepted condition with server-side
// apply, leaving the user's Approved condition alone.
func (r *Reconciler) acceptApproval(ctx context.Context, req *placementv1beta1.ClusterApprovalRequest, run string) error {
	if conditions.IsTrue(req.Status.Conditions, placementv1beta1.ConditionApprovalAccepted) {
		return nil
	}
	var own []metav1.Condition
	set(&own, placementv1beta1.ConditionApprovalAccepted, approvalAccepted(run), req.Generation)
	body := map[string]any{
		"apiVersion": placementv1beta1.GroupVersion.String(),
		"kind":       "ClusterApprovalRequest",
		"metadata":   map[string]any{"name": req.Name},
		"status":     map[string]any{"conditions": own},
	}
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	if err := r.Client.Status().Patch(ctx, req, client.RawPatch(types.ApplyPatchType, data), client.FieldOwner(pipeline.ManagerUpdateRun), client.ForceOwnership); err != nil {
		return fmt.Errorf("failed to accept ClusterApprovalRequest %s: %w", req.Name, err)
	}
	return nil
}

// ApprovalRequestName is the usual name of the ClusterApprovalRequest of a
// run's stage: <run>-<stage>, shortened with a hash when that is longer than a
// name may be. It is not unique (run a-b's stage c and run a's stage b-c share
// it): a run whose usual name is taken by another run's request uses
// approvalRequestAltName. The request's spec says whose it is.
func ApprovalRequestName(run, stage string) string {
	name := run + "-" + stage
	if len(name) <= 253 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:240] + "-" + hex.EncodeToString(sum[:])[:12]
}

// approvalRequestAltName is a name of the ClusterApprovalRequest of a run's
// stage that no other (run, stage) pair has: the usual name, cut to leave room,
// and a hash of the pair.
func approvalRequestAltName(run, stage string) string {
	sum := sha256.Sum256([]byte(run + "\x00" + stage))
	prefix := run + "-" + stage
	if len(prefix) > 240 {
		prefix = prefix[:240]
	}
	return prefix + "-" + hex.EncodeToString(sum[:])[:12]
}

// approvalRequestMatch is what a ClusterApprovalRequest found under a
// candidate name is to a run's stage.
type approvalRequestMatch int

const (
	// approvalRequestOurs: its spec names the run and the stage, and the run
	// controls it.
	approvalRequestOurs approvalRequestMatch = iota
	// approvalRequestStale: its spec names the run and the stage but another
	// object (a deleted run of the same name) or nobody controls it: it must
	// not approve this run, and is replaced.
	approvalRequestStale
	// approvalRequestOthers: its spec names another run or stage: the name is
	// taken, and the next candidate is tried.
	approvalRequestOthers
)

// matchApprovalRequest says whose a ClusterApprovalRequest is, from its spec
// (what it approves) and its controller.
func matchApprovalRequest(req *placementv1beta1.ClusterApprovalRequest, run metav1.Object, stage string) approvalRequestMatch {
	if req.Spec.ParentStageRollout != run.GetName() || req.Spec.TargetStage != stage {
		return approvalRequestOthers
	}
	if !metav1.IsControlledBy(req, run) {
		return approvalRequestStale
	}
	return approvalRequestOurs
}

// ensureApprovalRequest finds or creates the ClusterApprovalRequest of a run's
// stage under its usual name or, when another run's request holds that name,
// its alternative one. A wait is returned while a stale request is replaced.
func (r *Reconciler) ensureApprovalRequest(ctx context.Context, s *scope, stage string) (*placementv1beta1.ClusterApprovalRequest, *taskWait, error) {
	run := s.run
	for _, name := range []string{ApprovalRequestName(run.Name, stage), approvalRequestAltName(run.Name, stage)} {
		req := &placementv1beta1.ClusterApprovalRequest{}
		err := r.Client.Get(ctx, types.NamespacedName{Name: name}, req)
		if apierrors.IsNotFound(err) {
			req = &placementv1beta1.ClusterApprovalRequest{
				ObjectMeta: metav1.ObjectMeta{
					Name: name,
					Labels: map[string]string{
						placementv1beta1.LabelUpdateRun: labelValue(run.Name),
						placementv1beta1.LabelStage:     labelValue(stage),
					},
				},
				Spec: placementv1beta1.ApprovalRequestSpec{ParentStageRollout: run.Name, TargetStage: stage},
			}
			if err := controllerutil.SetControllerReference(run, req, r.Client.Scheme()); err != nil {
				return nil, nil, err
			}
			if err := r.Client.Create(ctx, req, client.FieldOwner(pipeline.ManagerUpdateRun)); err != nil {
				if apierrors.IsAlreadyExists(err) {
					// Created since the read: look again at the next reconcile.
					return nil, &taskWait{approvalRequest: name}, nil
				}
				return nil, nil, fmt.Errorf("failed to create ClusterApprovalRequest %s: %w", name, err)
			}
			s.announce(corev1.EventTypeNormal, "ApprovalRequested", "stage %s: every cluster is updated; ClusterApprovalRequest %s waits for approval", stage, name)
			return req, nil, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("failed to get ClusterApprovalRequest %s: %w", name, err)
		}
		switch matchApprovalRequest(req, run, stage) {
		case approvalRequestOurs:
			return req, nil, nil
		case approvalRequestStale:
			// A request for this run and stage left by another run of the same
			// name must not approve this one: replace it. Its deletion wakes the
			// run, which then creates its own.
			if err := r.Client.Delete(ctx, req, client.Preconditions{UID: &req.UID}); client.IgnoreNotFound(err) != nil {
				return nil, nil, fmt.Errorf("failed to delete ClusterApprovalRequest %s of another run: %w", name, err)
			}
			return nil, &taskWait{approvalRequest: name}, nil
		}
	}
	return nil, nil, fmt.Errorf("the names of the ClusterApprovalRequest of stage %s (%s, %s) are both taken by requests of other runs",
		stage, ApprovalRequestName(run.Name, stage), approvalRequestAltName(run.Name, stage))
}

// labelValue is a name as a label value: itself when it fits in 63 characters,
// else cut and followed by a hash of the whole name.
func labelValue(name string) string {
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return strings.TrimRight(name[:50], "-_.") + "-" + hex.EncodeToString(sum[:])[:12]
}

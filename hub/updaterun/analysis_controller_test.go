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

package updaterun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/poll"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// replicasAtMost3 is the check, over the ConfigMap the test agents report
// on: every cluster's replicas feedback value is at most 3.
const replicasAtMost3 = "clusters.all(c, c.feedback.all(f, f.kind != 'ConfigMap' || f.values.all(v, v.name != 'replicas' || int(v.value) <= 3)))"

// replicasFeedback reports, for the ConfigMap settings of a Work, a feedback
// value replicas: 5 when its color is red (the bad version), else 2.
func replicasFeedback(w *placementv1beta1.Work) []placementv1beta1.ManifestCondition {
	for i, m := range w.Spec.Workload.Manifests {
		var obj struct {
			Kind     string            `json:"kind"`
			Metadata metav1.ObjectMeta `json:"metadata"`
			Data     map[string]string `json:"data"`
		}
		if err := json.Unmarshal(m.Raw, &obj); err != nil || obj.Kind != "ConfigMap" {
			continue
		}
		replicas := "2"
		if obj.Data["color"] == "red" {
			replicas = "5"
		}
		return []placementv1beta1.ManifestCondition{{
			Identifier: placementv1beta1.WorkResourceIdentifier{Ordinal: i, Version: "v1", Kind: "ConfigMap", Namespace: obj.Metadata.Namespace, Name: obj.Metadata.Name},
			Feedback:   []placementv1beta1.FeedbackValue{{Name: "replicas", Value: replicas}},
		}}
	}
	return nil
}

// analysisTask is an Analysis task of one check, every second.
func analysisTask(onFailure placementv1beta1.AnalysisFailurePolicy, successCount int32, cel string) placementv1beta1.AfterStageTask {
	return placementv1beta1.AfterStageTask{Type: placementv1beta1.AfterStageTaskTypeAnalysis, Analysis: &placementv1beta1.Analysis{
		Interval: metav1.Duration{Duration: time.Second}, SuccessCount: successCount, FailureLimit: 1, OnFailure: onFailure,
		Checks: []placementv1beta1.AnalysisCheck{{Name: "replicas-sane", CEL: cel}},
	}}
}

// canaryAnalysisThenProd creates a strategy: canary (one cluster at a time) with
// the task, then prod.
func canaryAnalysisThenProd(t *testing.T, name string, task placementv1beta1.AfterStageTask) {
	t.Helper()
	testenv.Create(t, env.Client, &placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{Name: "canary", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "canary"}},
				MaxConcurrency: ptr.To(intstr.FromInt32(1)), AfterStageTasks: []placementv1beta1.AfterStageTask{task}},
			{Name: "prod", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "prod"}}},
		}},
	})
}

// analysisStatus returns the run's status of the stage's Analysis task.
func analysisStatus(run *placementv1beta1.ClusterStagedUpdateRun, stage string) *placementv1beta1.AfterStageTaskStatus {
	for i := range run.Status.StagesStatus {
		st := &run.Status.StagesStatus[i]
		for j := range st.AfterStageTaskStatus {
			if ts := &st.AfterStageTaskStatus[j]; st.StageName == stage && ts.Type == placementv1beta1.AfterStageTaskTypeAnalysis {
				return ts
			}
		}
	}
	return nil
}

// onSnapshot returns a check that each cluster's binding names the snapshot and
// is Available at its generation.
func onSnapshot(placement, snapshot string, clusters ...string) func() error {
	return func() error {
		for _, c := range clusters {
			b, err := bindingOn(placement, c)
			if err != nil {
				return err
			}
			if b.Spec.ResourceSnapshotName != snapshot || !conditions.IsCurrentTrue(b.Status.Conditions, placementv1beta1.ConditionAvailable, b.Generation) {
				return fmt.Errorf("%s runs %s (Available at its generation: %t), want %s", c, b.Spec.ResourceSnapshotName,
					conditions.IsCurrentTrue(b.Status.Conditions, placementv1beta1.ConditionAvailable, b.Generation), snapshot)
			}
		}
		return nil
	}
}

// A passing analysis lets a run go on with no approval; then a version whose
// canary reports replicas over the limit fails the analysis, and the run rolls
// the canary back by itself: prod is never touched, and the failed snapshot is
// marked so that no run takes it again.
func TestCanaryFailingAnalysisIsRolledBackAndProdIsNeverTouched(t *testing.T) {
	ctx := context.Background()
	agents := newMemberAgents()
	agents.feedback = replicasFeedback
	startHub(t, agents)
	testenv.ReadyMember(t, env.Client, "r-1", map[string]string{"suite": "r", "stage": "canary"})
	testenv.ReadyMember(t, env.Client, "r-2", map[string]string{"suite": "r", "stage": "canary"})
	testenv.ReadyMember(t, env.Client, "r-3", map[string]string{"suite": "r", "stage": "prod"})
	appNamespace(t, "upd-r", "blue")
	externalPlacement(t, "upd-r", map[string]string{"suite": "r"})
	canaryAnalysisThenProd(t, "upd-r", analysisTask(placementv1beta1.AnalysisFailureRollback, 2, replicasAtMost3))
	waitUntilExternallyControlled(t, "upd-r", "r-1", "r-2", "r-3")

	// Blue reports replicas 2: the analysis passes after two rounds, and the run
	// finishes with no approval.
	testenv.Create(t, env.Client, newRun("upd-r-0", "upd-r", "0", "upd-r"))
	waitForRunCondition(t, "upd-r-0", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
	run0 := getRun(t, "upd-r-0")
	ts := analysisStatus(run0, "canary")
	passed := conditions.Get(ts.Conditions, placementv1beta1.ConditionAnalysisPassed)
	if passed == nil || passed.Status != metav1.ConditionTrue || ts.Analysis == nil || ts.Analysis.ConsecutiveSuccesses != 2 || ts.Analysis.Failures != 0 {
		t.Fatalf("canary analysis of run 0: %+v, condition %+v", ts.Analysis, passed)
	}
	if want := "passed after 2 rounds, 2 passing in a row, 0 failing"; passed.Message != want {
		t.Errorf("AnalysisPassed message = %q, want %q", passed.Message, want)
	}
	if err := hasEvent("upd-r-0", placementv1beta1.ReasonAnalysisPassed); err != nil {
		t.Error(err)
	}
	testenv.Eventually(t, 30*time.Second, onSnapshot("upd-r", "upd-r-0-snapshot", "r-1", "r-2", "r-3"))

	// Red reports replicas 5: the first round fails, and with failureLimit 1 the
	// analysis fails and the canary rolls back.
	setColor(t, "upd-r", "red")
	testenv.Eventually(t, 30*time.Second, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "upd-r"}, crp); err != nil {
			return err
		}
		if crp.Status.ObservedResourceIndex != "1" {
			return fmt.Errorf("placement upd-r has resource index %q", crp.Status.ObservedResourceIndex)
		}
		return nil
	})
	testenv.Create(t, env.Client, newRun("upd-r-1", "upd-r", "1", "upd-r"))
	// Polled every 20ms rather than testenv's 200ms, to time the rollback.
	var failedAt time.Time
	poll.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		ts := analysisStatus(getRun(t, "upd-r-1"), "canary")
		if ts == nil {
			return fmt.Errorf("run upd-r-1 is not initialized yet")
		}
		c := conditions.Get(ts.Conditions, placementv1beta1.ConditionAnalysisPassed)
		if c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("canary analysis: %+v", c)
		}
		failedAt = time.Now()
		return nil
	})
	// Prod is never touched, while the canary rolls back or after.
	prodUntouched := func() error {
		b, err := bindingOn("upd-r", "r-3")
		if err != nil {
			return err
		}
		if b.Spec.ResourceSnapshotName != "upd-r-0-snapshot" {
			return fmt.Errorf("prod cluster r-3 runs %s", b.Spec.ResourceSnapshotName)
		}
		if rs := conditions.Get(b.Status.Conditions, placementv1beta1.ConditionRolloutStarted); rs == nil || strings.Contains(rs.Message, "upd-r-1") {
			return fmt.Errorf("prod cluster r-3 RolloutStarted: %+v", rs)
		}
		return nil
	}
	var backAt time.Time
	poll.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		if err := prodUntouched(); err != nil {
			t.Fatal(err)
		}
		if err := onSnapshot("upd-r", "upd-r-0-snapshot", "r-1", "r-2")(); err != nil {
			return err
		}
		backAt = time.Now()
		return nil
	})
	run1 := getRun(t, "upd-r-1")
	failedRound := analysisStatus(run1, "canary").Analysis.LastRoundTime.Time
	t.Logf("rollback time: the failing round ran at %s; every canary cluster was back on upd-r-0-snapshot and Available %s after the test saw the analysis fail (polling every 20ms), %s after the round (its time is kept to the second)",
		failedRound.Format(time.RFC3339), backAt.Sub(failedAt).Round(time.Millisecond), backAt.Sub(failedRound).Round(time.Millisecond))

	done := waitForRunCondition(t, "upd-r-1", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunRolledBack)
	want := "the analysis of stage canary failed: failed after 1 round, 0 passing in a row, 1 failing: check replicas-sane is false on r-1 (ConfigMap upd-r/settings: replicas=5), r-2 (ConfigMap upd-r/settings: replicas=5); 2 clusters rolled back to the resource snapshots they ran before the run"
	if done.Message != want {
		t.Errorf("Succeeded message =\n%q, want\n%q", done.Message, want)
	}
	if err := prodUntouched(); err != nil {
		t.Error(err)
	}
	run1 = getRun(t, "upd-r-1")
	for _, name := range []string{"r-1", "r-2"} {
		c := clusterStatus(run1, name)
		rb := conditions.Get(c.Conditions, placementv1beta1.ConditionClusterRolledBack)
		if c.PreviousResourceSnapshotName != "upd-r-0-snapshot" || rb == nil || rb.Status != metav1.ConditionTrue || c.ResourceSnapshotIndex != "0" {
			t.Errorf("canary cluster %s: previous %q, index %q, RolledBack %+v", name, c.PreviousResourceSnapshotName, c.ResourceSnapshotIndex, rb)
		}
	}
	if c := clusterStatus(run1, "r-3"); conditions.Get(c.Conditions, placementv1beta1.ConditionClusterUpdatingStarted) != nil {
		t.Errorf("prod cluster r-3 was started: %+v", c.Conditions)
	}
	if err := colorsAre("upd-r", map[string]string{"r-1": "blue", "r-2": "blue", "r-3": "blue"})(); err != nil {
		t.Error(err)
	}
	for _, reason := range []string{placementv1beta1.ReasonAnalysisFailed, placementv1beta1.ReasonUpdateRunRolledBack, "ResourceSnapshotMarkedFailed"} {
		if err := hasEvent("upd-r-1", reason); err != nil {
			t.Error(err)
		}
	}

	// The placement says, per canary cluster, which run rolled it back and why.
	testenv.Eventually(t, 30*time.Second, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "upd-r"}, crp); err != nil {
			return err
		}
		for _, pcs := range crp.Status.PlacementStatuses {
			if pcs.ClusterName != "r-1" {
				continue
			}
			rs := conditions.Get(pcs.Conditions, placementv1beta1.ConditionRolloutStarted)
			if want := "ClusterStagedUpdateRun upd-r-1 rolled the cluster back to resource snapshot upd-r-0-snapshot (index 0): failed after 1 round"; rs == nil || !strings.HasPrefix(rs.Message, want) || !strings.Contains(rs.Message, "check replicas-sane is false on r-1") {
				return fmt.Errorf("placement upd-r, cluster r-1: RolloutStarted %+v", rs)
			}
			return nil
		}
		return fmt.Errorf("placement upd-r has no status for r-1")
	})

	// The failed snapshot is marked, and a run of it is refused until a user
	// removes the mark.
	snap := &placementv1beta1.ClusterResourceSnapshot{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: "upd-r-1-snapshot"}, snap); err != nil {
		t.Fatal(err)
	}
	if mark := snap.Annotations[placementv1beta1.AnnotationFailedAnalysis]; !strings.HasPrefix(mark, "ClusterStagedUpdateRun upd-r-1, stage canary: failed after 1 round") {
		t.Errorf("annotation %s = %q", placementv1beta1.AnnotationFailedAnalysis, mark)
	}
	testenv.Create(t, env.Client, newRun("upd-r-1-again", "upd-r", "1", "upd-r"))
	again := waitForRunCondition(t, "upd-r-1-again", placementv1beta1.ConditionUpdateRunInitialized, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunResourceSnapshotFailed)
	if !strings.HasPrefix(again.Message, "resource snapshot upd-r-1-snapshot (index 1) is marked placement.flotilla.io/failed-analysis (ClusterStagedUpdateRun upd-r-1, stage canary:") {
		t.Errorf("Initialized message = %q", again.Message)
	}
	if err := onSnapshot("upd-r", "upd-r-0-snapshot", "r-1", "r-2", "r-3")(); err != nil {
		t.Error(err)
	}
}

// With onFailure Pause, a failing analysis stops the run where it is: the canary
// keeps the run's snapshot, prod is not started, and the run says why. A user
// runs the analysis again with the retry-analysis annotation, once per value:
// while the canary still reports too many replicas it pauses the run again;
// once the canary recovers, it passes and the run goes on to prod.
func TestFailingAnalysisWithPauseStopsTheRunUntilARetryPasses(t *testing.T) {
	var recovered atomic.Bool
	agents := newMemberAgents()
	agents.feedback = func(w *placementv1beta1.Work) []placementv1beta1.ManifestCondition {
		mcs := replicasFeedback(w)
		if recovered.Load() {
			for i := range mcs {
				mcs[i].Feedback = []placementv1beta1.FeedbackValue{{Name: "replicas", Value: "2"}}
			}
		}
		return mcs
	}
	startHub(t, agents)
	testenv.ReadyMember(t, env.Client, "q-1", map[string]string{"suite": "q", "stage": "canary"})
	testenv.ReadyMember(t, env.Client, "q-2", map[string]string{"suite": "q", "stage": "prod"})
	appNamespace(t, "upd-q", "red")
	externalPlacement(t, "upd-q", map[string]string{"suite": "q"})
	canaryAnalysisThenProd(t, "upd-q", analysisTask(placementv1beta1.AnalysisFailurePause, 1, replicasAtMost3))
	waitUntilExternallyControlled(t, "upd-q", "q-1", "q-2")

	testenv.Create(t, env.Client, newRun("upd-q-0", "upd-q", "0", "upd-q"))
	paused := waitForRunCondition(t, "upd-q-0", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunAnalysisPaused)
	want := "stage canary: the analysis failed, so no further stage starts (onFailure Pause): failed after 1 round, 0 passing in a row, 1 failing: check replicas-sane is false on q-1 (ConfigMap upd-q/settings: replicas=5)"
	if paused.Message != want {
		t.Errorf("Progressing message =\n%q, want\n%q", paused.Message, want)
	}
	testenv.Consistently(t, 2*time.Second, func() error {
		if err := colorsAre("upd-q", map[string]string{"q-1": "red", "q-2": ""})(); err != nil {
			return err
		}
		if run := getRun(t, "upd-q-0"); conditions.Get(run.Status.Conditions, placementv1beta1.ConditionUpdateRunSucceeded) != nil {
			return fmt.Errorf("a paused run finished: %+v", run.Status.Conditions)
		}
		return nil
	})

	// A retry while the canary still reports 5 replicas fails again.
	retry := func(value string) {
		t.Helper()
		run := getRun(t, "upd-q-0")
		if run.Annotations == nil {
			run.Annotations = map[string]string{}
		}
		run.Annotations[placementv1beta1.AnnotationRetryAnalysis] = value
		if err := env.Client.Update(context.Background(), run); err != nil {
			t.Fatal(err)
		}
	}
	first := analysisStatus(getRun(t, "upd-q-0"), "canary").Analysis.LastRoundTime
	retry("1")
	testenv.Eventually(t, 30*time.Second, func() error {
		ts := analysisStatus(getRun(t, "upd-q-0"), "canary")
		if ts.Analysis == nil || ts.Analysis.Retried == "" || ts.Analysis.Rounds != 1 || ts.Analysis.Failures != 1 || !ts.Analysis.LastRoundTime.After(first.Time) {
			return fmt.Errorf("the analysis did not run again and fail: %+v", ts.Analysis)
		}
		return nil
	})
	waitForRunCondition(t, "upd-q-0", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunAnalysisPaused)
	testenv.Eventually(t, 10*time.Second, func() error { return hasEvent("upd-q-0", placementv1beta1.EventAnalysisRetried) })
	if err := colorsAre("upd-q", map[string]string{"q-2": ""})(); err != nil {
		t.Fatal(err)
	}

	// The same value again does nothing; once the canary recovers, a new value
	// runs the analysis again, it passes, and prod follows.
	recovered.Store(true)
	pokeWorks(t, "q-1") // the agent reports its (recovered) feedback again
	testenv.Eventually(t, 30*time.Second, func() error {
		for _, pcs := range placementStatuses(t, "upd-q") {
			for _, f := range pcs.Feedback {
				for _, v := range f.Values {
					if pcs.ClusterName == "q-1" && v.Name == "replicas" && v.Value == "2" {
						return nil
					}
				}
			}
		}
		return fmt.Errorf("the placement does not show q-1's recovered feedback yet")
	})
	testenv.Consistently(t, 3*time.Second, func() error {
		if err := colorsAre("upd-q", map[string]string{"q-2": ""})(); err != nil {
			return err
		}
		if ts := analysisStatus(getRun(t, "upd-q-0"), "canary"); ts.Analysis == nil || ts.Analysis.Rounds != 1 {
			return fmt.Errorf("the analysis ran again without a new retry value: %+v", ts.Analysis)
		}
		return nil
	})
	retry("2")
	waitForRunCondition(t, "upd-q-0", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
	if err := colorsAre("upd-q", map[string]string{"q-1": "red", "q-2": "red"})(); err != nil {
		t.Fatal(err)
	}
}

// A check that does not compile keeps the run from starting, with a message
// that names the stage, the check and the compiler's complaint.
func TestACheckThatDoesNotCompileKeepsTheRunFromStarting(t *testing.T) {
	startHub(t, newMemberAgents())
	testenv.ReadyMember(t, env.Client, "x-1", map[string]string{"suite": "x", "stage": "canary"})
	appNamespace(t, "upd-x", "blue")
	externalPlacement(t, "upd-x", map[string]string{"suite": "x"})
	canaryAnalysisThenProd(t, "upd-x", analysisTask(placementv1beta1.AnalysisFailureRollback, 1, "clusters.all(c, c.feedback.size() > )"))
	waitUntilExternallyControlled(t, "upd-x", "x-1")

	testenv.Create(t, env.Client, newRun("upd-x-0", "upd-x", "0", "upd-x"))
	c := waitForRunCondition(t, "upd-x-0", placementv1beta1.ConditionUpdateRunInitialized, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunInvalidStrategy)
	want := "ClusterStagedUpdateStrategy upd-x cannot be used: stage canary: check replicas-sane: the cel expression does not compile: ERROR: <input>:1:37: Syntax error"
	if !strings.HasPrefix(c.Message, want) || strings.Contains(c.Message, "\n") {
		t.Errorf("Initialized message =\n%q, want one line starting\n%q", c.Message, want)
	}
	if err := colorsAre("upd-x", map[string]string{"x-1": ""})(); err != nil {
		t.Error(err)
	}
}

// pokeWorks touches the Works of a cluster, so that the test agents report on
// them again.
func pokeWorks(t *testing.T, cluster string) {
	t.Helper()
	works := &placementv1beta1.WorkList{}
	if err := env.Client.List(context.Background(), works, client.InNamespace("flotilla-member-"+cluster)); err != nil {
		t.Fatal(err)
	}
	for i := range works.Items {
		w := &works.Items[i]
		patch := client.MergeFrom(w.DeepCopy())
		if w.Annotations == nil {
			w.Annotations = map[string]string{}
		}
		w.Annotations["test.flotilla.io/poke"] = time.Now().String()
		if err := env.Client.Patch(context.Background(), w, patch); err != nil {
			t.Fatal(err)
		}
	}
}

// placementStatuses returns the placement's per-cluster statuses.
func placementStatuses(t *testing.T, name string) []placementv1beta1.PerClusterPlacementStatus {
	t.Helper()
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, crp); err != nil {
		t.Fatal(err)
	}
	return crp.Status.PlacementStatuses
}

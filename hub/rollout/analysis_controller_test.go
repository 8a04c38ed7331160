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

package rollout_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// levelCheck passes while every judged cluster reports a level of at most 3.
const levelCheck = "clusters.all(c, c.feedback.all(f, f.values.all(v, v.name != 'level' || int(v.value) <= 3)))"

// reportPlacementStatus plays the placement controller: the placement's
// status.placementStatuses show each cluster on a resource index, Available,
// with a level feedback value.
func reportPlacementStatus(t *testing.T, placement string, indexOf map[string]string, levelOf map[string]string) {
	t.Helper()
	ctx := context.Background()
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: placement}, crp); err != nil {
		t.Fatal(err)
	}
	before := crp.DeepCopy()
	crp.Status.PlacementStatuses = nil
	for _, c := range clusters {
		pcs := placementv1beta1.PerClusterPlacementStatus{ClusterName: c, ObservedResourceIndex: indexOf[c],
			Feedback: []placementv1beta1.ResourceFeedback{{
				ResourceIdentifier: placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "c"},
				Values:             []placementv1beta1.FeedbackValue{{Name: "level", Value: levelOf[c]}}}}}
		conditions.Set(&pcs.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, placementv1beta1.ReasonAvailable, "reported by the test", crp.Generation)
		crp.Status.PlacementStatuses = append(crp.Status.PlacementStatuses, pcs)
	}
	if err := env.Client.Status().Patch(ctx, crp, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

func rolloutAnalysisCondition(t *testing.T, placement string) (*metav1.Condition, *placementv1beta1.RolloutAnalysisStatus) {
	t.Helper()
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: placement}, crp); err != nil {
		t.Fatal(err)
	}
	return conditions.Get(crp.Status.Conditions, "ClusterResourcePlacement"+placementv1beta1.ConditionRolloutAnalysis), crp.Status.RolloutAnalysis
}

// A rolling update whose second wave fails its analysis (onFailure Rollback)
// marks the snapshot failed and moves the first two waves back to the
// snapshot they ran before, one at a time (maxUnavailable 1), by itself; the
// cluster it never moved is not touched.
func TestASecondWaveThatFailsItsAnalysisRollsTheFirstWaveBack(t *testing.T) {
	const p = "wave-rollback"
	ctx := context.Background()
	startRollout(t)
	v0 := availableEverywhere(t, p)
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: p}, crp); err != nil {
		t.Fatal(err)
	}
	crp.Spec.Strategy.RollingUpdate.Analysis = &placementv1beta1.Analysis{
		Interval: metav1.Duration{Duration: time.Second}, SuccessCount: 1, FailureLimit: 1, OnFailure: placementv1beta1.AnalysisFailureRollback,
		Checks: []placementv1beta1.AnalysisCheck{{Name: "level-sane", CEL: levelCheck}},
	}
	if err := env.Client.Update(ctx, crp); err != nil {
		t.Fatal(err)
	}
	untouched := binding(t, p, "member-3").Generation

	v1 := snapshot(t, p, 1)
	// Wave 1: member-1 alone, judged good.
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v1, "member-1"))
	report(t, p, "member-1", true, true, placementv1beta1.ReasonAvailable)
	reportPlacementStatus(t, p, map[string]string{"member-1": "1", "member-2": "0", "member-3": "0"}, map[string]string{"member-1": "1", "member-2": "1", "member-3": "1"})
	// Wave 2: member-2, whose level is over the limit.
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v1, "member-1", "member-2"))
	if c, st := rolloutAnalysisCondition(t, p); st == nil || st.Wave != 2 || c == nil || c.Reason != placementv1beta1.ReasonWaveAnalysisRunning {
		t.Fatalf("after wave 1 passed: condition %+v, status %+v; want wave 2 running", c, st)
	}
	report(t, p, "member-2", true, true, placementv1beta1.ReasonAvailable)
	failing := time.Now()
	reportPlacementStatus(t, p, map[string]string{"member-1": "1", "member-2": "1", "member-3": "0"}, map[string]string{"member-1": "1", "member-2": "9", "member-3": "1"})

	// The snapshot is marked failed, naming the check and the value.
	testenv.Eventually(t, 20*time.Second, func() error {
		snap := &placementv1beta1.ClusterResourceSnapshot{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: v1}, snap); err != nil {
			return err
		}
		if mark := snap.Annotations[placementv1beta1.AnnotationFailedAnalysis]; !strings.Contains(mark, "level-sane") || !strings.Contains(mark, "level=9") {
			return fmt.Errorf("annotation %s = %q, want the check and the value", placementv1beta1.AnnotationFailedAnalysis, mark)
		}
		return nil
	})
	// One cluster moves back at a time: member-1 first, then member-2 once
	// member-1 is Available on v0 again.
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v0, "member-1", "member-3"))
	consistently(t, 2*time.Second, onSnapshot(t, p, v0, "member-1", "member-3"))
	report(t, p, "member-1", true, true, placementv1beta1.ReasonAvailable)
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v0, clusters...))
	t.Logf("every moved cluster is bound to %s again %s after the failing round was reported", v0, time.Since(failing).Round(time.Millisecond))
	report(t, p, "member-2", true, true, placementv1beta1.ReasonAvailable)
	testenv.Eventually(t, 20*time.Second, func() error {
		c, _ := rolloutAnalysisCondition(t, p)
		if c == nil || c.Reason != placementv1beta1.ReasonWaveRolledBack || !strings.Contains(c.Message, "member-1, member-2") {
			return fmt.Errorf("condition %+v, want WaveRolledBack naming member-1 and member-2", c)
		}
		return nil
	})
	if got := binding(t, p, "member-3").Generation; got != untouched {
		t.Errorf("member-3, never moved, changed generation %d → %d", untouched, got)
	}
	// The failed snapshot is not taken again: nothing moves to it.
	consistently(t, 2*time.Second, onSnapshot(t, p, v0, clusters...))
	rs := rolloutStarted(t, p, "member-1")
	if rs == nil || rs.Reason != placementv1beta1.ReasonRolloutResourceSnapshotFailed {
		t.Errorf("member-1 RolloutStarted = %+v, want %s", rs, placementv1beta1.ReasonRolloutResourceSnapshotFailed)
	}
	// A new change rolls out again, wave by wave.
	v2 := snapshot(t, p, 2)
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v2, "member-1"))
}

// A wave that fails its analysis with onFailure Pause holds the rollout where
// it is, and the condition names the check with its values.
func TestAFailedWaveWithPauseHoldsTheRollout(t *testing.T) {
	const p = "wave-pause"
	ctx := context.Background()
	startRollout(t)
	v0 := availableEverywhere(t, p)
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: p}, crp); err != nil {
		t.Fatal(err)
	}
	crp.Spec.Strategy.RollingUpdate.Analysis = &placementv1beta1.Analysis{
		Interval: metav1.Duration{Duration: time.Second}, SuccessCount: 1, FailureLimit: 1, OnFailure: placementv1beta1.AnalysisFailurePause,
		Checks: []placementv1beta1.AnalysisCheck{{Name: "level-sane", CEL: levelCheck}},
	}
	if err := env.Client.Update(ctx, crp); err != nil {
		t.Fatal(err)
	}
	v1 := snapshot(t, p, 1)
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v1, "member-1"))
	report(t, p, "member-1", true, true, placementv1beta1.ReasonAvailable)
	reportPlacementStatus(t, p, map[string]string{"member-1": "1", "member-2": "0", "member-3": "0"}, map[string]string{"member-1": "7", "member-2": "1", "member-3": "1"})
	testenv.Eventually(t, 20*time.Second, func() error {
		c, _ := rolloutAnalysisCondition(t, p)
		if c == nil || c.Reason != placementv1beta1.ReasonWaveAnalysisFailed || !strings.Contains(c.Message, "level-sane") || !strings.Contains(c.Message, "level=7") {
			return fmt.Errorf("condition %+v, want WaveAnalysisFailed naming level-sane and level=7", c)
		}
		return nil
	})
	consistently(t, 2*time.Second, onSnapshot(t, p, v0, "member-2", "member-3"))
	consistently(t, time.Second, onSnapshot(t, p, v1, "member-1"))
}

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

package rollout

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Tiny builders for the wave analysis: a binding per cluster, named after it.
func on(cluster, snapshot string, ready bool) GateBinding {
	return GateBinding{Name: cluster, Cluster: cluster, Bound: true, Snapshot: snapshot, Ready: ready}
}

func waveAnalysis(onFailure placementv1beta1.AnalysisFailurePolicy) *placementv1beta1.Analysis {
	return &placementv1beta1.Analysis{
		Interval:     metav1.Duration{Duration: 5e9},
		SuccessCount: 2, FailureLimit: 1, OnFailure: onFailure,
		Checks: []placementv1beta1.AnalysisCheck{{Name: "sane", CEL: "true"}},
	}
}

func moved(cluster, previous string) placementv1beta1.MovedCluster {
	return placementv1beta1.MovedCluster{ClusterName: cluster, PreviousResourceSnapshotName: previous}
}

// gateView is what a test compares of a Gate.
type gateView struct {
	Hold       string // the hold's reason, "" when the gate is open
	Judge      bool
	MarkFailed bool
	RollBack   map[string]string
	Verdict    string // the verdict's reason, "" when there is none
	Status     *placementv1beta1.RolloutAnalysisStatus
}

func view(g Gate) gateView {
	v := gateView{Judge: g.Judge, MarkFailed: g.MarkFailed != "", RollBack: g.RollBack, Status: g.Status}
	if len(v.RollBack) == 0 {
		v.RollBack = nil
	}
	if g.Hold != nil {
		v.Hold = g.Hold.Reason
	}
	if g.Verdict != nil {
		v.Verdict = g.Verdict.Reason
	}
	return v
}

func TestDecideGate(t *testing.T) {
	const (
		running     = placementv1beta1.ReasonWaveAnalysisRunning
		passed      = placementv1beta1.ReasonWaveAnalysisPassed
		failed      = placementv1beta1.ReasonWaveAnalysisFailed
		rollingBack = placementv1beta1.ReasonWaveRollingBack
		rolledBack  = placementv1beta1.ReasonWaveRolledBack
		snapFailed  = placementv1beta1.ReasonRolloutResourceSnapshotFailed
	)
	pause, rollback := waveAnalysis(placementv1beta1.AnalysisFailurePause), waveAnalysis(placementv1beta1.AnalysisFailureRollback)
	wave2 := func(a *placementv1beta1.AnalysisStatus) *placementv1beta1.RolloutAnalysisStatus {
		return &placementv1beta1.RolloutAnalysisStatus{ResourceSnapshotName: "s2", Wave: 2, Clusters: []string{"b"}, Analysis: a,
			Moved: []placementv1beta1.MovedCluster{moved("a", "s1"), moved("b", "s1")}}
	}
	failedRound := &placementv1beta1.AnalysisStatus{Rounds: 1, Failures: 1, LastFailure: "check sane is false on b (ConfigMap app/cfg: level=9)"}
	both := map[string]bool{"s1": true, "s2": true}
	for _, tc := range []struct {
		name string
		in   GateInput
		want gateView
	}{
		{
			name: "with no analysis the gate is open and there is no status or condition",
			in:   GateInput{Latest: "s2", Bindings: []GateBinding{on("a", "s1", true)}},
			want: gateView{},
		},
		{
			name: "a new snapshot starts the status again and opens the gate for the first wave",
			in: GateInput{Analysis: pause, Latest: "s3", Status: wave2(&placementv1beta1.AnalysisStatus{Rounds: 2, ConsecutiveSuccesses: 2}),
				Bindings: []GateBinding{on("a", "s2", true), on("b", "s2", true)}},
			want: gateView{Verdict: running, Status: &placementv1beta1.RolloutAnalysisStatus{ResourceSnapshotName: "s3"}},
		},
		{
			name: "a wave whose clusters are still becoming Available holds every other cluster and is not judged yet",
			in: GateInput{Analysis: pause, Latest: "s2", Status: wave2(nil),
				Bindings: []GateBinding{on("a", "s2", true), on("b", "s2", false), on("c", "s1", true)}},
			want: gateView{Hold: running, Verdict: running, Status: wave2(nil)},
		},
		{
			name: "a wave whose clusters all run the snapshot, Available, is judged while every other cluster waits",
			in: GateInput{Analysis: pause, Latest: "s2", Status: wave2(&placementv1beta1.AnalysisStatus{Rounds: 1, ConsecutiveSuccesses: 1}),
				Bindings: []GateBinding{on("a", "s2", true), on("b", "s2", true), on("c", "s1", true)}},
			want: gateView{Hold: running, Judge: true, Verdict: running, Status: wave2(&placementv1beta1.AnalysisStatus{Rounds: 1, ConsecutiveSuccesses: 1})},
		},
		{
			name: "a wave that passed opens the gate: the next wave may move",
			in: GateInput{Analysis: pause, Latest: "s2", Status: wave2(&placementv1beta1.AnalysisStatus{Rounds: 2, ConsecutiveSuccesses: 2}),
				Bindings: []GateBinding{on("a", "s2", true), on("b", "s2", true), on("c", "s1", true)}},
			want: gateView{Verdict: passed, Status: wave2(&placementv1beta1.AnalysisStatus{Rounds: 2, ConsecutiveSuccesses: 2})},
		},
		{
			name: "a wave whose clusters all left the placement counts as passed",
			in: GateInput{Analysis: pause, Latest: "s2", Status: wave2(nil),
				Bindings: []GateBinding{on("a", "s2", true), on("c", "s1", true)}},
			want: gateView{Verdict: passed, Status: func() *placementv1beta1.RolloutAnalysisStatus { s := wave2(nil); s.Clusters = nil; return s }()},
		},
		{
			name: "a failed wave with onFailure Pause holds every cluster and touches none",
			in: GateInput{Analysis: pause, Latest: "s2", Status: wave2(failedRound), Snapshots: both, MaxUnavailable: 1,
				Bindings: []GateBinding{on("a", "s2", true), on("b", "s2", true), on("c", "s1", true)}},
			want: gateView{Hold: failed, Verdict: failed, Status: wave2(failedRound)},
		},
		{
			name: "a failed wave with onFailure Rollback marks the snapshot failed and holds every cluster",
			in: GateInput{Analysis: rollback, Latest: "s2", Status: wave2(failedRound), Snapshots: both, MaxUnavailable: 1,
				Bindings: []GateBinding{on("a", "s2", true), on("b", "s2", true), on("c", "s1", true)}},
			want: gateView{Hold: failed, MarkFailed: true, Verdict: rollingBack, Status: wave2(failedRound)},
		},
		{
			name: "a failed snapshot moves the clusters the rollout moved back within maxUnavailable, and never a cluster it did not move",
			in: GateInput{Analysis: rollback, Latest: "s2", FailedMark: "wave 2: failed", Status: wave2(failedRound), Snapshots: both, MaxUnavailable: 1,
				Bindings: []GateBinding{on("a", "s2", true), on("b", "s2", true), on("c", "s1", true), on("d", "s2", true)}},
			want: gateView{Hold: snapFailed, RollBack: map[string]string{"a": "s1"}, Verdict: rollingBack, Status: wave2(failedRound)},
		},
		{
			name: "a moved cluster that is not Ready on the failed snapshot moves back at once, beyond maxUnavailable",
			in: GateInput{Analysis: rollback, Latest: "s2", FailedMark: "wave 2: failed", Status: wave2(failedRound), Snapshots: both, MaxUnavailable: 1,
				Bindings: []GateBinding{on("a", "s2", true), on("b", "s2", false), on("c", "s1", true)}},
			want: gateView{Hold: snapFailed, RollBack: map[string]string{"a": "s1", "b": "s1"}, Verdict: rollingBack, Status: wave2(failedRound)},
		},
		{
			name: "a cluster still moving back uses up maxUnavailable",
			in: GateInput{Analysis: rollback, Latest: "s2", FailedMark: "wave 2: failed", Status: wave2(failedRound), Snapshots: both, MaxUnavailable: 1,
				Bindings: []GateBinding{on("a", "s1", false), on("b", "s2", true), on("c", "s1", true)}},
			want: gateView{Hold: snapFailed, Verdict: rollingBack, Status: wave2(failedRound)},
		},
		{
			name: "a moved cluster with no earlier snapshot, or whose earlier snapshot is gone, is left as it is",
			in: GateInput{Analysis: rollback, Latest: "s2", FailedMark: "wave 1: failed", Snapshots: map[string]bool{"s2": true}, MaxUnavailable: 1,
				Status: &placementv1beta1.RolloutAnalysisStatus{ResourceSnapshotName: "s2", Wave: 1, Clusters: []string{"a", "b"}, Analysis: failedRound,
					Moved: []placementv1beta1.MovedCluster{moved("a", ""), moved("b", "s1")}},
				Bindings: []GateBinding{on("a", "s2", true), on("b", "s2", true)}},
			want: gateView{Hold: snapFailed, Verdict: rolledBack, Status: &placementv1beta1.RolloutAnalysisStatus{ResourceSnapshotName: "s2", Wave: 1, Clusters: []string{"a", "b"}, Analysis: failedRound,
				Moved: []placementv1beta1.MovedCluster{moved("a", ""), moved("b", "s1")}}},
		},
		{
			name: "once every moved cluster runs its earlier snapshot, Available, the wave is rolled back",
			in: GateInput{Analysis: rollback, Latest: "s2", FailedMark: "wave 2: failed", Status: wave2(failedRound), Snapshots: both, MaxUnavailable: 1,
				Bindings: []GateBinding{on("a", "s1", true), on("b", "s1", true), on("c", "s1", true)}},
			want: gateView{Hold: snapFailed, Verdict: rolledBack, Status: wave2(failedRound)},
		},
		{
			name: "a snapshot a staged run marked failed holds the rollout with nothing to move back",
			in: GateInput{Analysis: pause, Latest: "s2", FailedMark: "ClusterStagedUpdateRun r: failed", Snapshots: both, MaxUnavailable: 1,
				Bindings: []GateBinding{on("a", "s1", true)}},
			want: gateView{Hold: snapFailed, Verdict: snapFailed, Status: &placementv1beta1.RolloutAnalysisStatus{ResourceSnapshotName: "s2"}},
		},
		{
			name: "a snapshot marked failed holds the rollout even without an analysis",
			in:   GateInput{Latest: "s2", FailedMark: "ClusterStagedUpdateRun r: failed", Bindings: []GateBinding{on("a", "s1", true)}},
			want: gateView{Hold: snapFailed},
		},
		{
			name: "a new change after a failed snapshot opens the gate again",
			in: GateInput{Analysis: rollback, Latest: "s3", Status: wave2(failedRound), Snapshots: map[string]bool{"s1": true, "s2": true, "s3": true}, MaxUnavailable: 1,
				Bindings: []GateBinding{on("a", "s1", true), on("b", "s1", true), on("c", "s1", true)}},
			want: gateView{Verdict: running, Status: &placementv1beta1.RolloutAnalysisStatus{ResourceSnapshotName: "s3"}},
		},
		{
			name: "when every cluster runs the snapshot the verdict is passed",
			in: GateInput{Analysis: pause, Latest: "s2", Status: wave2(&placementv1beta1.AnalysisStatus{Rounds: 2, ConsecutiveSuccesses: 2}),
				Bindings: []GateBinding{on("a", "s2", true), on("b", "s2", true)}},
			want: gateView{Verdict: passed, Status: wave2(&placementv1beta1.AnalysisStatus{Rounds: 2, ConsecutiveSuccesses: 2})},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, view(DecideGate(tc.in))); diff != "" {
				t.Errorf("DecideGate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAPausedWaveSaysWhichCheckFailedWithItsValues(t *testing.T) {
	g := DecideGate(GateInput{Analysis: waveAnalysis(placementv1beta1.AnalysisFailurePause), Latest: "s2",
		Status: &placementv1beta1.RolloutAnalysisStatus{ResourceSnapshotName: "s2", Wave: 2, Clusters: []string{"b"},
			Analysis: &placementv1beta1.AnalysisStatus{Rounds: 1, Failures: 1, LastFailure: "check sane is false on b (ConfigMap app/cfg: level=9)"}},
		Bindings: []GateBinding{on("b", "s2", true)}})
	for _, got := range []string{g.Verdict.Message, g.Hold.Why} {
		if !strings.Contains(got, "wave 2 (b)") || !strings.Contains(got, "check sane is false on b (ConfigMap app/cfg: level=9)") {
			t.Errorf("message %q does not name the wave and the failing check with its values", got)
		}
	}
}

func TestStartWave(t *testing.T) {
	base := &placementv1beta1.RolloutAnalysisStatus{ResourceSnapshotName: "s2", Wave: 1, Clusters: []string{"a"},
		Analysis: &placementv1beta1.AnalysisStatus{Rounds: 2, ConsecutiveSuccesses: 2}, Moved: []placementv1beta1.MovedCluster{moved("a", "s1")}}
	for _, tc := range []struct {
		name  string
		moved []placementv1beta1.MovedCluster
		want  *placementv1beta1.RolloutAnalysisStatus
	}{
		{
			name: "no moved cluster leaves the status as it is",
			want: base,
		},
		{
			name:  "moved clusters make the next wave, recorded with the snapshot each ran before",
			moved: []placementv1beta1.MovedCluster{moved("c", "s1"), moved("b", "")},
			want: &placementv1beta1.RolloutAnalysisStatus{ResourceSnapshotName: "s2", Wave: 2, Clusters: []string{"b", "c"},
				Moved: []placementv1beta1.MovedCluster{moved("a", "s1"), moved("b", ""), moved("c", "s1")}},
		},
		{
			name:  "a cluster moved again keeps the snapshot it was first recorded with",
			moved: []placementv1beta1.MovedCluster{moved("a", "s2")},
			want: &placementv1beta1.RolloutAnalysisStatus{ResourceSnapshotName: "s2", Wave: 2, Clusters: []string{"a"},
				Moved: []placementv1beta1.MovedCluster{moved("a", "s1")}},
		},
		{
			name:  "a cluster whose apply strategy alone changed joins the wave with nothing to go back to",
			moved: []placementv1beta1.MovedCluster{moved("d", "s2")},
			want: &placementv1beta1.RolloutAnalysisStatus{ResourceSnapshotName: "s2", Wave: 2, Clusters: []string{"d"},
				Moved: []placementv1beta1.MovedCluster{moved("a", "s1")}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, StartWave(base, tc.moved)); diff != "" {
				t.Errorf("StartWave (-want +got):\n%s", diff)
			}
		})
	}
}

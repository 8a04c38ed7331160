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
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/analysis"
)

// GateInput is everything the wave analysis looks at.
type GateInput struct {
	// Analysis is spec.strategy.rollingUpdate.analysis; nil when there is none.
	Analysis *placementv1beta1.Analysis
	// Latest is the placement's latest resource snapshot; FailedMark the value
	// of its AnnotationFailedAnalysis, "" when it is not marked.
	Latest     string
	FailedMark string
	// Status is status.rolloutAnalysis as recorded; nil when there is none.
	Status *placementv1beta1.RolloutAnalysisStatus
	// Bindings are the placement's bindings that are not being deleted.
	Bindings []GateBinding
	// Snapshots are the placement's resource snapshots (the masters) that
	// exist: a cluster goes back only to a snapshot that is still there.
	Snapshots map[string]bool
	// MaxUnavailable is how many clusters may be moving back at once in a
	// rollback (at least one).
	MaxUnavailable int
}

// GateBinding is what the wave analysis knows of one binding.
type GateBinding struct {
	// Name is the binding's name; Cluster its target cluster.
	Name    string
	Cluster string
	// Bound: spec.state is Bound. Snapshot is spec.resourceSnapshotName.
	Bound    bool
	Snapshot string
	// Ready: its resources are Available on its cluster (as for SelectWave).
	Ready bool
}

// Verdict is the placement's RolloutAnalysis condition.
type Verdict struct {
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// Gate is the outcome of the wave analysis.
type Gate struct {
	// Status is status.rolloutAnalysis to record; nil removes it.
	Status *placementv1beta1.RolloutAnalysisStatus
	// Hold, when not nil, is the step of every binding SelectWave would bind,
	// update or hold for the budget (as Input.Window): no cluster moves to the
	// latest snapshot now. Removals are not held by it.
	Hold *Step
	// Judge: the wave's clusters (Status.Clusters) all run the latest snapshot,
	// Available; a round of the analysis runs over them when one is due.
	Judge bool
	// MarkFailed, when not "", is what to mark the latest snapshot failed with
	// (AnnotationFailedAnalysis): the wave, the rounds and the failing check.
	MarkFailed string
	// RollBack are the bindings to move back now, by name, each to the
	// snapshot to move it to.
	RollBack map[string]string
	// Verdict is the RolloutAnalysis condition; nil removes it.
	Verdict *Verdict
}

// DecideGate decides what spec.strategy.rollingUpdate.analysis lets the rolling
// update do now. A wave is the set of clusters the rollout moves to the latest
// resource snapshot together (in one SelectWave); StartWave records it.
//
//   - No analysis and a latest snapshot that is not marked failed: the gate is
//     open and there is no status or condition.
//   - A new latest snapshot (the status is for another one, or none): the
//     status starts again for it, with no wave and no moved clusters, and the
//     gate is open.
//   - A wave that has not passed or failed holds every other cluster
//     (RolloutStarted=False, WaveAnalysisRunning). Once all its clusters run the
//     latest snapshot, Available, its rounds run (Judge); clusters that left the
//     placement drop out of it, and a wave with none left counts as passed.
//   - A wave that passed (successCount passing rounds in a row) opens the gate:
//     SelectWave moves the next wave.
//   - A wave that failed (failureLimit failing rounds) with onFailure Pause
//     holds every cluster (WaveAnalysisFailed, with the failing check and its
//     values) until the resources change; with Rollback it marks the latest
//     snapshot failed (MarkFailed) and holds every cluster.
//   - A latest snapshot marked failed (by this rollout or by a staged run)
//     holds every cluster (ResourceSnapshotFailed). When the status is for it,
//     every cluster the rollout moved to it (status.moved) goes back to the
//     snapshot it ran before, never more than MaxUnavailable moving back at
//     once (moved but not yet Ready on the earlier snapshot), in the order of
//     cluster names. A moved cluster that ran no snapshot before, whose earlier
//     snapshot is gone, or whose binding is gone or no longer Bound, is left as
//     it is and named in the verdict. A cluster the rollout never moved is
//     never touched. When none is left moving back, the verdict is
//     WaveRolledBack.
//
// Removals of clusters the placement no longer has are never held. A pure
// function.
func DecideGate(in GateInput) Gate {
	byCluster := map[string]GateBinding{}
	for _, b := range in.Bindings {
		byCluster[b.Cluster] = b
	}
	if in.FailedMark != "" {
		return rollbackGate(in, byCluster)
	}
	if in.Analysis == nil {
		return Gate{}
	}
	st := in.Status.DeepCopy()
	if st == nil || st.ResourceSnapshotName != in.Latest {
		st = &placementv1beta1.RolloutAnalysisStatus{ResourceSnapshotName: in.Latest}
	}
	g := Gate{Status: st}
	if st.Wave == 0 || len(st.Clusters) == 0 {
		g.Verdict = openVerdict(in, st)
		return g
	}
	var left []string
	for _, c := range st.Clusters {
		if b, ok := byCluster[c]; ok && b.Bound {
			left = append(left, c)
		}
	}
	st.Clusters = left
	if len(left) == 0 {
		g.Verdict = openVerdict(in, st)
		return g
	}
	wave := fmt.Sprintf("wave %d (%s)", st.Wave, strings.Join(st.Clusters, ", "))
	switch waveVerdict(in.Analysis, st.Analysis) {
	case analysis.Passed:
		g.Verdict = openVerdict(in, st)
		return g
	case analysis.Failed:
		failure := fmt.Sprintf("%s of resource snapshot %s failed its analysis after %s: %s", wave, in.Latest, counts(st.Analysis), st.Analysis.LastFailure)
		if in.Analysis.OnFailure == placementv1beta1.AnalysisFailureRollback {
			g.MarkFailed = fmt.Sprintf("wave %d: failed after %s: %s", st.Wave, counts(st.Analysis), st.Analysis.LastFailure)
			g.Hold = &Step{Action: ActionHold, Reason: placementv1beta1.ReasonWaveAnalysisFailed, Why: failure + "; rolling back"}
			g.Verdict = &Verdict{metav1.ConditionFalse, placementv1beta1.ReasonWaveRollingBack, failure + "; marking the snapshot failed to roll it back"}
			return g
		}
		g.Hold = &Step{Action: ActionHold, Reason: placementv1beta1.ReasonWaveAnalysisFailed, Why: failure}
		g.Verdict = &Verdict{metav1.ConditionFalse, placementv1beta1.ReasonWaveAnalysisFailed, failure + "; onFailure is Pause: no cluster moves until the resources change"}
		return g
	}
	var waiting []string
	for _, c := range st.Clusters {
		if b := byCluster[c]; b.Snapshot != in.Latest || !b.Ready {
			waiting = append(waiting, c)
		}
	}
	why := fmt.Sprintf("%s is being judged: %s", wave, counts(st.Analysis))
	if len(waiting) > 0 {
		why = fmt.Sprintf("%s waits for %s to run resource snapshot %s, Available, before its analysis", wave, strings.Join(waiting, ", "), in.Latest)
	} else {
		g.Judge = true
	}
	g.Hold = &Step{Action: ActionHold, Reason: placementv1beta1.ReasonWaveAnalysisRunning, Why: why}
	g.Verdict = &Verdict{metav1.ConditionUnknown, placementv1beta1.ReasonWaveAnalysisRunning, why}
	return g
}

// openVerdict is the verdict while no wave is being judged: every cluster
// runs the latest snapshot, or the next wave may move.
func openVerdict(in GateInput, st *placementv1beta1.RolloutAnalysisStatus) *Verdict {
	all := true
	for _, b := range in.Bindings {
		if b.Bound && b.Snapshot != in.Latest {
			all = false
		}
	}
	switch {
	case all:
		return &Verdict{metav1.ConditionTrue, placementv1beta1.ReasonWaveAnalysisPassed,
			fmt.Sprintf("every cluster runs resource snapshot %s; %s passed the analysis", in.Latest, waves(st.Wave))}
	case st.Wave == 0:
		return &Verdict{metav1.ConditionUnknown, placementv1beta1.ReasonWaveAnalysisRunning,
			fmt.Sprintf("the first wave of resource snapshot %s has not moved yet", in.Latest)}
	default:
		return &Verdict{metav1.ConditionTrue, placementv1beta1.ReasonWaveAnalysisPassed,
			fmt.Sprintf("wave %d of resource snapshot %s passed the analysis; the next wave moves", st.Wave, in.Latest)}
	}
}

// rollbackGate is DecideGate for a latest snapshot marked failed.
func rollbackGate(in GateInput, byCluster map[string]GateBinding) Gate {
	hold := &Step{Action: ActionHold, Reason: placementv1beta1.ReasonRolloutResourceSnapshotFailed,
		Why: fmt.Sprintf("resource snapshot %s is marked %s (%s): a change of the resources makes a new snapshot to roll out", in.Latest, placementv1beta1.AnnotationFailedAnalysis, in.FailedMark)}
	st := in.Status
	if st == nil || st.ResourceSnapshotName != in.Latest {
		g := Gate{Hold: hold}
		if in.Analysis != nil {
			g.Status = &placementv1beta1.RolloutAnalysisStatus{ResourceSnapshotName: in.Latest}
			g.Verdict = &Verdict{metav1.ConditionFalse, placementv1beta1.ReasonRolloutResourceSnapshotFailed, hold.Why}
		}
		return g
	}
	g := Gate{Status: st.DeepCopy(), Hold: hold, RollBack: map[string]string{}}
	moved := append([]placementv1beta1.MovedCluster(nil), st.Moved...)
	sort.Slice(moved, func(i, j int) bool { return moved[i].ClusterName < moved[j].ClusterName })
	var back, movingBack, left, start []string
	var candidates []GateBinding
	prev := map[string]string{}
	for _, m := range moved {
		b, ok := byCluster[m.ClusterName]
		switch {
		case !ok || !b.Bound:
			left = append(left, m.ClusterName+" (it left the placement)")
		case m.PreviousResourceSnapshotName == "":
			left = append(left, m.ClusterName+" (it ran no snapshot before)")
		case b.Snapshot == m.PreviousResourceSnapshotName && b.Ready:
			back = append(back, m.ClusterName)
		case b.Snapshot == m.PreviousResourceSnapshotName:
			movingBack = append(movingBack, m.ClusterName)
		case !in.Snapshots[m.PreviousResourceSnapshotName]:
			left = append(left, fmt.Sprintf("%s (its earlier snapshot %s is gone)", m.ClusterName, m.PreviousResourceSnapshotName))
		default:
			candidates = append(candidates, b)
			prev[b.Name] = m.PreviousResourceSnapshotName
		}
	}
	// Clusters that are not Ready go first: moving them makes nothing less
	// available.
	sort.SliceStable(candidates, func(i, j int) bool { return !candidates[i].Ready && candidates[j].Ready })
	room := max(in.MaxUnavailable, 1) - len(movingBack)
	for _, b := range candidates {
		if !b.Ready || room > 0 {
			g.RollBack[b.Name] = prev[b.Name]
			start = append(start, b.Cluster)
			if b.Ready {
				room--
			}
		}
	}
	sort.Strings(start)
	msg := fmt.Sprintf("resource snapshot %s failed its analysis (%s)", in.Latest, in.FailedMark)
	if len(back) > 0 {
		msg += "; back on their earlier snapshot: " + strings.Join(back, ", ")
	}
	if len(left) > 0 {
		msg += "; left as they are: " + strings.Join(left, ", ")
	}
	if pending := len(movingBack) + len(candidates); pending > 0 {
		moving := append(append([]string(nil), movingBack...), start...)
		sort.Strings(moving)
		msg += fmt.Sprintf("; %s moving back (maxUnavailable %d): %s", plural(len(moving), "cluster"), max(in.MaxUnavailable, 1), strings.Join(moving, ", "))
		if waiting := pending - len(moving); waiting > 0 {
			msg += fmt.Sprintf("; %d more to move back", waiting)
		}
		g.Verdict = &Verdict{metav1.ConditionFalse, placementv1beta1.ReasonWaveRollingBack, msg}
		return g
	}
	g.Verdict = &Verdict{metav1.ConditionFalse, placementv1beta1.ReasonWaveRolledBack, msg}
	return g
}

// StartWave records a new wave: the clusters SelectWave just moved to the
// latest snapshot, each with the snapshot it ran before ("" when it ran none).
// The wave's number goes up by one and its analysis starts from no round; a
// cluster keeps the earlier snapshot it was first recorded with (a cluster
// moved again ran the latest snapshot already). A cluster whose earlier
// snapshot is the latest one (only its apply strategy or overrides changed)
// joins the wave but is not recorded as moved: there is nothing to go back
// to. No clusters leave the status as it is. A pure function.
func StartWave(st *placementv1beta1.RolloutAnalysisStatus, moved []placementv1beta1.MovedCluster) *placementv1beta1.RolloutAnalysisStatus {
	if st == nil || len(moved) == 0 {
		return st
	}
	out := st.DeepCopy()
	out.Wave++
	out.Clusters = nil
	out.Analysis = nil
	known := map[string]bool{}
	for _, m := range out.Moved {
		known[m.ClusterName] = true
	}
	for _, m := range moved {
		out.Clusters = append(out.Clusters, m.ClusterName)
		if known[m.ClusterName] || m.PreviousResourceSnapshotName == out.ResourceSnapshotName {
			continue
		}
		known[m.ClusterName] = true
		out.Moved = append(out.Moved, m)
	}
	sort.Strings(out.Clusters)
	sort.Slice(out.Moved, func(i, j int) bool { return out.Moved[i].ClusterName < out.Moved[j].ClusterName })
	return out
}

// waveVerdict reads the verdict on a wave from its counts: failed once
// failureLimit rounds failed, else passed once successCount passed in a row.
func waveVerdict(spec *placementv1beta1.Analysis, st *placementv1beta1.AnalysisStatus) analysis.Phase {
	switch {
	case st == nil:
		return analysis.Running
	case st.Failures >= analysis.AtLeastOne(spec.FailureLimit):
		return analysis.Failed
	case st.ConsecutiveSuccesses >= analysis.AtLeastOne(spec.SuccessCount):
		return analysis.Passed
	default:
		return analysis.Running
	}
}

// counts says how far a wave's analysis got.
func counts(st *placementv1beta1.AnalysisStatus) string {
	if st == nil || st.Rounds == 0 {
		return "no round ran yet"
	}
	return fmt.Sprintf("%s, %d passing in a row, %d failing", plural(int(st.Rounds), "round"), st.ConsecutiveSuccesses, st.Failures)
}

func waves(n int32) string {
	if n == 0 {
		return "no wave"
	}
	if n == 1 {
		return "1 wave"
	}
	return fmt.Sprintf("every one of %d waves", n)
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

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
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/analysis"
	"github.com/flotilla-io/flotilla/hub/overrides"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// staleStatusRetry is how soon a wave's analysis looks again at a placement
// status that does not show the wave's clusters on the latest snapshot yet.
const staleStatusRetry = time.Second

// analysisOf returns the placement's rolling update analysis, or nil.
func analysisOf(p placementv1beta1.PlacementObj) *placementv1beta1.Analysis {
	if ru := p.GetPlacementSpec().Strategy.RollingUpdate; ru != nil {
		return ru.Analysis
	}
	return nil
}

// loadSnapshots lists the placement's resource snapshots (the masters), for
// the targets of a rollback.
func (r *Reconciler) loadSnapshots(ctx context.Context, s *scope) error {
	if analysisOf(s.placement) == nil && s.latest.GetAnnotations()[placementv1beta1.AnnotationFailedAnalysis] == "" {
		return nil
	}
	all, err := pipeline.ListResourceSnapshots(ctx, r.Client, s.key, nil)
	if err != nil {
		return err
	}
	s.snapshots = map[string]placementv1beta1.ResourceSnapshotObj{}
	for _, snap := range all {
		if pipeline.IsMaster(snap) {
			s.snapshots[snap.GetName()] = snap
		}
	}
	return nil
}

// gate decides what the wave analysis lets the rollout do (DecideGate).
func (r *Reconciler) gate(s *scope) {
	crp := s.placement
	in := GateInput{
		Analysis:   analysisOf(crp),
		Latest:     s.latest.GetName(),
		FailedMark: s.latest.GetAnnotations()[placementv1beta1.AnnotationFailedAnalysis],
		Status:     crp.GetPlacementStatus().RolloutAnalysis,
		Snapshots:  map[string]bool{},
	}
	bound := 0
	for _, b := range s.bindings {
		spec := b.GetBindingSpec()
		if spec.State == placementv1beta1.BindingStateBound {
			bound++
		}
		in.Bindings = append(in.Bindings, GateBinding{Name: b.GetName(), Cluster: spec.TargetCluster,
			Bound: spec.State == placementv1beta1.BindingStateBound, Snapshot: spec.ResourceSnapshotName, Ready: s.ready[b.GetName()]})
	}
	for name := range s.snapshots {
		in.Snapshots[name] = true
	}
	in.MaxUnavailable, _ = Limits(crp.GetPlacementSpec().Strategy.RollingUpdate, bound)
	g := DecideGate(in)
	if in.Analysis != nil && in.FailedMark == "" {
		// A check that does not compile holds the rollout, saying why, rather
		// than failing a wave (which could roll it back).
		if _, err := r.checks.Get(string(crp.GetUID()), int(crp.GetGeneration()), in.Analysis.Checks); err != nil {
			why := "spec.strategy.rollingUpdate.analysis cannot run: " + err.Error()
			g.Hold = &Step{Action: ActionHold, Reason: placementv1beta1.ReasonWaveAnalysisFailed, Why: why}
			g.Verdict = &Verdict{metav1.ConditionFalse, placementv1beta1.ReasonWaveAnalysisFailed, why + "; no cluster moves until it is fixed"}
			g.Judge, g.MarkFailed = false, ""
		}
	}
	s.gate = &g
}

// judge runs a round of the wave's analysis when the gate asks for one and a
// round is due, and records it in the gate's status.
func (r *Reconciler) judge(ctx context.Context, s *scope) error {
	g, spec := s.gate, analysisOf(s.placement)
	if g == nil || !g.Judge || spec == nil {
		return nil
	}
	st := g.Status
	now := r.now()
	if st.Analysis != nil {
		if d := analysis.NextRoundIn(st.Analysis.LastRoundTime, spec.Interval.Duration, now); d > 0 {
			s.requeueIn(d)
			return nil
		}
	}
	inputs, stale, err := r.waveInputs(ctx, s, st.Clusters)
	if err != nil {
		return err
	}
	if len(stale) > 0 {
		// The placement's status lags behind the bindings: a round over it
		// would judge the old snapshot.
		s.requeueIn(staleStatusRetry)
		return nil
	}
	checks, err := r.checks.Get(string(s.placement.GetUID()), int(s.placement.GetGeneration()), spec.Checks)
	if err != nil {
		// gate held the rollout for it; never here.
		return err
	}
	results, err := analysis.Run(ctx, checks, analysis.Round{Clusters: inputs, Prometheus: r.Prometheus, Now: now})
	if err != nil {
		return err
	}
	if st.Analysis == nil {
		st.Analysis = &placementv1beta1.AnalysisStatus{}
		r.event(s, corev1.EventTypeNormal, placementv1beta1.EventWaveAnalysisStarted, "Judge",
			"wave %d (%v) runs resource snapshot %s, Available: its analysis starts", st.Wave, st.Clusters, st.ResourceSnapshotName)
	}
	next, phase := analysis.JudgeRound(spec, *st.Analysis, results, metav1.NewTime(now))
	*st.Analysis = next
	log.FromContext(ctx).V(1).Info("judged a wave", "wave", st.Wave, "clusters", st.Clusters, "verdict", phase.String(), "rounds", next.Rounds)
	switch phase {
	case analysis.Passed:
		r.event(s, corev1.EventTypeNormal, placementv1beta1.EventWaveAnalysisPassed, "Judge",
			"wave %d (%v) of resource snapshot %s passed its analysis after %s", st.Wave, st.Clusters, st.ResourceSnapshotName, counts(&next))
	case analysis.Failed:
		r.event(s, corev1.EventTypeWarning, placementv1beta1.EventWaveAnalysisFailed, "Judge",
			"wave %d (%v) of resource snapshot %s failed its analysis (onFailure %s): %s", st.Wave, st.Clusters, st.ResourceSnapshotName, spec.OnFailure, next.LastFailure)
	default:
		s.requeueIn(spec.Interval.Duration)
		return nil
	}
	// The verdict changes what the gate lets through: decide again.
	s.again = true
	return nil
}

// waveInputs returns what the checks see of the wave's clusters: their entries
// of the placement's status.placementStatuses and their labels. The clusters
// whose entry does not show the latest resource index, Available, yet are in
// stale.
func (r *Reconciler) waveInputs(ctx context.Context, s *scope, clusters []string) ([]analysis.Cluster, []string, error) {
	index := s.latest.GetLabels()[placementv1beta1.LabelResourceIndex]
	byCluster := map[string]*placementv1beta1.PerClusterPlacementStatus{}
	pss := s.placement.GetPlacementStatus().PlacementStatuses
	for i := range pss {
		byCluster[pss[i].ClusterName] = &pss[i]
	}
	var inputs []analysis.Cluster
	var stale []string
	for _, c := range clusters {
		pcs := byCluster[c]
		if pcs == nil || pcs.ObservedResourceIndex != index ||
			!(conditions.IsTrue(pcs.Conditions, placementv1beta1.ConditionAvailable) || conditions.IsTrue(pcs.Conditions, placementv1beta1.ConditionDiffReported)) {
			stale = append(stale, c)
			continue
		}
		mc := &clusterv1beta1.MemberCluster{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: c}, mc); client.IgnoreNotFound(err) != nil {
			return nil, nil, fmt.Errorf("failed to get MemberCluster %s: %w", c, err)
		}
		inputs = append(inputs, analysis.Cluster{Status: *pcs, Labels: mc.Labels})
	}
	return inputs, stale, nil
}

// markFailed annotates the latest resource snapshot with
// AnnotationFailedAnalysis when the gate says so: a merge patch of the one
// annotation, nothing written when it is there. The watch on snapshots brings
// the rollback.
func (r *Reconciler) markFailed(ctx context.Context, s *scope) error {
	if s.gate == nil || s.gate.MarkFailed == "" {
		return nil
	}
	if _, ok := s.latest.GetAnnotations()[placementv1beta1.AnnotationFailedAnalysis]; ok {
		return nil
	}
	value := analysis.Truncate(fmt.Sprintf("%s %s, %s", s.key.Kind(), s.key, s.gate.MarkFailed), analysis.MaxFailureMessage)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{placementv1beta1.AnnotationFailedAnalysis: value}}})
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, s.latest, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(pipeline.ManagerRollout)); err != nil {
		return fmt.Errorf("failed to mark resource snapshot %s failed: %w", s.latest.GetName(), err)
	}
	r.event(s, corev1.EventTypeWarning, placementv1beta1.EventResourceSnapshotMarkedFailed, "Rollback",
		"resource snapshot %s is marked %s: the clusters the rolling update moved to it go back, and it is not rolled out again until the resources change",
		s.latest.GetName(), placementv1beta1.AnnotationFailedAnalysis)
	s.again = true
	return nil
}

// recordWave records the clusters the plan moves to the latest snapshot as a
// new wave (StartWave), and writes status.rolloutAnalysis and the
// RolloutAnalysis condition, before any binding moves: a rollback must know
// what each moved cluster ran before.
func (r *Reconciler) recordWave(ctx context.Context, s *scope) error {
	if s.gate == nil {
		return nil
	}
	st := s.gate.Status
	if st != nil {
		var moved []placementv1beta1.MovedCluster
		for _, b := range s.bindings {
			if a := s.steps[b.GetName()].Action; a == ActionBind || a == ActionUpdate {
				spec := b.GetBindingSpec()
				prev := ""
				if spec.State == placementv1beta1.BindingStateBound {
					prev = spec.ResourceSnapshotName
				}
				moved = append(moved, placementv1beta1.MovedCluster{ClusterName: spec.TargetCluster, PreviousResourceSnapshotName: prev})
			}
		}
		sort.Slice(moved, func(i, j int) bool { return moved[i].ClusterName < moved[j].ClusterName })
		if len(moved) > 0 {
			st = StartWave(st, moved)
			s.gate.Verdict = &Verdict{metav1.ConditionUnknown, placementv1beta1.ReasonWaveAnalysisRunning,
				fmt.Sprintf("wave %d (%v) is moving to resource snapshot %s; its analysis runs once it is Available", st.Wave, st.Clusters, st.ResourceSnapshotName)}
		}
	}
	before := conditions.Get(s.placement.GetPlacementStatus().Conditions, s.placement.PlacementConditionType(placementv1beta1.ConditionRolloutAnalysis))
	if err := r.applyAnalysisStatus(ctx, s, st, s.gate.Verdict); err != nil {
		return err
	}
	if v := s.gate.Verdict; v != nil && v.Reason == placementv1beta1.ReasonWaveRolledBack && (before == nil || before.Reason != v.Reason) {
		r.event(s, corev1.EventTypeNormal, placementv1beta1.EventWaveRolledBack, "Rollback", "%s", v.Message)
	}
	return nil
}

// applyAnalysisStatus writes status.rolloutAnalysis and the RolloutAnalysis
// condition, the rollout controller's part of the placement's status, with
// server-side apply, on the condition that the placement is as read; nil
// removes them. Nothing is written when the placement shows them already.
func (r *Reconciler) applyAnalysisStatus(ctx context.Context, s *scope, st *placementv1beta1.RolloutAnalysisStatus, v *Verdict) error {
	p := s.placement
	typ := p.PlacementConditionType(placementv1beta1.ConditionRolloutAnalysis)
	have := p.GetPlacementStatus()
	existing := conditions.Get(have.Conditions, typ)
	sameCondition := (v == nil && existing == nil) ||
		(v != nil && existing != nil && existing.Status == v.Status && existing.Reason == v.Reason && existing.Message == v.Message && existing.ObservedGeneration == p.GetGeneration())
	if sameCondition && equality.Semantic.DeepEqual(have.RolloutAnalysis, st) {
		return nil
	}
	own := pipeline.OwnConditions(have.Conditions, typ)
	if v != nil {
		conditions.Set(&own, typ, v.Status, v.Reason, v.Message, p.GetGeneration())
	} else {
		own = []metav1.Condition{}
	}
	// The resourceVersion makes the apply fail on a placement read from a
	// stale cache: a wave recorded since would otherwise be written over.
	meta := map[string]any{"name": p.GetName(), "resourceVersion": p.GetResourceVersion()}
	if p.GetNamespace() != "" {
		meta["namespace"] = p.GetNamespace()
	}
	status := map[string]any{"conditions": own}
	if st != nil {
		status["rolloutAnalysis"] = st
	}
	data, err := json.Marshal(map[string]any{
		"apiVersion": placementv1beta1.GroupVersion.String(),
		"kind":       s.key.Kind(),
		"metadata":   meta,
		"status":     status,
	})
	if err != nil {
		return fmt.Errorf("failed to encode the rollout analysis status: %w", err)
	}
	if err := r.Client.Status().Patch(ctx, p, client.RawPatch(types.ApplyPatchType, data), client.FieldOwner(pipeline.ManagerRollout), client.ForceOwnership); err != nil {
		return fmt.Errorf("failed to apply the rollout analysis status: %w", err)
	}
	return nil
}

// rollBack moves the bindings the gate returns to their earlier snapshots,
// with the overrides that applied to those snapshots.
func (r *Reconciler) rollBack(ctx context.Context, s *scope) error {
	if s.gate == nil || len(s.gate.RollBack) == 0 {
		return nil
	}
	planners := map[string]*overrides.Planner{}
	for _, b := range s.bindings {
		prev, ok := s.gate.RollBack[b.GetName()]
		if !ok {
			continue
		}
		snap := s.snapshots[prev]
		if snap == nil {
			continue
		}
		planner := planners[prev]
		if planner == nil {
			var err error
			if planner, err = overrides.NewPlanner(ctx, r.Client, s.key, snap); err != nil {
				return fmt.Errorf("failed to read the overrides of resource snapshot %s: %w", prev, err)
			}
			planners[prev] = planner
		}
		refs, err := planner.For(ctx, b.GetBindingSpec().TargetCluster)
		if err != nil {
			return err
		}
		if err := r.moveTo(ctx, s.placement, b, snap, refs, false); err != nil {
			return err
		}
		log.FromContext(ctx).Info("rolled a binding back", "binding", b.GetName(), "cluster", b.GetBindingSpec().TargetCluster, "snapshot", prev)
	}
	return nil
}

// event records an Event on the placement, when there is a recorder.
func (r *Reconciler) event(s *scope, eventType, reason, action, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(s.placement, nil, eventType, reason, action, format, args...)
	}
}

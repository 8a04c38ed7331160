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
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/analysis"
	"github.com/flotilla-io/flotilla/hub/overrides"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// A rollback returns every cluster the run moved (Started) to the resource
// snapshot it ran when the run was initialized (its previousResourceSnapshotName),
// stage by stage from the failed stage back to the first, at most the stage's
// maxConcurrency clusters at a time. Stages after the failed one were never
// started, so nothing there moves. A cluster that ran no snapshot before the run
// (the run was its first rollout), whose earlier snapshot was deleted since, or
// that left the placement, stays as it is, and its RolledBack condition says so.

// rollbackPlan is what to do with a stage's clusters now, in a rollback.
type rollbackPlan struct {
	// rolledBack are clusters moving back that now run their earlier snapshot,
	// Available.
	rolledBack []string
	// left are clusters that stay as they are, with why.
	left []leftCluster
	// start are clusters to move back now.
	start []string
	// moving are the clusters moving back after this plan (started before and
	// not yet back, and start), in stage order.
	moving []string
	// done: no cluster of the stage is left to move back after this plan.
	done bool
}

// leftCluster is a cluster a rollback leaves as it is.
type leftCluster struct {
	name, why string
}

// planRollback decides, from a stage's clusters and their bindings, which
// clusters are back, which are left and which move back now, so that at most
// limit clusters are moving back at once. Only clusters the run started move
// back; a cluster with no earlier snapshot, or whose binding is gone, is left.
// A pure function.
func planRollback(clusters []placementv1beta1.ClusterUpdatingStatus, views map[string]bindingView, limit int) rollbackPlan {
	var p rollbackPlan
	var waiting []string
	inFlight := 0
	for i := range clusters {
		c := &clusters[i]
		rb := conditions.Get(c.Conditions, placementv1beta1.ConditionClusterRolledBack)
		if !clusterStarted(c) || (rb != nil && rb.Reason != placementv1beta1.ReasonClusterRollingBack) {
			continue
		}
		v := views[c.ClusterName]
		prev := c.PreviousResourceSnapshotName
		switch {
		case prev == "":
			p.left = append(p.left, leftCluster{c.ClusterName, "the cluster ran no resource snapshot before the run, so it keeps the run's"})
		case !v.active:
			p.left = append(p.left, leftCluster{c.ClusterName, "the placement no longer has the cluster"})
		case rb == nil:
			waiting = append(waiting, c.ClusterName)
		case v.snapshot == prev && v.available:
			p.rolledBack = append(p.rolledBack, c.ClusterName)
		default:
			inFlight++
			p.moving = append(p.moving, c.ClusterName)
		}
	}
	for _, name := range waiting {
		if inFlight >= limit {
			break
		}
		inFlight++
		p.start = append(p.start, name)
		p.moving = append(p.moving, name)
	}
	p.done = len(p.moving) == 0 && len(waiting) == 0
	return p
}

// rollBack carries the rollback of a run whose analysis after stage failed
// failed, for why, as far as it goes now; when every stage is back, the run ends
// (Succeeded False, RolledBack).
func (r *Reconciler) rollBack(ctx context.Context, s *scope, failed int, why string) error {
	run := s.run
	gen := run.Generation
	failedStage := &run.Status.StagesStatus[failed]
	if err := r.markSnapshotFailed(ctx, s, failedStage.StageName, why); err != nil {
		return err
	}
	for i := failed; i >= 0; i-- {
		st := &run.Status.StagesStatus[i]
		limit := maxConcurrency(r.stageConfig(run, i).MaxConcurrency, len(st.Clusters))
		plan, err := r.rollBackClusters(ctx, s, st, limit, why)
		if err != nil {
			return err
		}
		if !plan.done {
			c := rollingBack(failedStage.StageName, why, st.StageName, plan.moving, limit)
			set(&failedStage.Conditions, placementv1beta1.ConditionUpdateRunProgressing, c, gen)
			set(&run.Status.Conditions, placementv1beta1.ConditionUpdateRunProgressing, c, gen)
			return nil
		}
	}
	c := rolledBack(run.Status.StagesStatus[:failed+1], failedStage.StageName, why)
	failedStage.EndTime = s.now.DeepCopy()
	set(&failedStage.Conditions, placementv1beta1.ConditionUpdateRunSucceeded, c, gen)
	set(&failedStage.Conditions, placementv1beta1.ConditionUpdateRunProgressing, finished("the stage was rolled back"), gen)
	set(&run.Status.Conditions, placementv1beta1.ConditionUpdateRunSucceeded, c, gen)
	set(&run.Status.Conditions, placementv1beta1.ConditionUpdateRunProgressing, finished("the run was rolled back"), gen)
	s.announce(corev1.EventTypeWarning, c.reason, "%s", c.message)
	s.result = metricResultRolledBack
	r.checks.Forget(string(run.UID))
	return nil
}

// rollBackClusters records the stage's clusters that are back or left and moves
// the next ones back, within limit, until nothing changes. It returns the last
// plan.
func (r *Reconciler) rollBackClusters(ctx context.Context, s *scope, st *placementv1beta1.StageUpdatingStatus, limit int, why string) (rollbackPlan, error) {
	run := s.run
	gen := run.Generation
	byName := make(map[string]*placementv1beta1.ClusterUpdatingStatus, len(st.Clusters))
	for i := range st.Clusters {
		byName[st.Clusters[i].ClusterName] = &st.Clusters[i]
	}
	planners := map[string]*overrides.Planner{}
	for {
		views := make(map[string]bindingView, len(st.Clusters))
		for _, c := range st.Clusters {
			views[c.ClusterName] = viewOf(s.bindings[c.ClusterName])
		}
		plan := planRollback(st.Clusters, views, limit)
		changed := len(plan.rolledBack)+len(plan.left)+len(plan.start) > 0
		for _, name := range plan.rolledBack {
			c := byName[name]
			set(&c.Conditions, placementv1beta1.ConditionClusterRolledBack, clusterRolledBack(c.PreviousResourceSnapshotName, s.indexOf[c.PreviousResourceSnapshotName]), gen)
		}
		for _, l := range plan.left {
			set(&byName[l.name].Conditions, placementv1beta1.ConditionClusterRolledBack, clusterNotRolledBack(l.why), gen)
			s.announce(corev1.EventTypeWarning, placementv1beta1.ReasonClusterNotRolledBack, "stage %s: %s is not rolled back: %s", st.StageName, l.name, l.why)
		}
		starting := map[string]bool{}
		for _, name := range plan.start {
			starting[name] = true
		}
		for _, name := range plan.moving {
			c, b := byName[name], s.bindings[name]
			prev := c.PreviousResourceSnapshotName
			planner, ok := planners[prev]
			if !ok {
				snap := &placementv1beta1.ClusterResourceSnapshot{}
				err := r.Client.Get(ctx, types.NamespacedName{Name: prev}, snap)
				switch {
				case apierrors.IsNotFound(err):
				case err != nil:
					return plan, fmt.Errorf("failed to get resource snapshot %s: %w", prev, err)
				default:
					if planner, err = overrides.NewPlanner(ctx, r.Client, pipeline.PlacementKey{Name: s.placement.Name}, snap); err != nil {
						return plan, fmt.Errorf("failed to read the overrides of resource snapshot %s: %w", prev, err)
					}
				}
				planners[prev] = planner
			}
			if planner == nil {
				why := fmt.Sprintf("resource snapshot %s, which the cluster ran before the run, was deleted", prev)
				set(&c.Conditions, placementv1beta1.ConditionClusterRolledBack, clusterNotRolledBack(why), gen)
				s.announce(corev1.EventTypeWarning, placementv1beta1.ReasonClusterNotRolledBack, "stage %s: %s is not rolled back: %s", st.StageName, name, why)
				changed = true
				continue
			}
			refs, err := planner.For(ctx, name)
			if err != nil {
				return plan, fmt.Errorf("failed to find the overrides of cluster %s: %w", name, err)
			}
			if err := moveBinding(ctx, r.Client, b, prev, s.placement.Spec.Strategy.ApplyStrategy, refs); err != nil {
				return plan, err
			}
			if err := applyRolloutStarted(ctx, r.Client, b, bindingRolledBack(run.Name, prev, s.indexOf[prev], why), false); err != nil {
				return plan, err
			}
			if starting[name] {
				set(&c.Conditions, placementv1beta1.ConditionClusterRolledBack, clusterRollingBack(prev, s.indexOf[prev]), gen)
			}
		}
		if !changed {
			return plan, nil
		}
	}
}

// markSnapshotFailed annotates the run's resource snapshot (the first of its set)
// with AnnotationFailedAnalysis, so that no run takes it again until a user
// removes the annotation. A merge patch of the one annotation; nothing is written
// when it is there.
func (r *Reconciler) markSnapshotFailed(ctx context.Context, s *scope, stage, why string) error {
	if _, ok := s.target.Annotations[placementv1beta1.AnnotationFailedAnalysis]; ok {
		return nil
	}
	value := analysis.Truncate(fmt.Sprintf("ClusterStagedUpdateRun %s, stage %s: %s", s.run.Name, stage, why), analysis.MaxFailureMessage)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{placementv1beta1.AnnotationFailedAnalysis: value}}})
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, s.target, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(pipeline.ManagerUpdateRun)); err != nil {
		return fmt.Errorf("failed to mark resource snapshot %s failed: %w", s.target.Name, err)
	}
	s.announce(corev1.EventTypeWarning, "ResourceSnapshotMarkedFailed", "resource snapshot %s (index %s) is marked %s: no run takes it again until the annotation is removed",
		s.target.Name, s.run.Spec.ResourceSnapshotIndex, placementv1beta1.AnnotationFailedAnalysis)
	return nil
}

// analysisFailure is an analysis that failed: what to do, and why.
type analysisFailure struct {
	// rollback: onFailure is Rollback (else Pause).
	rollback bool
	// message names the check and its values.
	message string
}

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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// joiner is where a run takes in a cluster that joined its placement.
type joiner struct {
	cluster string
	// stage is the index of the stage that updates it; -1: none (it goes to
	// unselectedClusters).
	stage int
	// matched is the name of the stage its labels match when the run had
	// finished it already (the cluster updates in stage instead); "" otherwise.
	matched string
}

// placeJoiners decides where a run takes in the clusters its placement gained
// after the run was initialized (joined: the placement's clusters now, with
// their labels). The rules:
//
//   - A cluster in a stage's list or in unselectedClusters is not a joiner
//     (nor is one that left and came back: its entry stays as the run left it).
//   - A joiner belongs to the first stage whose labelSelector matches it, as
//     at initialization.
//   - If the run has not finished that stage, the joiner is added to it and
//     updates when the stage reaches it (at the end of the stage's order,
//     joiners by name).
//   - If the run has finished that stage, the run has passed the point where
//     the cluster would have moved: it is added to the stage the run is in
//     (the first not finished), so it gets the run's snapshot now, and says
//     which stage it matched.
//   - A joiner no stage matches goes to unselectedClusters, as at
//     initialization: the run leaves it as it is.
//
// Nothing here fails the run. A run whose analysis failed (rolling back, or
// paused) takes no cluster in: it moves none to its snapshot. A cluster that
// leaves during the run is handled where the stage updates its clusters (the
// run leaves it, with an Event).
func placeJoiners(cfgs []placementv1beta1.StageConfig, stages []placementv1beta1.StageUpdatingStatus, unselected []string, clusters []memberCluster) ([]joiner, error) {
	known := map[string]bool{}
	for _, st := range stages {
		for _, c := range st.Clusters {
			known[c.ClusterName] = true
		}
	}
	for _, name := range unselected {
		known[name] = true
	}
	current := -1
	for i := range stages {
		if !conditions.IsTrue(stages[i].Conditions, placementv1beta1.ConditionUpdateRunSucceeded) {
			current = i
			break
		}
	}
	sorted := append([]memberCluster(nil), clusters...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	var out []joiner
	for _, c := range sorted {
		if known[c.name] {
			continue
		}
		j := joiner{cluster: c.name, stage: -1}
		for i, cfg := range cfgs {
			sel, err := metav1.LabelSelectorAsSelector(cfg.LabelSelector)
			if err != nil {
				return nil, fmt.Errorf("stage %s has an invalid labelSelector: %w", cfg.Name, err)
			}
			if sel.Matches(labels.Set(c.labels)) {
				j.stage = i
				break
			}
		}
		if j.stage >= 0 && current >= 0 && j.stage < current {
			j.matched, j.stage = cfgs[j.stage].Name, current
		}
		if j.stage >= 0 && current < 0 {
			continue // every stage finished: the run is over
		}
		out = append(out, j)
	}
	return out, nil
}

// takeInJoiners adds the clusters that joined the placement during the run to
// its stages (placeJoiners), pinning their overrides and recording what they
// run now, as initialization does for the others.
func (r *Reconciler) takeInJoiners(ctx context.Context, s *scope) error {
	run := s.run
	if !isInitialized(run) || run.Status.StagedUpdateStrategySnapshot == nil {
		return nil
	}
	if p := conditions.Get(run.Status.Conditions, placementv1beta1.ConditionUpdateRunProgressing); p != nil &&
		(p.Reason == placementv1beta1.ReasonUpdateRunRollingBack || p.Reason == placementv1beta1.ReasonUpdateRunAnalysisPaused) {
		// A failed analysis: no cluster is moved to the run's snapshot now.
		return nil
	}
	var clusters []memberCluster
	for name := range s.bindings {
		mc := &clusterv1beta1.MemberCluster{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: name}, mc); client.IgnoreNotFound(err) != nil {
			return err
		}
		clusters = append(clusters, memberCluster{name: name, labels: mc.Labels})
	}
	joiners, err := placeJoiners(run.Status.StagedUpdateStrategySnapshot.Stages, run.Status.StagesStatus, run.Status.UnselectedClusters, clusters)
	if err != nil || len(joiners) == 0 {
		return err
	}
	added := make([]placementv1beta1.StageUpdatingStatus, len(run.Status.StagesStatus))
	for _, j := range joiners {
		if j.stage < 0 {
			run.Status.UnselectedClusters = append(run.Status.UnselectedClusters, j.cluster)
			sort.Strings(run.Status.UnselectedClusters)
			s.announce(corev1.EventTypeNormal, placementv1beta1.EventClusterJoinedRun,
				"%s joined the placement during the run; no stage matches it, so the run leaves it as it is", j.cluster)
			continue
		}
		c := placementv1beta1.ClusterUpdatingStatus{ClusterName: j.cluster,
			Joined: &placementv1beta1.ClusterJoinedRun{Time: s.now, MatchedStage: j.matched}}
		added[j.stage].Clusters = append(added[j.stage].Clusters, c)
		name := run.Status.StagesStatus[j.stage].StageName
		if j.matched != "" {
			s.announce(corev1.EventTypeNormal, placementv1beta1.EventClusterJoinedRun,
				"%s joined the placement during the run; it matches stage %s, which the run has finished, so it updates in stage %s", j.cluster, j.matched, name)
		} else {
			s.announce(corev1.EventTypeNormal, placementv1beta1.EventClusterJoinedRun,
				"%s joined the placement during the run; it updates in stage %s", j.cluster, name)
		}
	}
	recordPreviousSnapshots(added, s.bindings)
	if err := pinOverrides(ctx, r.Client, s.placement.Name, s.target, added); err != nil {
		return err
	}
	for i := range added {
		run.Status.StagesStatus[i].Clusters = append(run.Status.StagesStatus[i].Clusters, added[i].Clusters...)
	}
	return nil
}

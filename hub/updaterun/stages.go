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
	"fmt"
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// memberCluster is what stage computation knows of a cluster: its name and labels.
type memberCluster struct {
	name   string
	labels map[string]string
}

// computeStages divides clusters into the strategy's stages: each cluster goes to
// the first stage whose labelSelector matches it, and within a stage clusters are
// ordered by the stage's sortingLabelKey (see sortClusters). It returns the stages'
// statuses (clusters and after-stage tasks, nothing started) and the clusters no
// stage matches, sorted by name. A selector that cannot be parsed is an error.
func computeStages(spec *placementv1beta1.StagedUpdateStrategySpec, clusters []memberCluster) ([]placementv1beta1.StageUpdatingStatus, []string, error) {
	taken := make(map[string]bool, len(clusters))
	stages := make([]placementv1beta1.StageUpdatingStatus, 0, len(spec.Stages))
	for _, cfg := range spec.Stages {
		sel, err := metav1.LabelSelectorAsSelector(cfg.LabelSelector)
		if err != nil {
			return nil, nil, fmt.Errorf("stage %s has an invalid labelSelector: %w", cfg.Name, err)
		}
		var members []memberCluster
		for _, c := range clusters {
			if !taken[c.name] && sel.Matches(labels.Set(c.labels)) {
				taken[c.name] = true
				members = append(members, c)
			}
		}
		key := ""
		if cfg.SortingLabelKey != nil {
			key = *cfg.SortingLabelKey
		}
		sortClusters(members, key)
		st := placementv1beta1.StageUpdatingStatus{StageName: cfg.Name}
		for _, m := range members {
			st.Clusters = append(st.Clusters, placementv1beta1.ClusterUpdatingStatus{ClusterName: m.name})
		}
		for _, task := range cfg.AfterStageTasks {
			st.AfterStageTaskStatus = append(st.AfterStageTaskStatus, placementv1beta1.AfterStageTaskStatus{Type: task.Type})
		}
		stages = append(stages, st)
	}
	var unselected []string
	for _, c := range clusters {
		if !taken[c.name] {
			unselected = append(unselected, c.name)
		}
	}
	sort.Strings(unselected)
	return stages, unselected, nil
}

// sortClusters orders clusters by the value of the label key (as integers when
// every present value is one, else as strings), clusters without the label last,
// and then by name. An empty key orders by name only.
func sortClusters(cs []memberCluster, key string) {
	numeric := key != ""
	for _, c := range cs {
		if v, ok := c.labels[key]; ok {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				numeric = false
			}
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if key != "" {
			vi, oki := cs[i].labels[key]
			vj, okj := cs[j].labels[key]
			switch {
			case oki && !okj:
				return true
			case !oki && okj:
				return false
			case oki && okj && vi != vj:
				if numeric {
					ni, _ := strconv.ParseInt(vi, 10, 64)
					nj, _ := strconv.ParseInt(vj, 10, 64)
					return ni < nj
				}
				return vi < vj
			}
		}
		return cs[i].name < cs[j].name
	})
}

// maxConcurrency is how many of a stage's n clusters may update at once: the
// number given, or the percentage of n rounded down, and at least 1 (the default).
func maxConcurrency(v *intstr.IntOrString, n int) int {
	if v == nil {
		return 1
	}
	m, err := intstr.GetScaledValueFromIntOrPercent(v, n, false)
	if err != nil || m < 1 {
		return 1
	}
	return m
}

// bindingView is what a run needs to know of a cluster's binding.
type bindingView struct {
	// active: the placement has a Scheduled or Bound binding for the cluster that
	// is not being deleted.
	active bool
	// snapshot is the binding's spec.resourceSnapshotName.
	snapshot string
	// available: the binding's Available condition is True at its current
	// generation.
	available bool
}

// stagePlan is what to do with a stage's clusters now.
type stagePlan struct {
	// succeeded are started clusters that now run the target snapshot, Available.
	succeeded []string
	// unscheduled are unfinished clusters the placement no longer has.
	unscheduled []string
	// start are clusters to move to the target snapshot now.
	start []string
	// updating are the clusters moving to the target snapshot after this plan
	// (started before and not yet Available, and start), in stage order.
	updating []string
	// done: every cluster of the stage is finished after this plan.
	done bool
}

// planStage decides, from the stage's clusters and their bindings, which clusters
// finished and which start now, so that at most limit clusters are updating at
// once. A pure function.
func planStage(clusters []placementv1beta1.ClusterUpdatingStatus, views map[string]bindingView, target string, limit int) stagePlan {
	var p stagePlan
	var waiting []string
	inFlight := 0
	for _, c := range clusters {
		if clusterFinished(&c) {
			continue
		}
		v := views[c.ClusterName]
		switch {
		case !v.active:
			p.unscheduled = append(p.unscheduled, c.ClusterName)
		case !clusterStarted(&c):
			waiting = append(waiting, c.ClusterName)
		case v.snapshot == target && v.available:
			p.succeeded = append(p.succeeded, c.ClusterName)
		default:
			inFlight++
			p.updating = append(p.updating, c.ClusterName)
		}
	}
	for _, name := range waiting {
		if inFlight >= limit {
			break
		}
		inFlight++
		p.start = append(p.start, name)
		p.updating = append(p.updating, name)
	}
	p.done = len(p.updating) == 0 && len(waiting) == 0
	return p
}

// clusterStarted reports whether the run has moved the cluster.
func clusterStarted(c *placementv1beta1.ClusterUpdatingStatus) bool {
	for _, cond := range c.Conditions {
		if cond.Type == placementv1beta1.ConditionClusterUpdatingStarted && cond.Status == metav1.ConditionTrue {
			return true
		}
	}
	return false
}

// clusterFinished reports whether the cluster is done: succeeded, or left
// because it was unscheduled.
func clusterFinished(c *placementv1beta1.ClusterUpdatingStatus) bool {
	for _, cond := range c.Conditions {
		if cond.Type == placementv1beta1.ConditionUpdateRunSucceeded {
			return true
		}
	}
	return false
}

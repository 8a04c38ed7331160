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
	"sort"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Stages divides clusters (by name, with their labels) into a strategy's
// stages as a run does (computeStages), for what-if plans (hub/plan): the
// stages in order, each with its clusters in the order the run updates them,
// and the clusters no stage matches.
func Stages(spec *placementv1beta1.StagedUpdateStrategySpec, clusters map[string]map[string]string) ([]placementv1beta1.StageUpdatingStatus, []string, error) {
	cs := make([]memberCluster, 0, len(clusters))
	for name, labels := range clusters {
		cs = append(cs, memberCluster{name: name, labels: labels})
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	return computeStages(spec, cs)
}

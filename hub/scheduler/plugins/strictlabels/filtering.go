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

package strictlabels

import (
	"context"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

var (
	noSelector = framework.NewStatus(framework.ClusterMismatch,
		"cluster has strictMatchLabels set and the placement does not select clusters by label")
	noMatch = framework.NewStatus(framework.ClusterMismatch,
		"cluster has strictMatchLabels set and none of the placement's label selectors matches its labels")
)

// PreFilter returns Skip for PickFixed placements and when no cluster under
// consideration is strict; otherwise it collects the placement's label selectors.
func (p *Plugin) PreFilter(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, clusters []*framework.ClusterInfo) (*framework.PreFilterResult, *framework.Status) {
	skip := framework.NewStatus(framework.Skip)
	if policy != nil && policy.PlacementType == placementv1beta1.PickFixed {
		return nil, skip
	}
	strict := false
	for _, c := range clusters {
		if c.Cluster.Spec.StrictMatchLabels {
			strict = true
			break
		}
	}
	if !strict {
		return nil, skip
	}
	terms, err := cs.EffectiveSelectors(policy)
	if err != nil {
		return nil, framework.FromError(err)
	}
	s := &pluginState{}
	for _, t := range terms {
		if t.SelectsLabels() {
			s.selectors = append(s.selectors, t.Labels)
		}
	}
	cs.Write(Name, s)
	return nil, nil
}

// Filter rejects (ClusterMismatch) a strict cluster unless one of the placement's
// label selectors matches its labels.
func (p *Plugin) Filter(_ context.Context, cs *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) *framework.Status {
	if !cluster.Cluster.Spec.StrictMatchLabels {
		return nil
	}
	s, err := readState(cs)
	if err != nil {
		return framework.FromError(err)
	}
	if len(s.selectors) == 0 {
		return noSelector
	}
	for _, sel := range s.selectors {
		if sel.Matches(cluster.Labels()) {
			return nil
		}
	}
	return noMatch
}

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

package topologyspread

import (
	"context"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// PreScore counts, for every constraint, the selected clusters in each domain of
// the feasible clusters. It returns Skip when PreFilter did (no constraints).
func (p *Plugin) PreScore(_ context.Context, cs *framework.CycleState, _ *placementv1beta1.PlacementPolicy, clusters []*framework.ClusterInfo) *framework.Status {
	s, err := readState(cs)
	if err != nil {
		return framework.NewStatus(framework.Skip)
	}
	for i := range s.constraints {
		s.constraints[i].index(cs.Fleet(), len(cs.Clusters()), clusters, cs.Selected())
	}
	return nil
}

// Score returns minus the number of selected clusters in the cluster's domain (not
// counting the cluster itself), summed over the constraints, as its topology spread
// score; a cluster without a ScheduleAnyway constraint's key scores below every
// domain.
func (p *Plugin) Score(_ context.Context, cs *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) (framework.ClusterScore, *framework.Status) {
	s, err := readState(cs)
	if err != nil {
		return framework.ClusterScore{}, framework.FromError(err)
	}
	var score int
	for i := range s.constraints {
		c := &s.constraints[i]
		n, ok := c.count(cs, cluster)
		if !ok {
			score -= c.max + 1
			continue
		}
		score -= n
	}
	return framework.ClusterScore{TopologySpreadScore: int32(score)}, nil
}

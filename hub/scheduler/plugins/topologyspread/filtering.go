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

// PreFilter returns Skip unless the placement is PickN with topology spread
// constraints; otherwise it compiles them.
func (p *Plugin) PreFilter(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, _ []*framework.ClusterInfo) (*framework.PreFilterResult, *framework.Status) {
	if policy == nil || policy.PlacementType != placementv1beta1.PickN || len(policy.TopologySpreadConstraints) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	cs.Write(Name, newState(policy))
	return nil, nil
}

// Filter rejects (ClusterUnschedulable) a candidate that would break a
// DoNotSchedule constraint given the clusters selected so far, or that lacks its
// topology key. Before PreScore has counted the domains it only checks the key.
func (p *Plugin) Filter(_ context.Context, cs *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) *framework.Status {
	s, err := readState(cs)
	if err != nil {
		return framework.FromError(err)
	}
	for i := range s.constraints {
		c := &s.constraints[i]
		if !c.hard {
			continue
		}
		if c.counts == nil { // before PreScore: only the key can be checked
			if _, ok := cluster.LabelValue(c.key); !ok {
				return c.lacksKey
			}
			continue
		}
		n, ok := c.count(cs, cluster)
		if !ok {
			return c.lacksKey
		}
		if n+1-c.min > c.maxSkew {
			return c.skewed
		}
	}
	return nil
}

// Reserve counts a picked cluster in its domains.
func (p *Plugin) Reserve(_ context.Context, cs *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) {
	s, err := readState(cs)
	if err != nil {
		return
	}
	for i := range s.constraints {
		s.constraints[i].add(cluster, 1)
	}
}

// Unreserve stops counting a cluster removed from the selection.
func (p *Plugin) Unreserve(_ context.Context, cs *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) {
	s, err := readState(cs)
	if err != nil {
		return
	}
	for i := range s.constraints {
		s.constraints[i].add(cluster, -1)
	}
}

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

package clusteraffinity

import (
	"context"
	"math"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// PreScore returns Skip when there are no preferred terms; otherwise it finds, for
// every term with a property sorter, the smallest and largest value of the
// property among the clusters that match the term.
func (p *Plugin) PreScore(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, clusters []*framework.ClusterInfo) *framework.Status {
	s, err := readState(cs, policy)
	if err != nil {
		return framework.FromError(err)
	}
	if len(s.preferred) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	for i := range s.preferred {
		t := &s.preferred[i]
		if t.sorter == nil {
			continue
		}
		t.sorter.seen = false
		for _, c := range clusters {
			if !s.matches(t, c) {
				continue
			}
			v := s.props.get(c, t.sorter.prop)
			if v.state != 1 {
				continue
			}
			if !t.sorter.seen {
				t.sorter.min, t.sorter.max, t.sorter.seen = v.f, v.f, true
				continue
			}
			t.sorter.min = min(t.sorter.min, v.f)
			t.sorter.max = max(t.sorter.max, v.f)
		}
	}
	return nil
}

// Score returns the sum of the weights of the preferred terms the cluster matches,
// each scaled by its property sorter if it has one, as its affinity score.
func (p *Plugin) Score(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) (framework.ClusterScore, *framework.Status) {
	s, err := readState(cs, policy)
	if err != nil {
		return framework.ClusterScore{}, framework.FromError(err)
	}
	var total int32
	for i := range s.preferred {
		t := &s.preferred[i]
		if !s.matches(t, cluster) {
			continue
		}
		if t.sorter == nil {
			total += t.weight
			continue
		}
		v := s.props.get(cluster, t.sorter.prop)
		if v.state != 1 || !t.sorter.seen {
			continue
		}
		total += t.sorter.scale(t.weight, v.f)
	}
	return framework.ClusterScore{AffinityScore: total}, nil
}

// matches reports whether the cluster matches a preferred term's selectors.
func (s *pluginState) matches(t *preferredTerm, c *framework.ClusterInfo) bool {
	return t.match.matches(t.labels, c) && s.props.matchAll(t.props, c)
}

// scale returns the share of weight that value earns: linear between the observed
// minimum and maximum, the full weight at the preferred end.
func (so *sorter) scale(weight int32, value float64) int32 {
	span := so.max - so.min
	if span <= 0 {
		return weight
	}
	frac := (value - so.min) / span
	if so.order == placementv1beta1.Ascending {
		frac = (so.max - value) / span
	}
	frac = min(1, max(0, frac))
	return int32(math.Round(float64(weight) * frac))
}

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
	"fmt"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// pluginState is the constraints of a cycle and their domain counts.
type pluginState struct {
	constraints []constraint
}

// constraint is one topology spread constraint with its counts.
type constraint struct {
	key     string
	maxSkew int
	// hard is whenUnsatisfiable DoNotSchedule.
	hard bool
	// domain[i] is the index in counts of the domain of the cluster with Index i,
	// or -1 if it has none (no topology key, or not feasible). Set by PreScore,
	// which looks every cluster's label up once, so that the pick loop does not.
	domain []int32
	// counts are the selected clusters per domain; set by PreScore and kept up to
	// date by Reserve and Unreserve. nil until PreScore.
	counts []int
	// min and max are the smallest and largest count.
	min, max int
	// lacksKey and skewed are the rejections, shared by all clusters.
	lacksKey, skewed *framework.Status
}

// readState is the typed getter of the plugin's cycle state.
func readState(cs *framework.CycleState) (*pluginState, error) {
	return framework.ReadState[*pluginState](cs, Name)
}

// newState compiles the policy's constraints.
func newState(policy *placementv1beta1.PlacementPolicy) *pluginState {
	s := &pluginState{}
	for _, tsc := range policy.TopologySpreadConstraints {
		c := constraint{key: tsc.TopologyKey, maxSkew: 1, hard: tsc.WhenUnsatisfiable != placementv1beta1.ScheduleAnyway}
		if tsc.MaxSkew != nil && *tsc.MaxSkew > 0 {
			c.maxSkew = int(*tsc.MaxSkew)
		}
		c.lacksKey = framework.NewStatus(framework.ClusterUnschedulable,
			fmt.Sprintf("cluster has no label %s, the topology key of a DoNotSchedule topology spread constraint", c.key))
		c.skewed = framework.NewStatus(framework.ClusterUnschedulable,
			fmt.Sprintf("picking the cluster would make the spread over %s exceed maxSkew %d", c.key, c.maxSkew))
		s.constraints = append(s.constraints, c)
	}
	return s
}

// index finds the domains of the feasible and the selected clusters and counts
// the selected ones. Over a fleet view, it reads the clusters' values of the
// topology key from the view's label column, by position.
func (c *constraint) index(fleet *framework.Fleet, n int, feasible, selected []*framework.ClusterInfo) {
	c.domain = make([]int32, n)
	for i := range c.domain {
		c.domain[i] = -1
	}
	c.counts = c.counts[:0]
	var assign func(cl *framework.ClusterInfo) int32
	if fleet != nil {
		col := fleet.LabelColumn(c.key)
		ids := make([]int32, len(col.Values)) // the domain of each value, -1: none yet
		for i := range ids {
			ids[i] = -1
		}
		assign = func(cl *framework.ClusterInfo) int32 {
			v := col.At[cl.Index]
			if v < 0 {
				return -1
			}
			if ids[v] < 0 {
				ids[v] = int32(len(c.counts))
				c.counts = append(c.counts, 0)
			}
			c.domain[cl.Index] = ids[v]
			return ids[v]
		}
	} else {
		ids := map[string]int32{}
		assign = func(cl *framework.ClusterInfo) int32 {
			v, ok := cl.LabelValue(c.key)
			if !ok {
				return -1
			}
			id, seen := ids[v]
			if !seen {
				id = int32(len(c.counts))
				ids[v] = id
				c.counts = append(c.counts, 0)
			}
			c.domain[cl.Index] = id
			return id
		}
	}
	for _, cl := range feasible {
		assign(cl)
	}
	for _, cl := range selected {
		if id := assign(cl); id >= 0 {
			c.counts[id]++
		}
	}
	c.bounds()
}

// count returns the selected clusters in the cluster's domain, not counting the
// cluster itself; ok is false if the cluster has no domain.
func (c *constraint) count(cs *framework.CycleState, cl *framework.ClusterInfo) (n int, ok bool) {
	id := c.domain[cl.Index]
	if id < 0 {
		return 0, false
	}
	n = c.counts[id]
	if cs.IsSelected(cl) {
		n--
	}
	return n, true
}

// add changes the count of the cluster's domain by delta.
func (c *constraint) add(cl *framework.ClusterInfo, delta int) {
	if c.counts == nil {
		return
	}
	if id := c.domain[cl.Index]; id >= 0 {
		c.counts[id] += delta
		c.bounds()
	}
}

// bounds recomputes min and max.
func (c *constraint) bounds() {
	for i, n := range c.counts {
		if i == 0 {
			c.min, c.max = n, n
			continue
		}
		c.min = min(c.min, n)
		c.max = max(c.max, n)
	}
}

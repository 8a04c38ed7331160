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
	"fmt"
	"strings"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// PreFilter compiles the policy's affinity for the cycle. It returns Skip for a
// PickFixed placement (its clusters are named, so neither affinity, which the API
// forbids there, nor dynamic selectors apply) and when there are no required terms
// (none in the policy and no dynamic selectors), and an error status when a
// selector cannot be compiled.
func (p *Plugin) PreFilter(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, _ []*framework.ClusterInfo) (*framework.PreFilterResult, *framework.Status) {
	if policy != nil && policy.PlacementType == placementv1beta1.PickFixed {
		return nil, framework.NewStatus(framework.Skip)
	}
	s, err := readState(cs, policy)
	if err != nil {
		return nil, framework.FromError(err)
	}
	if len(s.required) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	return nil, nil
}

// Filter rejects (ClusterMismatch) a cluster that matches none of the required
// terms, saying what it lacks.
func (p *Plugin) Filter(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) *framework.Status {
	s, err := readState(cs, policy)
	if err != nil {
		return framework.FromError(err)
	}
	if len(s.required) == 0 {
		return nil
	}
	for i := range s.required {
		t := &s.required[i]
		if t.match.matches(t.labels, cluster) && s.props.matchAll(t.props, cluster) {
			return nil
		}
	}
	if len(s.required) == 1 && !s.required[0].match.matches(s.required[0].labels, cluster) {
		return s.labelMismatch
	}
	return framework.NewStatusFor(framework.ClusterMismatch, s, cluster)
}

// Explain says why the cluster matches none of the required terms: the
// reason of a rejection by Filter, formatted only when it is shown.
func (s *pluginState) Explain(cluster *framework.ClusterInfo) string {
	if len(s.required) == 1 {
		t := &s.required[0]
		if !t.labels.Matches(cluster.Labels()) {
			return s.labelMismatch.Message()
		}
		return s.props.mismatch(t.props, cluster)
	}
	why := make([]string, len(s.required))
	for i := range s.required {
		t := &s.required[i]
		if !t.labels.Matches(cluster.Labels()) {
			why[i] = fmt.Sprintf("term %d: labels do not match %s", i+1, t.labels)
		} else {
			why[i] = fmt.Sprintf("term %d: %s", i+1, s.props.mismatch(t.props, cluster))
		}
	}
	return fmt.Sprintf("cluster matches none of the %d required cluster selector terms (%s)",
		len(s.required), strings.Join(why, "; "))
}

// matchAll reports whether the cluster meets every property requirement.
func (pc *propertyCache) matchAll(reqs []propertyRequirement, c *framework.ClusterInfo) bool {
	for i := range reqs {
		if !pc.match(&reqs[i], c) {
			return false
		}
	}
	return true
}

// match reports whether the cluster meets a property requirement.
func (pc *propertyCache) match(r *propertyRequirement, c *framework.ClusterInfo) bool {
	v := pc.get(c, r.prop)
	if v.state != 1 {
		return false
	}
	return framework.PropertyOperatorHolds(r.op, v.q.Cmp(r.value))
}

// mismatch says which property requirement the cluster fails first.
func (pc *propertyCache) mismatch(reqs []propertyRequirement, c *framework.ClusterInfo) string {
	for i := range reqs {
		r := &reqs[i]
		if pc.match(r, c) {
			continue
		}
		v := pc.get(c, r.prop)
		if v.state != 1 {
			return fmt.Sprintf("cluster does not report property %s as a quantity", r.name)
		}
		return fmt.Sprintf("property %s is %s, required %s %s", r.name, v.q.String(), r.op, r.raw)
	}
	return "cluster does not match the required cluster selector"
}

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

package locations

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins/clustereligibility"
)

// candidate is a Location that matches the placement's selectors.
type candidate struct {
	name      string
	instances labels.Selector
}

// PreFilter chooses the placement's Location and keeps only its clusters under
// consideration. It returns Skip when the policy has no locationSelectors, and a
// ClusterMismatch rejection when no Location can be chosen.
func (p *Plugin) PreFilter(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, clusters []*framework.ClusterInfo) (*framework.PreFilterResult, *framework.Status) {
	if policy == nil || len(policy.LocationSelectors) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	matching, err := matchingLocations(policy.LocationSelectors, cs.Locations())
	if err != nil {
		return nil, framework.FromError(err)
	}
	if len(matching) == 0 {
		return nil, framework.NewStatus(framework.ClusterMismatch, "no Location matches the policy's locationSelectors")
	}
	chosen := sticky(cs, matching)
	if chosen == nil {
		var eligible []*candidate
		for i := range matching {
			if p.hasEligibleInstance(cs, &matching[i], clusters) {
				eligible = append(eligible, &matching[i])
			}
		}
		if len(eligible) == 0 {
			names := make([]string, len(matching))
			for i := range matching {
				names[i] = matching[i].name
			}
			return nil, framework.NewStatus(framework.ClusterMismatch, fmt.Sprintf(
				"no Location matching the policy's locationSelectors has an eligible cluster (matching: %s)", strings.Join(names, ", ")))
		}
		chosen = eligible[0]
		if r := cs.Rand(); r != nil {
			chosen = eligible[r.Intn(len(eligible))]
		}
	}
	cs.SetChosenLocation(chosen.name)
	return &framework.PreFilterResult{
		Includes: func(c *framework.ClusterInfo) bool { return chosen.instances.Matches(c.Labels()) },
		Reason:   "not in chosen Location " + chosen.name,
	}, nil
}

// matchingLocations returns the Locations whose labels match any of the selectors,
// sorted by name, with their compiled instance selectors.
func matchingLocations(selectors []metav1.LabelSelector, locations []clusterv1beta1.Location) ([]candidate, error) {
	sels := make([]labels.Selector, 0, len(selectors))
	for i := range selectors {
		s, err := metav1.LabelSelectorAsSelector(&selectors[i])
		if err != nil {
			return nil, fmt.Errorf("invalid location selector %d: %w", i, err)
		}
		sels = append(sels, s)
	}
	var out []candidate
	for i := range locations {
		loc := &locations[i]
		if loc.DeletionTimestamp != nil {
			continue
		}
		for _, s := range sels {
			if !s.Matches(labels.Set(loc.Labels)) {
				continue
			}
			inst, err := metav1.LabelSelectorAsSelector(&loc.Spec.InstanceSelector)
			if err != nil {
				return nil, fmt.Errorf("invalid instance selector of Location %s: %w", loc.Name, err)
			}
			out = append(out, candidate{name: loc.Name, instances: inst})
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// sticky returns the matching Location the placement's active bindings are in, or
// nil.
func sticky(cs *framework.CycleState, matching []candidate) *candidate {
	if cs.BoundCount() == 0 {
		return nil
	}
	var bound []*framework.ClusterInfo
	for _, c := range cs.Clusters() {
		if c.Bound {
			bound = append(bound, c)
		}
	}
	var best *candidate
	most := 0
	for i := range matching {
		n := 0
		for _, c := range bound {
			if matching[i].instances.Matches(c.Labels()) {
				n++
			}
		}
		if n > most {
			best, most = &matching[i], n
		}
	}
	return best
}

// hasEligibleInstance reports whether one of the Location's clusters is eligible
// for new placements.
func (p *Plugin) hasEligibleInstance(cs *framework.CycleState, loc *candidate, clusters []*framework.ClusterInfo) bool {
	for _, c := range clusters {
		if !loc.instances.Matches(c.Labels()) {
			continue
		}
		if ok, _ := clustereligibility.Check(c.Cluster, cs.Now(), p.grace); ok {
			return true
		}
	}
	return false
}

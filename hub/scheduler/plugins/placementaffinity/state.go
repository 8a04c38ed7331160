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

package placementaffinity

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// pluginState is the policy's placement (anti-)affinity resolved to domains.
type pluginState struct {
	required, requiredAnti   []term
	preferred, preferredAnti []term
}

// term is an affinity term and the topology domains its placements are in.
type term struct {
	key     string
	weight  int32
	domains map[string]bool
	// rejection is the status for a cluster failing the (required) term.
	rejection *framework.Status
}

// in reports whether the cluster is in one of the term's domains.
func (t *term) in(c *framework.ClusterInfo) bool {
	v, ok := c.LabelValue(t.key)
	return ok && t.domains[v]
}

// readState is the typed getter of the plugin's cycle state: it resolves the
// policy's terms on first use in a cycle.
func readState(cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy) (*pluginState, error) {
	if s, err := framework.ReadState[*pluginState](cs, Name); err == nil {
		return s, nil
	}
	s, err := resolve(cs, policy)
	if err != nil {
		return nil, err
	}
	cs.Write(Name, s)
	return s, nil
}

// resolve compiles the terms and finds their domains.
func resolve(cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy) (*pluginState, error) {
	s := &pluginState{}
	if policy == nil || policy.Affinity == nil {
		return s, nil
	}
	type source struct {
		list   *[]term
		t      placementv1beta1.PlacementAffinityTerm
		weight int32
		anti   bool
	}
	var sources []source
	if a := policy.Affinity.PlacementAffinity; a != nil {
		for _, t := range a.RequiredDuringSchedulingIgnoredDuringExecution {
			sources = append(sources, source{list: &s.required, t: t})
		}
		for _, w := range a.PreferredDuringSchedulingIgnoredDuringExecution {
			sources = append(sources, source{list: &s.preferred, t: w.PlacementAffinityTerm, weight: w.Weight})
		}
	}
	if aa := policy.Affinity.PlacementAntiAffinity; aa != nil {
		for _, t := range aa.RequiredDuringSchedulingIgnoredDuringExecution {
			sources = append(sources, source{list: &s.requiredAnti, t: t, anti: true})
		}
		for _, w := range aa.PreferredDuringSchedulingIgnoredDuringExecution {
			sources = append(sources, source{list: &s.preferredAnti, t: w.PlacementAffinityTerm, weight: w.Weight, anti: true})
		}
	}
	// Compile every term first, so that the lists stop growing and pointers into
	// them stay valid; remember which peers' clusters each term is about.
	peerClusters := make([][]string, len(sources))
	for i, src := range sources {
		sel, err := selector(src.t.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("placement affinity term with topology key %s: %w", src.t.TopologyKey, err)
		}
		*src.list = append(*src.list, newTerm(src.t, sel, src.weight, src.anti))
		for _, peer := range cs.OtherPlacements() {
			if peer.Name != cs.PlacementName() && sel.Matches(labels.Set(peer.Labels)) {
				peerClusters[i] = append(peerClusters[i], peer.Clusters...)
			}
		}
	}
	// wanted maps a cluster name to the terms that need its domain.
	wanted := map[string][]*term{}
	next := map[*[]term]int{}
	for i, src := range sources {
		tm := &(*src.list)[next[src.list]]
		next[src.list]++
		for _, name := range peerClusters[i] {
			wanted[name] = append(wanted[name], tm)
		}
	}
	if len(wanted) == 0 {
		return s, nil
	}
	for _, c := range cs.Clusters() {
		for _, tm := range wanted[c.Name] {
			if v, ok := c.LabelValue(tm.key); ok {
				tm.domains[v] = true
			}
		}
	}
	return s, nil
}

// newTerm compiles one term.
func newTerm(t placementv1beta1.PlacementAffinityTerm, sel labels.Selector, weight int32, anti bool) term {
	tm := term{key: t.TopologyKey, weight: weight, domains: map[string]bool{}}
	what := "placements matching " + sel.String()
	if sel.Empty() {
		what = "other placements"
	}
	if anti {
		tm.rejection = framework.NewStatus(framework.ClusterMismatch,
			fmt.Sprintf("%s are in the cluster's %s domain (required placement anti-affinity)", what, t.TopologyKey))
	} else {
		tm.rejection = framework.NewStatus(framework.ClusterMismatch,
			fmt.Sprintf("no %s are in the cluster's %s domain (required placement affinity)", what, t.TopologyKey))
	}
	return tm
}

// selector converts a placement label selector; nil selects every placement.
func selector(ls *metav1.LabelSelector) (labels.Selector, error) {
	if ls == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(ls)
}

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

package clusterpreferences

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// pluginState is the policy's preferences compiled for one cycle.
type pluginState struct {
	// groups are the groups' selectors, the most preferred first; empty when
	// the plugin has nothing to do.
	groups []labels.Selector
	// mismatch is the status of a cluster in no group, shared by all of them.
	mismatch *framework.Status
}

// readState is the typed getter of the plugin's cycle state: it compiles the
// policy on first use in a cycle.
func readState(cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy) (*pluginState, error) {
	if s, err := framework.ReadState[*pluginState](cs, Name); err == nil {
		return s, nil
	}
	s, err := compile(policy)
	if err != nil {
		return nil, err
	}
	cs.Write(Name, s)
	return s, nil
}

// compile builds the plugin state: the groups of a PickN policy, none otherwise.
func compile(policy *placementv1beta1.PlacementPolicy) (*pluginState, error) {
	s := &pluginState{}
	if policy == nil || policy.PlacementType != placementv1beta1.PickN || len(policy.ClusterPreferences) == 0 {
		return s, nil
	}
	described := make([]string, 0, len(policy.ClusterPreferences))
	for i, p := range policy.ClusterPreferences {
		sel, err := metav1.LabelSelectorAsSelector(&p.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("clusterPreferences[%d]: %w", i, err)
		}
		s.groups = append(s.groups, sel)
		described = append(described, describe(sel))
	}
	s.mismatch = framework.NewStatus(framework.ClusterMismatch, fmt.Sprintf("cluster labels match none of the %d clusterPreferences (%s)",
		len(s.groups), strings.Join(described, "; ")))
	return s, nil
}

// group returns the index of the first group the cluster matches, or -1.
func (s *pluginState) group(c *framework.ClusterInfo) int {
	for i, sel := range s.groups {
		if sel.Matches(c.Labels()) {
			return i
		}
	}
	return -1
}

func describe(sel labels.Selector) string {
	if sel.Empty() {
		return "every cluster"
	}
	return sel.String()
}

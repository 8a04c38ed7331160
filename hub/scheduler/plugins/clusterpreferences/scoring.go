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
	"context"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// PreScore returns Skip when the policy has no preferences (or is not PickN).
func (p *Plugin) PreScore(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, _ []*framework.ClusterInfo) *framework.Status {
	s, err := readState(cs, policy)
	if err != nil {
		return framework.FromError(err)
	}
	if len(s.groups) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// Score gives a cluster of group i of k the PreferenceScore k-i; a cluster in no
// group (filtered out, so only a misplaced one is scored) scores 0.
func (p *Plugin) Score(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) (framework.ClusterScore, *framework.Status) {
	s, err := readState(cs, policy)
	if err != nil {
		return framework.ClusterScore{}, framework.FromError(err)
	}
	g := s.group(cluster)
	if g < 0 {
		return framework.ClusterScore{}, nil
	}
	return framework.ClusterScore{PreferenceScore: int32(len(s.groups) - g)}, nil
}

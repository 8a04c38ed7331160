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

// PreFilter compiles the preferences for the cycle. It returns Skip when the
// policy has none (or is not PickN), and an error status when a selector cannot
// be compiled.
func (p *Plugin) PreFilter(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, _ []*framework.ClusterInfo) (*framework.PreFilterResult, *framework.Status) {
	s, err := readState(cs, policy)
	if err != nil {
		return nil, framework.FromError(err)
	}
	if len(s.groups) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	return nil, nil
}

// Filter rejects (ClusterMismatch) a cluster that is in none of the groups.
func (p *Plugin) Filter(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) *framework.Status {
	s, err := readState(cs, policy)
	if err != nil {
		return framework.FromError(err)
	}
	if len(s.groups) == 0 || s.group(cluster) >= 0 {
		return nil
	}
	return s.mismatch
}

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

package evicted

import (
	"context"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// PreFilter returns Skip for PickFixed placements and when the placement is not
// excluded from any cluster.
func (p *Plugin) PreFilter(_ context.Context, state *framework.CycleState, policy *placementv1beta1.PlacementPolicy, _ []*framework.ClusterInfo) (*framework.PreFilterResult, *framework.Status) {
	if len(state.ExcludedClusters()) == 0 || (policy != nil && policy.PlacementType == placementv1beta1.PickFixed) {
		return nil, framework.NewStatus(framework.Skip)
	}
	return nil, nil
}

// Filter rejects (ClusterEvicted) a cluster the placement is excluded from, with
// the exclusion's reason.
func (p *Plugin) Filter(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) *framework.Status {
	reason, ok := state.ExcludedClusters()[cluster.Name]
	if !ok {
		return nil
	}
	if reason == "" {
		reason = "the placement was evicted from the cluster"
	}
	return framework.NewStatus(framework.ClusterEvicted, reason)
}

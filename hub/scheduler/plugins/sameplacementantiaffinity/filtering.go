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

package sameplacementantiaffinity

import (
	"context"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// alreadyBound is returned for every bound cluster; statuses are immutable.
var alreadyBound = framework.NewStatus(framework.ClusterAlreadySelected, "the placement is already on the cluster")

// PreFilter returns Skip when the placement has no active binding.
func (p *Plugin) PreFilter(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, _ []*framework.ClusterInfo) (*framework.PreFilterResult, *framework.Status) {
	if state.BoundCount() == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	return nil, nil
}

// Filter returns ClusterAlreadySelected for a cluster the placement is bound to.
func (p *Plugin) Filter(_ context.Context, _ *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) *framework.Status {
	if cluster.Bound {
		return alreadyBound
	}
	return nil
}

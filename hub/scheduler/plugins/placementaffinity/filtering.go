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
	"context"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// PreFilter resolves the terms for the cycle. It returns Skip when there are no
// required terms.
func (p *Plugin) PreFilter(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, _ []*framework.ClusterInfo) (*framework.PreFilterResult, *framework.Status) {
	s, err := readState(cs, policy)
	if err != nil {
		return nil, framework.FromError(err)
	}
	if len(s.required) == 0 && len(s.requiredAnti) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	return nil, nil
}

// Filter rejects (ClusterMismatch) a cluster that is not in a domain of every
// required affinity term, or is in a domain of a required anti-affinity term.
func (p *Plugin) Filter(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) *framework.Status {
	s, err := readState(cs, policy)
	if err != nil {
		return framework.FromError(err)
	}
	for i := range s.required {
		if !s.required[i].in(cluster) {
			return s.required[i].rejection
		}
	}
	for i := range s.requiredAnti {
		if s.requiredAnti[i].in(cluster) {
			return s.requiredAnti[i].rejection
		}
	}
	return nil
}

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

// PreScore resolves the terms for the cycle. It returns Skip when there are no
// preferred terms.
func (p *Plugin) PreScore(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, _ []*framework.ClusterInfo) *framework.Status {
	s, err := readState(cs, policy)
	if err != nil {
		return framework.FromError(err)
	}
	if len(s.preferred) == 0 && len(s.preferredAnti) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// Score returns, as the affinity score, the weights of the preferred affinity terms
// with a domain the cluster is in, plus those of the preferred anti-affinity terms
// with no domain the cluster is in.
func (p *Plugin) Score(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) (framework.ClusterScore, *framework.Status) {
	s, err := readState(cs, policy)
	if err != nil {
		return framework.ClusterScore{}, framework.FromError(err)
	}
	var total int32
	for i := range s.preferred {
		if s.preferred[i].in(cluster) {
			total += s.preferred[i].weight
		}
	}
	for i := range s.preferredAnti {
		if !s.preferredAnti[i].in(cluster) {
			total += s.preferredAnti[i].weight
		}
	}
	return framework.ClusterScore{AffinityScore: total}, nil
}

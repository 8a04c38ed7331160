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

package scheduler

import placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"

// MaxUnselectedDecisions is how many decisions about clusters a cycle did not
// select the policy snapshot records, after every selected one. A decision
// about every cluster would make each snapshot grow with the fleet (about
// 300 bytes a cluster: 3 MB a snapshot at 10 000 members, past what the API
// server stores) and the hub's cache with members times placements.
const MaxUnselectedDecisions = 20

// maxDecisions is the API's bound on a snapshot's decisions (MaxItems).
const maxDecisions = 1000

// recordedDecisions returns the decisions the snapshot records: every selected
// one and the first MaxUnselectedDecisions of the others, in the cycle's order
// (selected first, then the rest as the cycle ranked them), at most maxDecisions.
func recordedDecisions(ds []placementv1beta1.ClusterDecision) []placementv1beta1.ClusterDecision {
	out := make([]placementv1beta1.ClusterDecision, 0, min(len(ds), 64))
	unselected := 0
	for _, d := range ds {
		if len(out) == maxDecisions {
			break
		}
		if !d.Selected {
			if unselected == MaxUnselectedDecisions {
				continue
			}
			unselected++
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

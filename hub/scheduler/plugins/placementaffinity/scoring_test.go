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
	"testing"

	"github.com/google/go-cmp/cmp"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

func TestScore(t *testing.T) {
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		want   map[string]int32
	}{
		{
			name:   "a preferred affinity term adds its weight in the peer's domains",
			policy: preferring([]placementv1beta1.WeightedPlacementAffinityTerm{weighted(50, near("back-end", "zone"))}, nil),
			want:   map[string]int32{"eu-1": 50, "eu-2": 50, "us-1": 0, "nozone": 0},
		},
		{
			name:   "a preferred anti-affinity term adds its weight outside the peer's domains",
			policy: preferring(nil, []placementv1beta1.WeightedPlacementAffinityTerm{weighted(30, near("back-end", byName))}),
			want:   map[string]int32{"eu-1": 0, "eu-2": 30, "us-1": 30, "nozone": 30},
		},
		{
			name: "weights add up",
			policy: preferring(
				[]placementv1beta1.WeightedPlacementAffinityTerm{weighted(50, near("back-end", "zone")), weighted(5, near("cache", byName))},
				[]placementv1beta1.WeightedPlacementAffinityTerm{weighted(30, near("back-end", byName))}),
			want: map[string]int32{"eu-1": 50, "eu-2": 80, "us-1": 35, "nozone": 35},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scores := ft.RunScore(t, New(), world(tt.policy))
			got := map[string]int32{}
			for name, s := range scores {
				got[name] = s.AffinityScore
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("affinity scores (-want +got):\n%s", diff)
			}
		})
	}
}

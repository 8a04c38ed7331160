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
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

func twoClusters() []clusterv1beta1.MemberCluster {
	return []clusterv1beta1.MemberCluster{ft.Cluster("member-1"), ft.Cluster("member-2")}
}

func pickN(n int32) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: &n}
}

func excluding(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name     string
		policy   *placementv1beta1.PlacementPolicy
		excluded map[string]string
		bound    []string
		want     map[string]string // code per cluster
		messages map[string]string // message per rejected cluster
	}{
		{
			name:   "with no exclusions every cluster passes",
			policy: pickN(1),
			want:   map[string]string{"member-1": "Success", "member-2": "Success"},
		},
		{
			name:     "an excluded cluster is rejected as evicted, with the reason",
			policy:   pickN(1),
			excluded: excluding("member-2", "evicted by ClusterResourcePlacementEviction e-1"),
			want:     map[string]string{"member-1": "Success", "member-2": "ClusterEvicted"},
			messages: map[string]string{"member-2": "evicted by ClusterResourcePlacementEviction e-1"},
		},
		{
			name:     "a bound excluded cluster is rejected as evicted too, so that its binding goes",
			policy:   pickN(1),
			excluded: excluding("member-1", "evicted by ClusterResourcePlacementEviction e-1"),
			bound:    []string{"member-1"},
			want:     map[string]string{"member-1": "ClusterEvicted", "member-2": "Success"},
			messages: map[string]string{"member-1": "evicted by ClusterResourcePlacementEviction e-1"},
		},
		{
			name:     "a PickAll placement is excluded like a PickN one",
			policy:   &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll},
			excluded: excluding("member-1", "evicted"),
			want:     map[string]string{"member-1": "ClusterEvicted", "member-2": "Success"},
		},
		{
			name:     "a placement without a policy (PickAll) is excluded too",
			excluded: excluding("member-1", "evicted"),
			want:     map[string]string{"member-1": "ClusterEvicted", "member-2": "Success"},
		},
		{
			name:     "an exclusion without a reason gets a generic one",
			policy:   pickN(1),
			excluded: excluding("member-1", ""),
			want:     map[string]string{"member-1": "ClusterEvicted", "member-2": "Success"},
			messages: map[string]string{"member-1": "the placement was evicted from the cluster"},
		},
		{
			name:     "a PickFixed placement is never moved: the plugin skips it",
			policy:   &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"member-1"}},
			excluded: excluding("member-1", "evicted"),
			bound:    []string{"member-1"},
			want:     map[string]string{"member-1": "Success", "member-2": "Success"},
		},
		{
			name:     "an exclusion of a cluster that does not exist changes nothing",
			policy:   pickN(1),
			excluded: excluding("member-9", "evicted"),
			want:     map[string]string{"member-1": "Success", "member-2": "Success"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ft.Input(tt.policy, twoClusters()...)
			in.ExcludedClusters = tt.excluded
			in.Bindings = ft.Bindings(in.PlacementName, tt.bound...)
			got := ft.RunFilter(t, New(), in)
			if diff := cmp.Diff(tt.want, ft.Codes(got)); diff != "" {
				t.Errorf("codes (-want +got):\n%s", diff)
			}
			for cluster, want := range tt.messages {
				if diff := cmp.Diff(want, got[cluster].Message()); diff != "" {
					t.Errorf("message of %s (-want +got):\n%s", cluster, diff)
				}
			}
		})
	}
}

func TestPreFilterSkipsWhenNothingIsExcluded(t *testing.T) {
	in := ft.Input(pickN(1), twoClusters()...)
	state := framework.NewCycleState(&in)
	if _, st := New().PreFilter(t.Context(), state, in.Policy, state.Clusters()); !st.IsSkip() {
		t.Errorf("PreFilter() = %v, want Skip", st)
	}
	in.ExcludedClusters = excluding("member-1", "evicted")
	state = framework.NewCycleState(&in)
	if _, st := New().PreFilter(t.Context(), state, in.Policy, state.Clusters()); st != nil {
		t.Errorf("PreFilter() = %v, want nil", st)
	}
}

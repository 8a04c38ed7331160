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

package framework_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

// preferringGroups adds ordered cluster preferences, one per tier value.
func preferringGroups(tiers ...string) func(*placementv1beta1.PlacementPolicy) {
	return func(p *placementv1beta1.PlacementPolicy) {
		for _, tier := range tiers {
			p.ClusterPreferences = append(p.ClusterPreferences, placementv1beta1.ClusterPreference{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": tier}},
			})
		}
	}
}

// tiered returns healthy clusters named after their tier and zone: "p-a1" is
// tier primary in zone a, "s-b1" tier secondary in zone b, "x-c1" tier other.
func tiered(names ...string) []clusterv1beta1.MemberCluster {
	tiers := map[byte]string{'p': "primary", 's': "secondary", 'x': "other"}
	out := make([]clusterv1beta1.MemberCluster, len(names))
	for i, n := range names {
		out[i] = clusterWithLabels(n, "tier", tiers[n[0]], "zone", n[2:3])
	}
	return out
}

func TestPickNWithClusterPreferences(t *testing.T) {
	groups := preferringGroups("primary", "secondary")
	noSchedule := ft.Taints(ft.Taint("maintenance", "true", clusterv1beta1.TaintEffectNoSchedule))
	tests := []struct {
		name       string
		policy     *placementv1beta1.PlacementPolicy
		clusters   []clusterv1beta1.MemberCluster
		bound      []string
		want       []string
		unsched    []string
		wantReason string
		reasons    map[string]string
	}{
		{
			name:       "fills from the first group",
			policy:     pickN(2, groups),
			clusters:   tiered("p-a1", "p-a2", "p-a3", "s-b1", "s-b2"),
			want:       []string{"p-a1", "p-a2"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "overflows to the next group only for the clusters the first cannot provide",
			policy:     pickN(3, groups),
			clusters:   tiered("p-a1", "p-a2", "s-b1", "s-b2"),
			want:       []string{"p-a1", "p-a2", "s-b1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:   "a tainted cluster of the first group is passed over for the next group",
			policy: pickN(1, groups),
			clusters: []clusterv1beta1.MemberCluster{
				ft.Cluster("p-a1", ft.Labels("tier", "primary"), noSchedule), ft.Cluster("s-b1", ft.Labels("tier", "secondary")),
			},
			want:       []string{"s-b1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:   "a cluster of the first group disconnected for long is passed over for the next group",
			policy: pickN(1, groups),
			clusters: []clusterv1beta1.MemberCluster{
				ft.Cluster("p-a1", ft.Labels("tier", "primary"), ft.Condition(clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse, time.Hour)),
				ft.Cluster("s-b1", ft.Labels("tier", "secondary")),
			},
			want:       []string{"s-b1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "the preference outweighs cluster affinity",
			policy:     pickN(1, groups, preferring(100, "zone", "b")),
			clusters:   tiered("p-a1", "s-b1"),
			want:       []string{"p-a1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "cluster affinity orders the clusters within a group",
			policy:     pickN(1, groups, preferring(10, "zone", "c")),
			clusters:   tiered("p-a1", "p-c1", "s-c2"),
			want:       []string{"p-c1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "the preference outweighs a ScheduleAnyway topology spread",
			policy:     pickN(2, groups, spreading("zone", 1, placementv1beta1.ScheduleAnyway)),
			clusters:   tiered("p-a1", "p-a2", "s-b1"),
			want:       []string{"p-a1", "p-a2"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "a DoNotSchedule topology spread makes the first group overflow",
			policy:     pickN(2, groups, spreading("zone", 1, placementv1beta1.DoNotSchedule)),
			clusters:   tiered("p-a1", "p-a2", "s-b1"),
			want:       []string{"p-a1", "s-b1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "a cluster in no group is never picked",
			policy:     pickN(3, groups),
			clusters:   tiered("p-a1", "s-b1", "x-c1"),
			want:       []string{"p-a1", "s-b1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyUnfulfilled,
			reasons:    map[string]string{"x-c1": "cluster labels match none of the 2 clusterPreferences (tier=primary; tier=secondary)"},
		},
		{
			name:       "scaling down removes a cluster of the least preferred group first",
			policy:     pickN(1, groups),
			clusters:   tiered("p-a2", "s-a1"),
			bound:      []string{"p-a2", "s-a1"},
			want:       []string{"p-a2"},
			unsched:    []string{"s-a1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "scaling down removes the later groups in reverse order",
			policy:     pickN(2, preferringGroups("primary", "secondary", "other")),
			clusters:   tiered("p-a1", "s-b1", "x-c1"),
			bound:      []string{"p-a1", "s-b1", "x-c1"},
			want:       []string{"p-a1", "s-b1"},
			unsched:    []string{"x-c1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "a placement on a less preferred cluster stays there when a preferred one is available",
			policy:     pickN(1, groups),
			clusters:   tiered("p-a1", "s-b1"),
			bound:      []string{"s-b1"},
			want:       []string{"s-b1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "a cluster the placement is on that leaves every group is misplaced and removed first",
			policy:     pickN(1, groups),
			clusters:   tiered("p-a1", "x-c1"),
			bound:      []string{"p-a1", "x-c1"},
			want:       []string{"p-a1"},
			unsched:    []string{"x-c1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ft.Input(tt.policy, tt.clusters...)
			in.Bindings = ft.Bindings("test", tt.bound...)
			res := run(t, in)
			if diff := cmp.Diff(tt.want, res.Selected); diff != "" {
				t.Errorf("Selected (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.unsched, res.Unschedule); diff != "" {
				t.Errorf("Unschedule (-want +got):\n%s", diff)
			}
			if res.Reason != tt.wantReason {
				t.Errorf("condition reason = %s, want %s: %s", res.Reason, tt.wantReason, res.Message)
			}
			for name, want := range tt.reasons {
				if diff := cmp.Diff(want, decisionOf(t, res, name).Reason); diff != "" {
					t.Errorf("reason of %s (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

func TestPickNReportsThePreferenceScore(t *testing.T) {
	res := run(t, ft.Input(pickN(1, preferringGroups("primary", "secondary")), tiered("p-a1", "s-b1")...))
	for name, want := range map[string]*placementv1beta1.ClusterScore{
		"p-a1": {AffinityScore: ft.Ptr[int32](0), TopologySpreadScore: ft.Ptr[int32](0), PreferenceScore: ft.Ptr[int32](2)},
		"s-b1": {AffinityScore: ft.Ptr[int32](0), TopologySpreadScore: ft.Ptr[int32](0), PreferenceScore: ft.Ptr[int32](1)},
	} {
		if diff := cmp.Diff(want, decisionOf(t, res, name).ClusterScore); diff != "" {
			t.Errorf("score of %s (-want +got):\n%s", name, diff)
		}
	}
}

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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

// preferring returns a PickN policy preferring the groups in order; each group
// is a matchLabels key=value ("" for an empty selector).
func preferring(groups ...string) *placementv1beta1.PlacementPolicy {
	p := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ft.Ptr[int32](1)}
	for _, g := range groups {
		sel := metav1.LabelSelector{}
		if k, v, ok := strings.Cut(g, "="); ok {
			sel.MatchLabels = map[string]string{k: v}
		}
		p.ClusterPreferences = append(p.ClusterPreferences, placementv1beta1.ClusterPreference{LabelSelector: sel})
	}
	return p
}

func fleet() []clusterv1beta1.MemberCluster {
	return []clusterv1beta1.MemberCluster{
		ft.Cluster("primary", ft.Labels("tier", "primary")),
		ft.Cluster("secondary", ft.Labels("tier", "secondary")),
		ft.Cluster("both", ft.Labels("tier", "secondary", "region", "eu")),
		ft.Cluster("none", ft.Labels("tier", "test")),
	}
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		want   map[string]string
	}{
		{
			name:   "without preferences every cluster passes",
			policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ft.Ptr[int32](1)},
			want:   map[string]string{"primary": "Success", "secondary": "Success", "both": "Success", "none": "Success"},
		},
		{
			name:   "a cluster in no group is a mismatch",
			policy: preferring("tier=primary", "tier=secondary"),
			want:   map[string]string{"primary": "Success", "secondary": "Success", "both": "Success", "none": "ClusterMismatch"},
		},
		{
			name:   "an empty selector last takes every other cluster",
			policy: preferring("tier=primary", ""),
			want:   map[string]string{"primary": "Success", "secondary": "Success", "both": "Success", "none": "Success"},
		},
		{
			name: "preferences are ignored outside PickN",
			policy: func() *placementv1beta1.PlacementPolicy {
				p := preferring("tier=primary")
				p.PlacementType, p.NumberOfClusters = placementv1beta1.PickAll, nil
				return p
			}(),
			want: map[string]string{"primary": "Success", "secondary": "Success", "both": "Success", "none": "Success"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ft.RunFilter(t, New(), ft.Input(tt.policy, fleet()...))
			if diff := cmp.Diff(tt.want, ft.Codes(got)); diff != "" {
				t.Errorf("codes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterSaysWhichGroupsTheClusterMisses(t *testing.T) {
	got := ft.RunFilter(t, New(), ft.Input(preferring("tier=primary", "tier=secondary"), fleet()...))
	want := "cluster labels match none of the 2 clusterPreferences (tier=primary; tier=secondary)"
	if diff := cmp.Diff(want, got["none"].Message()); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}

func TestScore(t *testing.T) {
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		want   map[string]int32
	}{
		{
			name:   "without preferences every cluster scores 0",
			policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ft.Ptr[int32](1)},
			want:   map[string]int32{"primary": 0, "secondary": 0, "both": 0, "none": 0},
		},
		{
			name:   "the first of two groups scores 2 and the second 1",
			policy: preferring("tier=primary", "tier=secondary"),
			want:   map[string]int32{"primary": 2, "secondary": 1, "both": 1, "none": 0},
		},
		{
			name:   "a cluster in several groups scores for the first it matches",
			policy: preferring("region=eu", "tier=secondary", "tier=primary"),
			want:   map[string]int32{"primary": 1, "secondary": 2, "both": 3, "none": 0},
		},
		{
			name:   "an empty selector last scores 1 for the clusters of no earlier group",
			policy: preferring("tier=primary", ""),
			want:   map[string]int32{"primary": 2, "secondary": 1, "both": 1, "none": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scores := ft.RunScore(t, New(), ft.Input(tt.policy, fleet()...))
			got := map[string]int32{}
			for name, s := range scores {
				if s.TopologySpreadScore != 0 || s.AffinityScore != 0 {
					t.Errorf("%s scores %+v besides the preference", name, s)
				}
				got[name] = s.PreferenceScore
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("preference scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnInvalidSelectorIsAnError(t *testing.T) {
	p := preferring("tier=primary")
	p.ClusterPreferences[0].LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}
	in := ft.Input(p, fleet()...)
	_, st := New().PreFilter(t.Context(), framework.NewCycleState(&in), p, nil)
	if !st.IsError() {
		t.Errorf("PreFilter() = %v, want an error status", st)
	}
}

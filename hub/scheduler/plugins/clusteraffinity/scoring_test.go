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

package clusteraffinity

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

const cpu = clusterv1beta1.PropertyAvailableCPU

func clusterWithCPU(name, cpu string, kv ...string) clusterv1beta1.MemberCluster {
	return ft.Cluster(name, ft.AvailableCPU(cpu), ft.Labels(kv...))
}

func TestScore(t *testing.T) {
	clusters := []clusterv1beta1.MemberCluster{
		clusterWithCPU("cpu-2", "2", "env", "dev"),
		clusterWithCPU("cpu-4", "4", "env", "prod"),
		clusterWithCPU("cpu-10", "10", "env", "prod"),
		clusterWithLabels("no-cpu", "env", "prod"),
	}
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		want   map[string]int32
	}{
		{
			name:   "without preferred terms every cluster scores 0",
			policy: nil,
			want:   map[string]int32{"cpu-2": 0, "cpu-4": 0, "cpu-10": 0, "no-cpu": 0},
		},
		{
			name:   "a cluster scores the weight of a term it matches",
			policy: preferring(weighted(20, labelTerm("env", "prod"))),
			want:   map[string]int32{"cpu-2": 0, "cpu-4": 20, "cpu-10": 20, "no-cpu": 20},
		},
		{
			name:   "weights of the matching terms add up, negative ones too",
			policy: preferring(weighted(20, labelTerm("env", "prod")), weighted(-5, propTerm(cpu, ge, "4")), weighted(7, placementv1beta1.ClusterSelectorTerm{})),
			want:   map[string]int32{"cpu-2": 7, "cpu-4": 22, "cpu-10": 22, "no-cpu": 27},
		},
		{
			name:   "a Descending sorter gives the largest value the full weight and the smallest none, linearly",
			policy: preferring(weighted(40, sortedBy(cpu, placementv1beta1.Descending))),
			want:   map[string]int32{"cpu-2": 0, "cpu-4": 10, "cpu-10": 40, "no-cpu": 0},
		},
		{
			name:   "an Ascending sorter gives the smallest value the full weight and the largest none, linearly",
			policy: preferring(weighted(40, sortedBy(cpu, placementv1beta1.Ascending))),
			want:   map[string]int32{"cpu-2": 40, "cpu-4": 30, "cpu-10": 0, "no-cpu": 0},
		},
		{
			name:   "a sorter only ranks the clusters that match its term's selectors",
			policy: preferring(weighted(40, and(labelTerm("env", "prod"), sortedBy(cpu, placementv1beta1.Descending)))),
			want:   map[string]int32{"cpu-2": 0, "cpu-4": 0, "cpu-10": 40, "no-cpu": 0},
		},
		{
			name:   "a negative weight scales too",
			policy: preferring(weighted(-40, sortedBy(cpu, placementv1beta1.Descending))),
			want:   map[string]int32{"cpu-2": 0, "cpu-4": -10, "cpu-10": -40, "no-cpu": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scores := ft.RunScore(t, New(), ft.Input(tt.policy, clusters...))
			got := map[string]int32{}
			for name, s := range scores {
				got[name] = s.AffinityScore
				if s.TopologySpreadScore != 0 {
					t.Errorf("cluster %s has topology spread score %d, want 0", name, s.TopologySpreadScore)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("affinity scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScoreGivesFullWeightWhenAllValuesAreEqual(t *testing.T) {
	clusters := []clusterv1beta1.MemberCluster{clusterWithCPU("a", "4"), clusterWithCPU("b", "4000m")}
	for _, order := range []placementv1beta1.PropertySortOrder{placementv1beta1.Ascending, placementv1beta1.Descending} {
		scores := ft.RunScore(t, New(), ft.Input(preferring(weighted(30, sortedBy(cpu, order))), clusters...))
		for name, s := range scores {
			if s.AffinityScore != 30 {
				t.Errorf("%s: cluster %s scores %d, want the full weight 30", order, name, s.AffinityScore)
			}
		}
	}
}

func sortStrings(s []string) { sort.Strings(s) }

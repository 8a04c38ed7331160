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
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

func TestCandidatesAreTheClustersWithTheLabelsATermAsksFor(t *testing.T) {
	clusters := []clusterv1beta1.MemberCluster{
		clusterWithLabels("a", "env", "prod", "zone", "1"),
		clusterWithLabels("b", "env", "dev", "zone", "1"),
		clusterWithLabels("c", "env", "prod", "zone", "2"),
		clusterWithLabels("d", "zone", "2"),
		clusterWithLabels("e", "env", "prod"),
	}
	members := make([]*clusterv1beta1.MemberCluster, len(clusters))
	for i := range clusters {
		members[i] = &clusters[i]
	}
	fleet := framework.NewFleet(1, members)
	cases := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		want   []string
		wantOK bool
	}{
		{"matchLabels: the clusters with the label", requiring(labelTerm("env", "prod")), []string{"a", "c", "e"}, true},
		{"several matchLabels: the clusters with all of them", requiring(labelTerm("env", "prod", "zone", "2")), []string{"c"}, true},
		{"In: the clusters with any of the values", requiring(exprTerm("zone", metav1.LabelSelectorOpIn, "2", "3")), []string{"c", "d"}, true},
		{"the built-in name label", requiring(exprTerm(clusterv1beta1.LabelClusterName, metav1.LabelSelectorOpIn, "b", "e", "z")), []string{"b", "e"}, true},
		{"a label no cluster has: none", requiring(labelTerm("env", "qa")), nil, true},
		{"other operators narrow nothing more", requiring(and(labelTerm("env", "prod"), exprTerm("zone", metav1.LabelSelectorOpNotIn, "1"))), []string{"a", "c", "e"}, true},
		{"properties narrow nothing more", requiring(and(labelTerm("env", "dev"), propTerm(clusterv1beta1.PropertyNodeCount, placementv1beta1.PropertySelectorGreaterThan, "2"))), []string{"b"}, true},
		{"several terms: the clusters any of them can match", requiring(labelTerm("env", "dev"), labelTerm("zone", "2")), []string{"b", "c", "d"}, true},
		{"a term without an equality requirement: cannot tell", requiring(labelTerm("env", "dev"), exprTerm("zone", metav1.LabelSelectorOpExists)), nil, false},
		{"a term of properties only: cannot tell", requiring(propTerm(clusterv1beta1.PropertyNodeCount, placementv1beta1.PropertySelectorGreaterThan, "2")), nil, false},
		{"no required terms: cannot tell", &placementv1beta1.PlacementPolicy{}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := ft.Input(tc.policy)
			in.Fleet = fleet
			cs := framework.NewCycleState(&in)
			at, ok := New().Candidates(t.Context(), cs, tc.policy, fleet)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			var got []string
			for _, i := range at {
				got = append(got, fleet.Members()[i].Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
			// Filter rejects every other cluster.
			for i, ci := range cs.Clusters() {
				if ok && !contains(at, int32(i)) && New().Filter(t.Context(), cs, tc.policy, ci) == nil {
					t.Errorf("cluster %s is no candidate, yet Filter passes it", ci.Name)
				}
			}
		})
	}
}

func contains(at []int32, i int32) bool {
	for _, a := range at {
		if a == i {
			return true
		}
	}
	return false
}

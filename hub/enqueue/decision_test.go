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

package enqueue

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestClusterMatters(t *testing.T) {
	three := int32(3)
	groupA := &placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"group": "a"}}}
	affinity := func(terms ...placementv1beta1.ClusterSelectorTerm) *placementv1beta1.Affinity {
		return &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: terms}}}
	}
	pickAllA := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll, Affinity: affinity(*groupA)}
	pickN := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: &three}
	pickNA := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: &three, Affinity: affinity(*groupA)}
	fixed := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"m", "other"}}
	fixedOther := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"other"}}
	byProperty := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll, Affinity: affinity(placementv1beta1.ClusterSelectorTerm{
		PropertySelector: &placementv1beta1.PropertySelector{MatchExpressions: []placementv1beta1.PropertySelectorRequirement{{Name: clusterv1beta1.PropertyNodeCount}}}})}
	byLocation := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll, Affinity: pickAllA.Affinity,
		LocationSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"region": "eu"}}}}
	inGroup := func(g string) *clusterv1beta1.MemberCluster {
		return &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "m", Labels: map[string]string{"group": g}}}
	}
	for _, tc := range []struct {
		name     string
		on       PlacementOnCluster
		old, new *clusterv1beta1.MemberCluster
		want     bool
	}{
		{"a placement on the cluster always cares", PlacementOnCluster{Policy: fixedOther, Bound: true}, inGroup("b"), inGroup("b"), true},
		{"a placement without a policy picks every cluster", PlacementOnCluster{}, inGroup("b"), inGroup("b"), true},
		{"PickAll cares about a cluster its labels select", PlacementOnCluster{Policy: pickAllA}, inGroup("a"), inGroup("a"), true},
		{"PickAll cares about a cluster that leaves its selection", PlacementOnCluster{Policy: pickAllA}, inGroup("a"), inGroup("b"), true},
		{"PickAll cares about a cluster that enters its selection", PlacementOnCluster{Policy: pickAllA}, inGroup("b"), inGroup("a"), true},
		{"PickAll ignores a cluster its labels never select", PlacementOnCluster{Policy: pickAllA}, inGroup("b"), inGroup("c"), false},
		{"a property term may select any cluster", PlacementOnCluster{Policy: byProperty}, inGroup("b"), inGroup("b"), true},
		{"location selectors are not evaluated here", PlacementOnCluster{Policy: byLocation}, inGroup("b"), inGroup("b"), true},
		{"dynamic selectors are not evaluated here", PlacementOnCluster{Policy: pickAllA, Dynamic: true}, inGroup("b"), inGroup("b"), true},
		{"a PickN that wants clusters cares about any cluster", PlacementOnCluster{Policy: pickN, Held: 2}, inGroup("b"), inGroup("b"), true},
		{"a full PickN keeps its clusters", PlacementOnCluster{Policy: pickN, Held: 3}, inGroup("b"), inGroup("b"), false},
		{"a PickN that wants clusters ignores one its labels never select", PlacementOnCluster{Policy: pickNA, Held: 0}, inGroup("b"), inGroup("b"), false},
		{"a PickN that wants clusters cares about one its labels select", PlacementOnCluster{Policy: pickNA, Held: 0}, inGroup("b"), inGroup("a"), true},
		{"PickFixed cares about a cluster it names", PlacementOnCluster{Policy: fixed}, inGroup("b"), inGroup("b"), true},
		{"PickFixed ignores a cluster it does not name", PlacementOnCluster{Policy: fixedOther}, inGroup("a"), inGroup("a"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClusterMatters(tc.on, tc.old, tc.new); got != tc.want {
				t.Errorf("ClusterMatters = %v, want %v", got, tc.want)
			}
		})
	}
}

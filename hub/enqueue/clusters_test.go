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

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

func member(mutate ...func(*clusterv1beta1.MemberCluster)) *clusterv1beta1.MemberCluster {
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "m", Labels: map[string]string{"env": "prod"}}}
	conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue, "Connected", "", 1)
	mc.Status.Properties = map[string]clusterv1beta1.PropertyValue{clusterv1beta1.PropertyNodeCount: {Value: "3"}}
	for _, m := range mutate {
		m(mc)
	}
	return mc
}

func TestDiffCluster(t *testing.T) {
	for _, tc := range []struct {
		name string
		new  *clusterv1beta1.MemberCluster
		want ClusterChange
	}{
		{"a heartbeat refresh changes nothing a placement reads", member(func(mc *clusterv1beta1.MemberCluster) {
			mc.Status.LastHeartbeatTime = &metav1.Time{}
		}), ClusterChange{}},
		{"a label change matters to every placement", member(func(mc *clusterv1beta1.MemberCluster) { mc.Labels["env"] = "dev" }), ClusterChange{Placement: true}},
		{"a taint matters to every placement", member(func(mc *clusterv1beta1.MemberCluster) {
			mc.Spec.Taints = []clusterv1beta1.Taint{{Key: "k", Effect: clusterv1beta1.TaintEffectNoSchedule}}
		}), ClusterChange{Placement: true}},
		{"a lost agent matters to every placement", member(func(mc *clusterv1beta1.MemberCluster) {
			conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse, "Lost", "", 1)
		}), ClusterChange{Placement: true}},
		{"a new condition message alone does not", member(func(mc *clusterv1beta1.MemberCluster) {
			conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue, "Connected", "again", 1)
		}), ClusterChange{}},
		{"a property change names the property", member(func(mc *clusterv1beta1.MemberCluster) {
			mc.Status.Properties[clusterv1beta1.PropertyNodeCount] = clusterv1beta1.PropertyValue{Value: "4"}
		}), ClusterChange{Properties: []string{clusterv1beta1.PropertyNodeCount}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DiffCluster(member(), tc.new)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DiffCluster (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUsesProperty(t *testing.T) {
	sorter := &placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PreferredClusterSelector{{Weight: 10,
			Preference: placementv1beta1.ClusterSelectorTerm{PropertySorter: &placementv1beta1.PropertySorter{Name: clusterv1beta1.PropertyAvailableCPU}}}},
	}}}
	for _, tc := range []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		props  []string
		want   bool
	}{
		{"a policy without affinity uses no property", nil, []string{clusterv1beta1.PropertyNodeCount}, false},
		{"a property sorter uses its property", sorter, []string{clusterv1beta1.PropertyAvailableCPU}, true},
		{"a property sorter does not use another", sorter, []string{clusterv1beta1.PropertyNodeCount}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UsesProperty(tc.policy, tc.props); got != tc.want {
				t.Errorf("UsesProperty = %v, want %v", got, tc.want)
			}
		})
	}
}

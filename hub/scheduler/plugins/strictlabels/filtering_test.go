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

package strictlabels

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

func strictClusterWithLabels(kv ...string) clusterv1beta1.MemberCluster {
	return ft.Cluster("member-1", ft.StrictMatchLabels(), ft.Labels(kv...))
}

func relaxedClusterWithLabels(kv ...string) clusterv1beta1.MemberCluster {
	return ft.Cluster("member-1", ft.Labels(kv...))
}

func selecting(terms ...placementv1beta1.ClusterSelectorTerm) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: terms},
	}}}
}

func labelTerm(kv ...string) placementv1beta1.ClusterSelectorTerm {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: m}}
}

func nodesAtLeast(n string) placementv1beta1.ClusterSelectorTerm {
	return placementv1beta1.ClusterSelectorTerm{PropertySelector: &placementv1beta1.PropertySelector{
		MatchExpressions: []placementv1beta1.PropertySelectorRequirement{{
			Name: clusterv1beta1.PropertyNodeCount, Operator: placementv1beta1.PropertySelectorGreaterThanOrEqualTo, Values: []string{n},
		}},
	}}
}

func dynamic(kv ...string) []framework.DynamicSelector {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return []framework.DynamicSelector{{MatchLabels: m, Source: framework.SourceResourceWorkflow}}
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name     string
		cluster  clusterv1beta1.MemberCluster
		policy   *placementv1beta1.PlacementPolicy
		dynamic  []framework.DynamicSelector
		wantPass bool
	}{
		{
			name:     "a placement without a selector goes to a relaxed cluster",
			cluster:  relaxedClusterWithLabels("env", "dev"),
			wantPass: true,
		},
		{
			name:     "a placement without a selector skips a strict cluster",
			cluster:  strictClusterWithLabels("env", "dev"),
			wantPass: false,
		},
		{
			name:     "a placement without a selector skips a strict cluster without labels",
			cluster:  strictClusterWithLabels(),
			wantPass: false,
		},
		{
			name:     "a placement whose selector matches the strict cluster's labels goes there",
			cluster:  strictClusterWithLabels("env", "dev", "zone", "eu"),
			policy:   selecting(labelTerm("env", "dev")),
			wantPass: true,
		},
		{
			name:     "a placement selecting only by property skips a strict cluster",
			cluster:  strictClusterWithLabels("env", "dev"),
			policy:   selecting(nodesAtLeast("1")),
			wantPass: false,
		},
		{
			name:     "a placement whose only label-selecting term does not match skips a strict cluster even if a property term would select it",
			cluster:  strictClusterWithLabels("env", "dev"),
			policy:   selecting(labelTerm("env", "prod"), nodesAtLeast("1")),
			wantPass: false,
		},
		{
			name:     "one matching label-selecting term among several is enough",
			cluster:  strictClusterWithLabels("env", "dev"),
			policy:   selecting(labelTerm("env", "prod"), labelTerm("env", "dev")),
			wantPass: true,
		},
		{
			name:     "a dynamic selector is a selector: it lets the placement onto a strict cluster it matches",
			cluster:  strictClusterWithLabels("env", "dev"),
			dynamic:  dynamic("env", "dev"),
			wantPass: true,
		},
		{
			name:     "selecting a strict cluster by its built-in name label is explicit",
			cluster:  strictClusterWithLabels(),
			policy:   selecting(labelTerm(clusterv1beta1.LabelClusterName, "member-1")),
			wantPass: true,
		},
		{
			name:     "a PickFixed placement naming a strict cluster goes there",
			cluster:  strictClusterWithLabels("env", "dev"),
			policy:   &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"member-1"}},
			wantPass: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ft.Input(tt.policy, tt.cluster)
			in.DynamicSelectors = tt.dynamic
			got := ft.RunFilter(t, New(), in)["member-1"]
			if tt.wantPass != got.IsSuccess() {
				t.Errorf("Filter() = %v, want pass = %v", got, tt.wantPass)
			}
			if !got.IsSuccess() && got.Code() != framework.ClusterMismatch {
				t.Errorf("Filter() code = %v, want ClusterMismatch", got.Code())
			}
		})
	}
}

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

func unhealthy() ft.ClusterOption {
	return ft.Condition(clusterv1beta1.ConditionHealthy, metav1.ConditionFalse, time.Minute)
}

func notJoined() ft.ClusterOption {
	return ft.Condition(clusterv1beta1.ConditionJoined, metav1.ConditionFalse, time.Minute)
}

func maintenance(effect clusterv1beta1.TaintEffect) ft.ClusterOption {
	return ft.Taints(ft.Taint("maintenance", "true", effect))
}

func TestPickAll(t *testing.T) {
	tests := []struct {
		name     string
		policy   *placementv1beta1.PlacementPolicy
		clusters []clusterv1beta1.MemberCluster
		bound    []string
		want     []string
		unsched  []string
		// reasons are the expected decision reasons of some clusters.
		reasons    map[string]string
		filteredBy map[string]string
	}{
		{
			name:     "no policy places on every eligible cluster",
			policy:   nil,
			clusters: []clusterv1beta1.MemberCluster{ft.Cluster("a"), ft.Cluster("b"), ft.Cluster("c", notJoined())},
			want:     []string{"a", "b"},
			reasons: map[string]string{
				"a": "picked: matches the scheduling policy",
				"c": "cluster has not joined the fleet (Joined is False: Test)",
			},
			filteredBy: map[string]string{"c": "ClusterEligibility"},
		},
		{
			name:       "required affinity selects the matching clusters",
			policy:     pickAll(requiring("env", "dev")),
			clusters:   []clusterv1beta1.MemberCluster{clusterWithLabels("dev", "env", "dev"), clusterWithLabels("prod", "env", "prod")},
			want:       []string{"dev"},
			reasons:    map[string]string{"prod": "cluster labels do not match the required selector env=dev"},
			filteredBy: map[string]string{"prod": "ClusterAffinity"},
		},
		{
			name:     "an untolerated taint keeps a new placement off",
			policy:   nil,
			clusters: []clusterv1beta1.MemberCluster{ft.Cluster("a"), ft.Cluster("b", maintenance(clusterv1beta1.TaintEffectNoSchedule))},
			want:     []string{"a"},
			reasons:  map[string]string{"b": "taint maintenance=true:NoSchedule is not tolerated"},
		},
		{
			name:     "a tolerated taint does not",
			policy:   pickAll(tolerating("maintenance", "true")),
			clusters: []clusterv1beta1.MemberCluster{ft.Cluster("a"), ft.Cluster("b", maintenance(clusterv1beta1.TaintEffectNoSchedule))},
			want:     []string{"a", "b"},
		},
		{
			name:     "a newly joined matching cluster is added, the others are kept",
			policy:   pickAll(requiring("env", "dev")),
			clusters: []clusterv1beta1.MemberCluster{clusterWithLabels("old", "env", "dev"), clusterWithLabels("new", "env", "dev")},
			bound:    []string{"old"},
			want:     []string{"new", "old"},
			reasons:  map[string]string{"old": "kept: the placement is already on the cluster", "new": "picked: matches the scheduling policy"},
		},
		{
			name:       "a cluster that stops matching is unscheduled",
			policy:     pickAll(requiring("env", "dev")),
			clusters:   []clusterv1beta1.MemberCluster{clusterWithLabels("a", "env", "dev"), clusterWithLabels("b", "env", "prod")},
			bound:      []string{"a", "b"},
			want:       []string{"a"},
			unsched:    []string{"b"},
			reasons:    map[string]string{"b": "no longer matches the policy: cluster labels do not match the required selector env=dev"},
			filteredBy: map[string]string{"b": "ClusterAffinity"},
		},
		{
			name:     "a cluster the placement is on stays when it becomes unhealthy, and the decision says so",
			policy:   nil,
			clusters: []clusterv1beta1.MemberCluster{ft.Cluster("a", unhealthy())},
			bound:    []string{"a"},
			want:     []string{"a"},
			reasons: map[string]string{"a": "kept: the placement is already on the cluster; it could not take the placement anew: " +
				"cluster is not healthy (Healthy is False: Test)"},
		},
		{
			name:     "a cluster the placement is on stays when it is leaving",
			policy:   nil,
			clusters: []clusterv1beta1.MemberCluster{ft.Cluster("a", ft.Leaving())},
			bound:    []string{"a"},
			want:     []string{"a"},
		},
		{
			name:     "a cluster the placement is on stays when it gets a NoSchedule taint",
			policy:   nil,
			clusters: []clusterv1beta1.MemberCluster{ft.Cluster("a", maintenance(clusterv1beta1.TaintEffectNoSchedule))},
			bound:    []string{"a"},
			want:     []string{"a"},
		},
		{
			name:     "a cluster the placement is on stays when it gets a NoExecute taint, which is reported",
			policy:   nil,
			clusters: []clusterv1beta1.MemberCluster{ft.Cluster("a", maintenance(clusterv1beta1.TaintEffectNoExecute))},
			bound:    []string{"a"},
			want:     []string{"a"},
			reasons: map[string]string{"a": "kept: the placement is already on the cluster; it could not take the placement anew: " +
				"taint maintenance=true:NoExecute is not tolerated (the placement stays until its toleration runs out)"},
		},
		{
			name:     "the binding to a cluster that no longer exists is unscheduled",
			policy:   nil,
			clusters: []clusterv1beta1.MemberCluster{ft.Cluster("a")},
			bound:    []string{"a", "gone"},
			want:     []string{"a"},
			unsched:  []string{"gone"},
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
			for name, want := range tt.reasons {
				if diff := cmp.Diff(want, decisionOf(t, res, name).Reason); diff != "" {
					t.Errorf("reason of %s (-want +got):\n%s", name, diff)
				}
			}
			for name, want := range tt.filteredBy {
				if got := decisionOf(t, res, name).FilteredBy; got != want {
					t.Errorf("FilteredBy of %s = %q, want %q", name, got, want)
				}
			}
			if res.Status != metav1.ConditionTrue || res.Reason != placementv1beta1.ReasonSchedulingPolicyFulfilled {
				t.Errorf("condition = %s %s: %s", res.Status, res.Reason, res.Message)
			}
		})
	}
}

func TestPickAllWithNothingThatFitsFails(t *testing.T) {
	in := ft.Input(pickAll(requiring("env", "dev")),
		clusterWithLabels("member-1", "env", "prod"),
		ft.Cluster("member-2", ft.Labels("env", "dev"), maintenance(clusterv1beta1.TaintEffectNoSchedule)),
		ft.Cluster("member-3", ft.Labels("env", "dev"), notJoined()))
	res := run(t, in)
	if res.Status != metav1.ConditionFalse || res.Reason != placementv1beta1.ReasonScheduleFailed {
		t.Errorf("condition = %s %s", res.Status, res.Reason)
	}
	want := "0 clusters selected; member-1: cluster labels do not match the required selector env=dev; " +
		"member-2: taint maintenance=true:NoSchedule is not tolerated; " +
		"member-3: cluster has not joined the fleet (Joined is False: Test)"
	if diff := cmp.Diff(want, res.Message); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}

func TestPickAllWithoutClustersFails(t *testing.T) {
	res := run(t, ft.Input(nil))
	if res.Reason != placementv1beta1.ReasonScheduleFailed || res.Message != "0 clusters selected: there are no member clusters" {
		t.Errorf("condition = %s: %s", res.Reason, res.Message)
	}
}

func TestMessageNamesAtMostTenLeftOutClusters(t *testing.T) {
	var clusters []clusterv1beta1.MemberCluster
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		clusters = append(clusters, ft.Cluster(n, notJoined()))
	}
	clusters = append(clusters, ft.Cluster("ok"))
	res := run(t, ft.Input(nil, clusters...))
	want := "1 cluster selected"
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		want += "; " + n + ": cluster has not joined the fleet (Joined is False: Test)"
	}
	want += "; and 2 more clusters left out"
	if diff := cmp.Diff(want, res.Message); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}

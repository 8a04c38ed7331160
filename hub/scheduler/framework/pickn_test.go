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
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

// fleet has two prod clusters, which the placements below prefer, and two dev ones.
func fleet() []clusterv1beta1.MemberCluster {
	return []clusterv1beta1.MemberCluster{
		clusterWithLabels("dev-1", "env", "dev"), clusterWithLabels("dev-2", "env", "dev"),
		clusterWithLabels("prod-1", "env", "prod"), clusterWithLabels("prod-2", "env", "prod"),
	}
}

func TestPickN(t *testing.T) {
	preferProd := preferring(10, "env", "prod")
	tests := []struct {
		name      string
		policy    *placementv1beta1.PlacementPolicy
		clusters  []clusterv1beta1.MemberCluster
		bound     []string
		want      []string
		unsched   []string
		misplaced map[string]string
		reasons   map[string]string
	}{
		{
			name:    "picks the best-scoring clusters",
			policy:  pickN(2, preferProd),
			want:    []string{"prod-1", "prod-2"},
			reasons: map[string]string{"prod-1": "picked: among the best-scoring clusters that match the scheduling policy", "dev-1": "not picked: the policy's number of clusters was reached with clusters scoring as high or higher"},
		},
		{
			name:   "without a Rand, equal scores are broken by name",
			policy: pickN(3, preferProd),
			want:   []string{"dev-1", "prod-1", "prod-2"},
		},
		{
			name:   "a cluster the placement is on is kept even when a better one exists",
			policy: pickN(1, preferProd),
			bound:  []string{"dev-2"},
			want:   []string{"dev-2"},
		},
		{
			name:   "scaling up keeps the clusters the placement is on and adds the best new ones",
			policy: pickN(3, preferProd),
			bound:  []string{"dev-2"},
			want:   []string{"dev-2", "prod-1", "prod-2"},
		},
		{
			name:    "scaling down removes the lowest-scoring clusters first",
			policy:  pickN(2, preferProd),
			bound:   []string{"dev-1", "dev-2", "prod-1", "prod-2"},
			want:    []string{"prod-1", "prod-2"},
			unsched: []string{"dev-1", "dev-2"},
			reasons: map[string]string{"dev-1": "removed to scale down to numberOfClusters: among the lowest-scoring clusters"},
		},
		{
			name:    "scaling down among equal scores removes the last by name first",
			policy:  pickN(1),
			bound:   []string{"dev-1", "dev-2"},
			want:    []string{"dev-1"},
			unsched: []string{"dev-2"},
		},
		{
			name:    "zero clusters removes the placement from every cluster",
			policy:  pickN(0),
			bound:   []string{"dev-1", "prod-1"},
			want:    nil,
			unsched: []string{"dev-1", "prod-1"},
		},
		{
			name:      "a kept cluster that stops matching is misplaced, not moved, and still counts",
			policy:    pickN(1, requiring("env", "prod")),
			bound:     []string{"dev-1"},
			want:      []string{"dev-1"},
			misplaced: map[string]string{"dev-1": "no longer matches the policy: cluster labels do not match the required selector env=prod"},
			reasons: map[string]string{"dev-1": "misplaced: it no longer matches the policy (cluster labels do not match the required selector env=prod); " +
				"kept, as a placed workload is not moved"},
		},
		{
			name:      "scaling up next to a misplaced cluster adds matching ones",
			policy:    pickN(2, requiring("env", "prod")),
			bound:     []string{"dev-1"},
			want:      []string{"dev-1", "prod-1"},
			misplaced: map[string]string{"dev-1": "no longer matches the policy: cluster labels do not match the required selector env=prod"},
		},
		{
			name:    "scaling down removes misplaced clusters before the lowest-scoring ones",
			policy:  pickN(1, requiring("env", "dev"), preferring(10, clusterv1beta1.LabelClusterName, "dev-1")),
			bound:   []string{"dev-1", "prod-1"},
			want:    []string{"dev-1"},
			unsched: []string{"prod-1"},
			reasons: map[string]string{"prod-1": "removed to scale down to numberOfClusters: it no longer matches the policy: " +
				"cluster labels do not match the required selector env=dev"},
		},
		{
			name:   "a property sorter ranks the clusters",
			policy: pickN(1, sortingBy(10, clusterv1beta1.PropertyAvailableCPU, placementv1beta1.Descending)),
			clusters: []clusterv1beta1.MemberCluster{
				ft.Cluster("small", ft.AvailableCPU("2")), ft.Cluster("large", ft.AvailableCPU("32")), ft.Cluster("medium", ft.AvailableCPU("8")),
			},
			want: []string{"large"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clusters := tt.clusters
			if clusters == nil {
				clusters = fleet()
			}
			in := ft.Input(tt.policy, clusters...)
			in.Bindings = ft.Bindings("test", tt.bound...)
			res := run(t, in)
			if diff := cmp.Diff(tt.want, res.Selected); diff != "" {
				t.Errorf("Selected (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.unsched, res.Unschedule); diff != "" {
				t.Errorf("Unschedule (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.misplaced, res.Misplaced); diff != "" {
				t.Errorf("Misplaced (-want +got):\n%s", diff)
			}
			for name, want := range tt.reasons {
				if diff := cmp.Diff(want, decisionOf(t, res, name).Reason); diff != "" {
					t.Errorf("reason of %s (-want +got):\n%s", name, diff)
				}
			}
			if res.Status != metav1.ConditionTrue || res.Reason != placementv1beta1.ReasonSchedulingPolicyFulfilled {
				t.Errorf("condition = %s %s: %s", res.Status, res.Reason, res.Message)
			}
		})
	}
}

func TestPickNReportsScores(t *testing.T) {
	res := run(t, ft.Input(pickN(1, preferring(10, "env", "prod"), preferring(3, "env", "dev")), fleet()...))
	want := placementv1beta1.ClusterDecision{
		ClusterName:   "prod-1",
		Selected:      true,
		ClusterScore:  &placementv1beta1.ClusterScore{AffinityScore: ft.Ptr[int32](10), TopologySpreadScore: ft.Ptr[int32](0)},
		Reason:        "picked: among the best-scoring clusters that match the scheduling policy",
		PassedFilters: []string{"ClusterEligibility"},
	}
	if diff := cmp.Diff(want, decisionOf(t, res, "prod-1")); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
	if got := *decisionOf(t, res, "dev-1").ClusterScore.AffinityScore; got != 3 {
		t.Errorf("affinity score of dev-1 = %d, want 3", got)
	}
}

func TestPickNWithFewerClustersThanAsked(t *testing.T) {
	tests := []struct {
		name       string
		n          int32
		wantReason string
		wantMsg    string
	}{
		{
			name: "some fit: unfulfilled", n: 3, wantReason: placementv1beta1.ReasonSchedulingPolicyUnfulfilled,
			wantMsg: "2 of 3 clusters selected; dev-1: cluster labels do not match the required selector env=prod; " +
				"dev-2: cluster labels do not match the required selector env=prod",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, ft.Input(pickN(tt.n, requiring("env", "prod")), fleet()...))
			if res.Status != metav1.ConditionFalse || res.Reason != tt.wantReason {
				t.Errorf("condition = %s %s", res.Status, res.Reason)
			}
			if diff := cmp.Diff(tt.wantMsg, res.Message); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
	res := run(t, ft.Input(pickN(2, requiring("env", "test")), fleet()...))
	if res.Status != metav1.ConditionFalse || res.Reason != placementv1beta1.ReasonScheduleFailed {
		t.Errorf("with nothing matching, condition = %s %s, want ScheduleFailed", res.Status, res.Reason)
	}
}

func TestPickNBreaksTiesAtRandomAndDeterministicallyPerSeed(t *testing.T) {
	in := ft.Input(pickN(2), fleet()...)
	picks := map[string]int{}
	for seed := int64(0); seed < 40; seed++ {
		in.Rand = rand.New(rand.NewSource(seed))
		first := run(t, in)
		in.Rand = rand.New(rand.NewSource(seed))
		second := run(t, in)
		if diff := cmp.Diff(first.Selected, second.Selected); diff != "" {
			t.Fatalf("seed %d picked differently twice (-first +second):\n%s", seed, diff)
		}
		for _, c := range first.Selected {
			picks[c]++
		}
	}
	for _, c := range []string{"dev-1", "dev-2", "prod-1", "prod-2"} {
		if picks[c] == 0 {
			t.Errorf("cluster %s was never picked in 40 seeds: %v", c, picks)
		}
	}
}

func TestPickNDoesNotDependOnTheOrderOfTheClusters(t *testing.T) {
	clusters := fleet()
	reversed := []clusterv1beta1.MemberCluster{clusters[3], clusters[2], clusters[1], clusters[0]}
	for seed := int64(0); seed < 10; seed++ {
		a, b := ft.Input(pickN(2), clusters...), ft.Input(pickN(2), reversed...)
		a.Rand, b.Rand = rand.New(rand.NewSource(seed)), rand.New(rand.NewSource(seed))
		if diff := cmp.Diff(run(t, a), run(t, b)); diff != "" {
			t.Fatalf("seed %d: results differ with the clusters reversed (-in order +reversed):\n%s", seed, diff)
		}
	}
}

// zoned returns healthy clusters named after their zone: "a1" is in zone a.
func zoned(names ...string) []clusterv1beta1.MemberCluster {
	out := make([]clusterv1beta1.MemberCluster, len(names))
	for i, n := range names {
		if n[0] == '-' {
			out[i] = ft.Cluster(n[1:]) // no zone
			continue
		}
		out[i] = clusterWithLabels(n, "zone", n[:1])
	}
	return out
}

func TestPickNTopologySpread(t *testing.T) {
	dns, anyway := placementv1beta1.DoNotSchedule, placementv1beta1.ScheduleAnyway
	tests := []struct {
		name       string
		policy     *placementv1beta1.PlacementPolicy
		clusters   []clusterv1beta1.MemberCluster
		bound      []string
		want       []string
		unsched    []string
		wantReason string
		reasons    map[string]string
		filteredBy map[string]string
	}{
		{
			name:       "DoNotSchedule spreads over the zones even against affinity",
			policy:     pickN(3, spreading("zone", 1, dns), preferring(50, "zone", "a")),
			clusters:   zoned("a1", "a2", "a3", "b1", "c1"),
			want:       []string{"a1", "b1", "c1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "DoNotSchedule picks fewer clusters than asked rather than exceed maxSkew",
			policy:     pickN(4, spreading("zone", 1, dns)),
			clusters:   zoned("a1", "a2", "a3", "b1"),
			want:       []string{"a1", "a2", "b1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyUnfulfilled,
			reasons:    map[string]string{"a3": "picking the cluster would make the spread over zone exceed maxSkew 1"},
			filteredBy: map[string]string{"a3": "TopologySpread"},
		},
		{
			name:       "a larger maxSkew allows more in one zone",
			policy:     pickN(4, spreading("zone", 2, dns)),
			clusters:   zoned("a1", "a2", "a3", "b1"),
			want:       []string{"a1", "a2", "a3", "b1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "DoNotSchedule leaves out a cluster without the topology key",
			policy:     pickN(3, spreading("zone", 1, dns)),
			clusters:   zoned("a1", "b1", "-nozone"),
			want:       []string{"a1", "b1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyUnfulfilled,
			reasons:    map[string]string{"nozone": "cluster has no label zone, the topology key of a DoNotSchedule topology spread constraint"},
			filteredBy: map[string]string{"nozone": "TopologySpread"},
		},
		{
			name:       "ScheduleAnyway prefers spreading but still picks",
			policy:     pickN(4, spreading("zone", 1, anyway)),
			clusters:   zoned("a1", "a2", "a3", "b1"),
			want:       []string{"a1", "a2", "a3", "b1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "ScheduleAnyway picks a cluster without the topology key last",
			policy:     pickN(3, spreading("zone", 1, anyway)),
			clusters:   zoned("-aaa", "a1", "a2", "b1"),
			want:       []string{"a1", "a2", "b1"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "spread counts the clusters the placement is on",
			policy:     pickN(3, spreading("zone", 1, dns)),
			clusters:   zoned("a1", "a2", "b1", "b2"),
			bound:      []string{"b2"},
			want:       []string{"a1", "a2", "b2"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "the clusters the placement is on are not moved to improve the spread",
			policy:     pickN(2, spreading("zone", 1, dns)),
			clusters:   zoned("a1", "a2", "b1"),
			bound:      []string{"a1", "a2"},
			want:       []string{"a1", "a2"},
			wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "scaling down removes from the most crowded zone first",
			policy:     pickN(2, spreading("zone", 1, dns)),
			clusters:   zoned("a1", "a2", "b1"),
			bound:      []string{"a1", "a2", "b1"},
			want:       []string{"a1", "b1"},
			unsched:    []string{"a2"},
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
			for name, want := range tt.filteredBy {
				if got := decisionOf(t, res, name).FilteredBy; got != want {
					t.Errorf("FilteredBy of %s = %q, want %q", name, got, want)
				}
			}
		})
	}
}

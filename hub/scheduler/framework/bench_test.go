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
	"fmt"
	"math/rand"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
)

// benchFleet returns n clusters over 10 zones, 80% prod, with node counts and
// available CPU; 2% are unhealthy and 2% tainted.
func benchFleet(n int) []clusterv1beta1.MemberCluster {
	r := rand.New(rand.NewSource(int64(n)))
	out := make([]clusterv1beta1.MemberCluster, n)
	for i := range out {
		env := "prod"
		if r.Intn(5) == 0 {
			env = "dev"
		}
		opts := []ft.ClusterOption{
			ft.Labels("env", env, "zone", fmt.Sprintf("zone-%d", r.Intn(10)), "region", fmt.Sprintf("region-%d", r.Intn(3))),
			ft.Property(clusterv1beta1.PropertyNodeCount, fmt.Sprint(1+r.Intn(10))),
			ft.Resources(corev1.ResourceCPU, "64", "60", fmt.Sprint(r.Intn(60))),
		}
		switch r.Intn(50) {
		case 0:
			opts = append(opts, ft.Condition(clusterv1beta1.ConditionHealthy, metav1.ConditionFalse, time.Minute))
		case 1:
			opts = append(opts, ft.Taints(ft.Taint("maintenance", "true", clusterv1beta1.TaintEffectNoSchedule)))
		}
		out[i] = ft.Cluster(fmt.Sprintf("member-%05d", i), opts...)
	}
	return out
}

// benchAffinity adds the benchmark's required and preferred affinity: prod
// clusters with at least 2 nodes, preferring two zones and more available CPU.
func benchAffinity(p *placementv1beta1.PlacementPolicy) {
	ca := clusterAffinity(p)
	ca.RequiredDuringSchedulingIgnoredDuringExecution = &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod"}}}},
		PropertySelector: &placementv1beta1.PropertySelector{MatchExpressions: []placementv1beta1.PropertySelectorRequirement{{
			Name: clusterv1beta1.PropertyNodeCount, Operator: placementv1beta1.PropertySelectorGreaterThanOrEqualTo, Values: []string{"2"},
		}}},
	}}}
	ca.PreferredDuringSchedulingIgnoredDuringExecution = []placementv1beta1.PreferredClusterSelector{
		{Weight: 20, Preference: placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"zone-1", "zone-2"}}},
		}}},
		{Weight: 30, Preference: placementv1beta1.ClusterSelectorTerm{PropertySorter: &placementv1beta1.PropertySorter{
			Name: clusterv1beta1.PropertyAvailableCPU, SortOrder: placementv1beta1.Descending,
		}}},
	}
}

func benchmarkCycle(b *testing.B, policy *placementv1beta1.PlacementPolicy) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			fw := plugins.NewFramework(framework.Options{})
			in := ft.Input(policy, benchFleet(n)...)
			in.Rand = rand.New(rand.NewSource(1))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fw.RunCycle(b.Context(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPickAll is one PickAll cycle with required and preferred affinity
// (including a property sorter) and no existing bindings.
func BenchmarkPickAll(b *testing.B) {
	benchmarkCycle(b, pickAll(benchAffinity))
}

// BenchmarkPickN is one PickN (N=10) cycle with required and preferred affinity
// (including a property sorter) and a DoNotSchedule topology spread constraint
// over 10 zones, with no existing bindings.
func BenchmarkPickN(b *testing.B) {
	benchmarkCycle(b, pickN(10, benchAffinity, spreading("zone", 1, placementv1beta1.DoNotSchedule)))
}

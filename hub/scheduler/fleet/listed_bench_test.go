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

package fleet_test

import (
	"fmt"
	"math/rand"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// The benchmarks of this file measure a scheduling cycle the way the scheduler
// ran it before the fleet snapshot: list every MemberCluster from the informer
// cache (without deep copies), scan them for disconnected ones, and run the
// cycle over the listed copies. They only use the framework's CycleInput.Clusters,
// so the same file runs against earlier commits for before/after numbers.

var benchSizes = []int{1000, 10000, 50000}

// benchMembers returns n clusters over 10 zones and 3 regions, 80% prod, with
// node counts and available CPU; 2% are unhealthy and 2% tainted.
func benchMembers(n int) []*clusterv1beta1.MemberCluster {
	r := rand.New(rand.NewSource(int64(n)))
	out := make([]*clusterv1beta1.MemberCluster, n)
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
		mc := ft.Cluster(fmt.Sprintf("member-%05d", i), opts...)
		out[i] = &mc
	}
	return out
}

// benchPolicies are the cycles measured: PickN 10 and PickAll, both requiring
// prod clusters with at least 2 nodes and preferring two zones and more
// available CPU; PickN also spreads over zones (DoNotSchedule).
func benchPolicies() map[string]*placementv1beta1.PlacementPolicy {
	affinity := func() *placementv1beta1.Affinity {
		return &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
				PropertySelector: &placementv1beta1.PropertySelector{MatchExpressions: []placementv1beta1.PropertySelectorRequirement{{
					Name: clusterv1beta1.PropertyNodeCount, Operator: placementv1beta1.PropertySelectorGreaterThanOrEqualTo, Values: []string{"2"},
				}}},
			}}},
			PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PreferredClusterSelector{
				{Weight: 20, Preference: placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"zone-1", "zone-2"}}},
				}}},
				{Weight: 30, Preference: placementv1beta1.ClusterSelectorTerm{PropertySorter: &placementv1beta1.PropertySorter{
					Name: clusterv1beta1.PropertyAvailableCPU, SortOrder: placementv1beta1.Descending,
				}}},
			},
		}}
	}
	ten := int32(10)
	return map[string]*placementv1beta1.PlacementPolicy{
		"PickN": {PlacementType: placementv1beta1.PickN, NumberOfClusters: &ten, Affinity: affinity(),
			TopologySpreadConstraints: []placementv1beta1.TopologySpreadConstraint{{
				MaxSkew: ft.Ptr(int32(1)), TopologyKey: "zone", WhenUnsatisfiable: placementv1beta1.DoNotSchedule,
			}}},
		"PickAll": {PlacementType: placementv1beta1.PickAll, Affinity: affinity()},
	}
}

// listFromCache lists the clusters as controller-runtime's cache reader does
// for a List with UnsafeDisableDeepCopy: the indexer's items, each through the
// meta accessor, set into a typed list (which copies each object's struct).
func listFromCache(b *testing.B, indexer cache.Indexer) []clusterv1beta1.MemberCluster {
	objs := indexer.List()
	runtimeObjs := make([]runtime.Object, 0, len(objs))
	for _, item := range objs {
		obj := item.(runtime.Object)
		if _, err := apimeta.Accessor(obj); err != nil {
			b.Fatal(err)
		}
		runtimeObjs = append(runtimeObjs, obj)
	}
	list := &clusterv1beta1.MemberClusterList{}
	if err := apimeta.SetList(list, runtimeObjs); err != nil {
		b.Fatal(err)
	}
	return list.Items
}

// disconnected counts the clusters whose AgentConnected condition is not True,
// as the scheduler's grace-period check scans them.
func disconnected(clusters []clusterv1beta1.MemberCluster) int {
	n := 0
	for i := range clusters {
		if c := conditions.Get(clusters[i].Status.Conditions, clusterv1beta1.ConditionAgentConnected); c == nil || c.Status != metav1.ConditionTrue {
			n++
		}
	}
	return n
}

// cpuTime returns the CPU time the process has used (user and system, every
// thread): on a shared machine it moves less with the load than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per iteration since start as cpu-ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkCycleListed is one scheduling cycle as the scheduler ran it before
// the fleet snapshot: list, scan, convert and schedule.
func BenchmarkCycleListed(b *testing.B) {
	policies := benchPolicies()
	for _, kind := range []string{"PickN", "PickAll"} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/members=%d", kind, n), func(b *testing.B) {
				indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
				for _, mc := range benchMembers(n) {
					if err := indexer.Add(mc); err != nil {
						b.Fatal(err)
					}
				}
				fw := plugins.NewFramework(framework.Options{})
				rnd := rand.New(rand.NewSource(1))
				b.ReportAllocs()
				defer reportCPU(b, cpuTime())
				for b.Loop() {
					clusters := listFromCache(b, indexer)
					_ = disconnected(clusters)
					in := framework.CycleInput{PlacementName: "bench", Policy: policies[kind], Clusters: clusters, Now: ft.Now, Rand: rnd}
					if _, err := fw.RunCycle(b.Context(), in); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

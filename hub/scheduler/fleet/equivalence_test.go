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
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/fleet"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
)

// TestACycleThroughTheSnapshotDecidesAsOneOverListedClusters runs the same
// cycle over random fleets twice: over the clusters as a list in any order (as
// the scheduler read them before the snapshot) and over the snapshot's view.
// The results must be identical.
func TestACycleThroughTheSnapshotDecidesAsOneOverListedClusters(t *testing.T) {
	fw := plugins.NewFramework(framework.Options{})
	rapid.Check(t, func(t *rapid.T) {
		var listed []clusterv1beta1.MemberCluster
		for i := range rapid.IntRange(0, 12).Draw(t, "members") {
			opts := []ft.ClusterOption{ft.Labels(
				"env", rapid.SampledFrom([]string{"prod", "dev"}).Draw(t, "env"),
				"zone", rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "zone"))}
			switch rapid.IntRange(0, 5).Draw(t, "state") {
			case 0:
				opts = append(opts, ft.Taints(ft.Taint("k", "v", clusterv1beta1.TaintEffectNoSchedule)))
			case 1:
				opts = append(opts, ft.Condition(clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse, time.Hour))
			case 2:
				opts = append(opts, ft.Leaving())
			}
			listed = append(listed, ft.Cluster(fmt.Sprintf("m%02d", i), opts...))
		}
		order := rapid.Permutation(listed).Draw(t, "order")
		names := make([]string, len(listed))
		for i := range listed {
			names[i] = listed[i].Name
		}
		policy := &placementv1beta1.PlacementPolicy{}
		switch rapid.IntRange(0, 2).Draw(t, "type") {
		case 0:
			policy.PlacementType = placementv1beta1.PickAll
		case 1:
			policy.PlacementType = placementv1beta1.PickN
			policy.NumberOfClusters = ft.Ptr(int32(rapid.IntRange(0, 6).Draw(t, "n")))
			if rapid.Bool().Draw(t, "spread") {
				policy.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{{
					MaxSkew: ft.Ptr(int32(1)), TopologyKey: "zone", WhenUnsatisfiable: placementv1beta1.DoNotSchedule,
				}}
			}
		default:
			policy.PlacementType = placementv1beta1.PickFixed
			policy.ClusterNames = rapid.SliceOfDistinct(rapid.SampledFrom(append(names, "missing")), rapid.ID).Draw(t, "named")
		}
		if policy.PlacementType != placementv1beta1.PickFixed && rapid.Bool().Draw(t, "affinity") {
			policy.Affinity = &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
				}}},
			}}
		}
		var bound []string
		if len(names) > 0 {
			bound = rapid.SliceOfDistinct(rapid.SampledFrom(names), rapid.ID).Draw(t, "bound")
		}
		seed := rapid.Int64().Draw(t, "seed")
		run := func(in framework.CycleInput) framework.CycleResult {
			in.PlacementName, in.Policy, in.Now = "p", policy, ft.Now
			in.Bindings = ft.Bindings("p", bound...)
			in.Rand = rand.New(rand.NewSource(seed))
			res, err := fw.RunCycle(t.Context(), in)
			if err != nil {
				t.Fatalf("cycle: %v", err)
			}
			return res
		}
		want := run(framework.CycleInput{Clusters: order})
		s := fleet.New()
		for i := range order {
			s.Upsert(&order[i])
		}
		got := run(framework.CycleInput{Fleet: s.View().Fleet})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("cycle through the snapshot (-listed +snapshot):\n%s", diff)
		}
		if !slices.IsSorted(got.Selected) {
			t.Fatalf("selected not sorted: %v", got.Selected)
		}
	})
}

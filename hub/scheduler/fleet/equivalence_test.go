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
// the scheduler read them before the snapshot), which filters every cluster,
// and over the snapshot's view, which parses properties once per generation
// and filters only the candidates of a required label selector (settling the
// others' decisions afterwards). The results must be identical; and the same
// with fewer decisions asked for, but for the decisions left out.
func TestACycleThroughTheSnapshotDecidesAsOneOverListedClusters(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fw := plugins.NewFramework(framework.Options{MaxMessageClusters: rapid.IntRange(1, 4).Draw(t, "listed")})
		var listed []clusterv1beta1.MemberCluster
		for i := range rapid.IntRange(0, 20).Draw(t, "members") {
			kv := []string{
				"env", rapid.SampledFrom([]string{"prod", "dev"}).Draw(t, "env"),
				"zone", rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "zone")}
			if rapid.Bool().Draw(t, "tier?") {
				kv = append(kv, "tier", rapid.SampledFrom([]string{"1", "2"}).Draw(t, "tier"))
			}
			opts := []ft.ClusterOption{ft.Labels(kv...)}
			// Properties the view parses once: reported (sometimes not a
			// quantity, sometimes absent) and derived from resource usage.
			if nodes := rapid.SampledFrom([]string{"", "1", "3", "10", "lots", "2500m"}).Draw(t, "nodes"); nodes != "" {
				opts = append(opts, ft.Property(clusterv1beta1.PropertyNodeCount, nodes))
			}
			if rapid.Bool().Draw(t, "cpu?") {
				opts = append(opts, ft.AvailableCPU(rapid.SampledFrom([]string{"0", "500m", "4", "12", "64"}).Draw(t, "cpu")))
			}
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
			policy.Affinity = &placementv1beta1.Affinity{ClusterAffinity: drawClusterAffinity(t)}
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

		// With fewer decisions asked for, the result holds the selected clusters',
		// the first others' and the unscheduled ones', and is otherwise the same.
		limit := rapid.IntRange(1, 4).Draw(t, "limit")
		limited := run(framework.CycleInput{Fleet: s.View().Fleet, MaxUnselectedDecisions: limit})
		want.Decisions = firstDecisions(want, limit)
		if diff := cmp.Diff(want, limited); diff != "" {
			t.Fatalf("cycle with MaxUnselectedDecisions %d (-want +got):\n%s", limit, diff)
		}
	})
}

// drawClusterAffinity draws required terms (label selectors of every operator,
// property selectors) and preferred terms (with property sorters).
func drawClusterAffinity(t *rapid.T) *placementv1beta1.ClusterAffinity {
	labelSelector := func(label string) *metav1.LabelSelector {
		if rapid.IntRange(0, 4).Draw(t, label+"none") == 0 {
			return nil
		}
		ls := &metav1.LabelSelector{}
		if rapid.Bool().Draw(t, label+"matchLabels") {
			ls.MatchLabels = map[string]string{"env": rapid.SampledFrom([]string{"prod", "dev", "qa"}).Draw(t, label+"env")}
			if rapid.Bool().Draw(t, label+"zone?") {
				ls.MatchLabels["zone"] = rapid.SampledFrom([]string{"a", "b"}).Draw(t, label+"zone")
			}
		}
		for j := range rapid.IntRange(0, 2).Draw(t, label+"expressions") {
			e := metav1.LabelSelectorRequirement{
				Key: rapid.SampledFrom([]string{"zone", "tier", "env", clusterv1beta1.LabelClusterName}).Draw(t, fmt.Sprintf("%skey%d", label, j)),
				Operator: rapid.SampledFrom([]metav1.LabelSelectorOperator{
					metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist,
				}).Draw(t, fmt.Sprintf("%sop%d", label, j)),
			}
			if e.Operator == metav1.LabelSelectorOpIn || e.Operator == metav1.LabelSelectorOpNotIn {
				e.Values = rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"a", "b", "1", "prod", "m01", "m03"}), 1, 3, rapid.ID).Draw(t, fmt.Sprintf("%svalues%d", label, j))
			}
			ls.MatchExpressions = append(ls.MatchExpressions, e)
		}
		return ls
	}
	propertySelector := func(label string) *placementv1beta1.PropertySelector {
		if rapid.Bool().Draw(t, label+"props?") {
			return nil
		}
		return &placementv1beta1.PropertySelector{MatchExpressions: []placementv1beta1.PropertySelectorRequirement{{
			Name: rapid.SampledFrom([]string{clusterv1beta1.PropertyNodeCount, clusterv1beta1.PropertyAvailableCPU}).Draw(t, label+"prop"),
			Operator: rapid.SampledFrom([]placementv1beta1.PropertySelectorOperator{
				placementv1beta1.PropertySelectorGreaterThanOrEqualTo, placementv1beta1.PropertySelectorLessThan, placementv1beta1.PropertySelectorNotEqualTo,
			}).Draw(t, label+"propop"),
			Values: []string{rapid.SampledFrom([]string{"2", "4", "2500m"}).Draw(t, label+"propvalue")},
		}}}
	}
	ca := &placementv1beta1.ClusterAffinity{}
	if terms := rapid.IntRange(0, 2).Draw(t, "required"); terms > 0 {
		ca.RequiredDuringSchedulingIgnoredDuringExecution = &placementv1beta1.ClusterSelector{}
		for i := range terms {
			label := fmt.Sprintf("required%d", i)
			ca.RequiredDuringSchedulingIgnoredDuringExecution.ClusterSelectorTerms = append(ca.RequiredDuringSchedulingIgnoredDuringExecution.ClusterSelectorTerms,
				placementv1beta1.ClusterSelectorTerm{LabelSelector: labelSelector(label), PropertySelector: propertySelector(label)})
		}
	}
	for i := range rapid.IntRange(0, 2).Draw(t, "preferred") {
		label := fmt.Sprintf("preferred%d", i)
		term := placementv1beta1.ClusterSelectorTerm{LabelSelector: labelSelector(label), PropertySelector: propertySelector(label)}
		if rapid.Bool().Draw(t, label+"sorter") {
			term.PropertySorter = &placementv1beta1.PropertySorter{
				Name:      rapid.SampledFrom([]string{clusterv1beta1.PropertyNodeCount, clusterv1beta1.PropertyAvailableCPU}).Draw(t, label+"sortby"),
				SortOrder: rapid.SampledFrom([]placementv1beta1.PropertySortOrder{placementv1beta1.Ascending, placementv1beta1.Descending}).Draw(t, label+"order"),
			}
		}
		ca.PreferredDuringSchedulingIgnoredDuringExecution = append(ca.PreferredDuringSchedulingIgnoredDuringExecution,
			placementv1beta1.PreferredClusterSelector{Weight: int32(rapid.IntRange(1, 50).Draw(t, label+"weight")), Preference: term})
	}
	return ca
}

// firstDecisions returns the decisions a result with MaxUnselectedDecisions
// limit holds: the selected clusters', the first limit others', and any later
// unscheduled cluster's, in order.
func firstDecisions(res framework.CycleResult, limit int) []placementv1beta1.ClusterDecision {
	out := res.Decisions[:0:0]
	others := 0
	for _, d := range res.Decisions {
		switch {
		case d.Selected:
		case others < limit:
			others++
		case slices.Contains(res.Unschedule, d.ClusterName):
		default:
			continue
		}
		out = append(out, d)
	}
	return out
}

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

// Invariants checked over many random worlds: a cycle's decisions cover every
// cluster exactly once; PickN never selects more than numberOfClusters; a
// DoNotSchedule topology spread constraint is never broken by what a cycle picks;
// and running the cycle again in the world it left behind changes nothing.

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
)

// randomWorld returns a random fleet and a random policy over it.
func randomWorld(r *rand.Rand) framework.CycleInput {
	n := 1 + r.Intn(30)
	var clusters []clusterv1beta1.MemberCluster
	for i := range n {
		opts := []ft.ClusterOption{
			ft.Labels("env", []string{"dev", "prod"}[r.Intn(2)]),
			ft.Property(clusterv1beta1.PropertyNodeCount, fmt.Sprint(1+r.Intn(5))),
			ft.AvailableCPU(fmt.Sprint(r.Intn(64))),
		}
		if r.Intn(6) > 0 {
			opts = append(opts, ft.Labels("zone", []string{"a", "b", "c", "d"}[r.Intn(4)]))
		}
		switch r.Intn(12) {
		case 0:
			opts = append(opts, ft.Condition(clusterv1beta1.ConditionHealthy, metav1.ConditionFalse, time.Minute))
		case 1:
			opts = append(opts, ft.Taints(ft.Taint("maintenance", "true", clusterv1beta1.TaintEffectNoSchedule)))
		case 2:
			opts = append(opts, ft.StrictMatchLabels())
		case 3:
			opts = append(opts, ft.Condition(clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse, time.Hour))
		}
		clusters = append(clusters, ft.Cluster(fmt.Sprintf("member-%02d", i), opts...))
	}
	r.Shuffle(len(clusters), func(i, j int) { clusters[i], clusters[j] = clusters[j], clusters[i] })

	var opts []func(*placementv1beta1.PlacementPolicy)
	if r.Intn(2) == 0 {
		opts = append(opts, requiring("env", []string{"dev", "prod"}[r.Intn(2)]))
	}
	if r.Intn(2) == 0 {
		opts = append(opts, preferring(int32(r.Intn(201)-100), "zone", "a"))
	}
	if r.Intn(2) == 0 {
		opts = append(opts, sortingBy(int32(1+r.Intn(100)), clusterv1beta1.PropertyAvailableCPU, placementv1beta1.Descending))
	}
	var policy *placementv1beta1.PlacementPolicy
	switch r.Intn(3) {
	case 0:
		policy = pickAll(opts...)
	case 1:
		if r.Intn(2) == 0 {
			when := []placementv1beta1.UnsatisfiableConstraintAction{placementv1beta1.DoNotSchedule, placementv1beta1.ScheduleAnyway}[r.Intn(2)]
			opts = append(opts, spreading("zone", int32(1+r.Intn(2)), when))
		}
		policy = pickN(int32(r.Intn(n+2)), opts...)
	default:
		var names []string
		for _, i := range r.Perm(n + 2)[:1+r.Intn(n)] {
			names = append(names, fmt.Sprintf("member-%02d", i))
		}
		policy = pickFixed(names...)
	}
	in := ft.Input(policy, clusters...)
	in.Rand = rand.New(rand.NewSource(r.Int63()))
	// Sometimes the placement is already somewhere.
	if r.Intn(3) == 0 {
		for _, i := range r.Perm(n)[:r.Intn(n+1)] {
			in.Bindings = append(in.Bindings, ft.Binding("test", clusters[i].Name))
		}
	}
	// Sometimes it was evicted from some clusters.
	if r.Intn(4) == 0 {
		in.ExcludedClusters = map[string]string{}
		for _, i := range r.Perm(n)[:r.Intn(n+1)] {
			in.ExcludedClusters[clusters[i].Name] = "evicted"
		}
	}
	return in
}

func TestInvariants(t *testing.T) {
	r := rand.New(rand.NewSource(20260102))
	for i := range 400 {
		in := randomWorld(r)
		t.Run(fmt.Sprintf("world %d", i), func(t *testing.T) {
			res := run(t, in)
			checkDecisionsCoverEveryClusterOnce(t, in, res)
			checkPickNSelectsAtMostN(t, in, res)
			if len(in.Bindings) == 0 {
				checkSpreadIsKept(t, in, res)
			}
			checkRerunChangesNothing(t, in, res)
			checkExcludedAreNotSelected(t, in, res)
		})
	}
}

func checkDecisionsCoverEveryClusterOnce(t *testing.T, in framework.CycleInput, res framework.CycleResult) {
	t.Helper()
	seen := map[string]int{}
	for _, d := range res.Decisions {
		seen[d.ClusterName]++
		if d.Reason == "" {
			t.Errorf("decision about %s has no reason", d.ClusterName)
		}
		if d.Selected != slices.Contains(res.Selected, d.ClusterName) {
			t.Errorf("decision about %s says selected=%v, Selected is %v", d.ClusterName, d.Selected, res.Selected)
		}
	}
	for _, c := range in.Clusters {
		if seen[c.Name] != 1 {
			t.Errorf("cluster %s has %d decisions, want 1", c.Name, seen[c.Name])
		}
		delete(seen, c.Name)
	}
	for name := range seen {
		if in.Policy.PlacementType != placementv1beta1.PickFixed || !slices.Contains(in.Policy.ClusterNames, name) {
			t.Errorf("decision about %s, which is neither a cluster nor a PickFixed name", name)
		}
	}
	if !slices.IsSorted(res.Selected) || !slices.IsSorted(res.Unschedule) {
		t.Errorf("Selected %v or Unschedule %v not sorted", res.Selected, res.Unschedule)
	}
	for _, c := range res.Unschedule {
		if slices.Contains(res.Selected, c) {
			t.Errorf("cluster %s both selected and unscheduled", c)
		}
	}
}

// checkExcludedAreNotSelected checks that a placement other than PickFixed is on
// none of the clusters it is excluded from after the cycle.
func checkExcludedAreNotSelected(t *testing.T, in framework.CycleInput, res framework.CycleResult) {
	t.Helper()
	if in.Policy.PlacementType == placementv1beta1.PickFixed {
		return
	}
	for _, c := range res.Selected {
		if _, ok := in.ExcludedClusters[c]; ok {
			t.Errorf("cluster %s is selected, but the placement is excluded from it", c)
		}
	}
}

func checkPickNSelectsAtMostN(t *testing.T, in framework.CycleInput, res framework.CycleResult) {
	t.Helper()
	if in.Policy.PlacementType == placementv1beta1.PickN && len(res.Selected) > int(*in.Policy.NumberOfClusters) {
		t.Errorf("PickN %d selected %d clusters: %v", *in.Policy.NumberOfClusters, len(res.Selected), res.Selected)
	}
}

// checkSpreadIsKept checks, for a placement that was nowhere, that the clusters
// picked keep every DoNotSchedule constraint over the domains of the clusters
// that passed the other filters.
func checkSpreadIsKept(t *testing.T, in framework.CycleInput, res framework.CycleResult) {
	t.Helper()
	for _, c := range in.Policy.TopologySpreadConstraints {
		if c.WhenUnsatisfiable != placementv1beta1.DoNotSchedule {
			continue
		}
		counts := map[string]int{}
		for _, mc := range in.Clusters {
			d := decisionOf(t, res, mc.Name)
			zone, ok := mc.Labels[c.TopologyKey]
			if !ok || !(d.Selected || d.FilteredBy == "" || d.FilteredBy == "TopologySpread") {
				continue // not a feasible cluster: it makes no domain
			}
			counts[zone] += 0
			if d.Selected {
				counts[zone]++
			}
		}
		if len(counts) == 0 {
			continue
		}
		lo, hi := len(in.Clusters), 0
		for _, n := range counts {
			lo, hi = min(lo, n), max(hi, n)
		}
		if hi-lo > int(*c.MaxSkew) {
			t.Errorf("skew over %s is %d > maxSkew %d: %v", c.TopologyKey, hi-lo, *c.MaxSkew, counts)
		}
	}
}

// checkRerunChangesNothing runs the cycle again in the world the first left
// behind, with other randomness: the selection must not change, and a third run
// must return exactly what the second did.
func checkRerunChangesNothing(t *testing.T, in framework.CycleInput, res framework.CycleResult) {
	t.Helper()
	second := rerun(t, in, res, 1)
	if diff := cmp.Diff(res.Selected, second.Selected); diff != "" {
		t.Errorf("re-run changed the selection (-first +second):\n%s", diff)
	}
	if len(second.Unschedule) != 0 {
		t.Errorf("re-run unschedules %v", second.Unschedule)
	}
	if diff := cmp.Diff(res.Misplaced, second.Misplaced); diff != "" {
		t.Errorf("re-run changed what is misplaced (-first +second):\n%s", diff)
	}
	if second.Status != res.Status || second.Reason != res.Reason || second.ChosenLocation != res.ChosenLocation {
		t.Errorf("re-run changed the condition from %s %s to %s %s", res.Status, res.Reason, second.Status, second.Reason)
	}
	third := rerun(t, in, second, 2)
	if diff := cmp.Diff(second, third); diff != "" {
		t.Errorf("third run differs from the second (-second +third):\n%s", diff)
	}
}

// One framework serves concurrent cycles: plugins keep per-cycle data only in
// the cycle's state. Run with -race.
func TestConcurrentCyclesShareAFramework(t *testing.T) {
	fw := plugins.NewFramework(framework.Options{})
	r := rand.New(rand.NewSource(3))
	worlds := make([]framework.CycleInput, 8)
	want := make([]framework.CycleResult, len(worlds))
	for i := range worlds {
		worlds[i] = randomWorld(r)
		worlds[i].Rand = nil // a *rand.Rand is not safe for concurrent use
		want[i] = run(t, worlds[i])
	}
	errs := make(chan error, len(worlds))
	for i := range worlds {
		go func() {
			got, err := fw.RunCycle(t.Context(), worlds[i])
			if err == nil && !cmp.Equal(want[i], got) {
				err = fmt.Errorf("world %d: concurrent result differs: %s", i, cmp.Diff(want[i], got))
			}
			errs <- err
		}()
	}
	for range worlds {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

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

// The Kratix seed documents' match tables, verbatim, as test cases: every row is a
// placement (Promise) with the row's selector and one member cluster (Destination)
// with the row's labels; "match" means the cycle selects the cluster.
//
// Seed 000 (Managing Multiple Destinations) lost its ✅ marks in extraction; its
// rows without ⛔️ are the ✅ ones, exactly as in seed 001's identical table.

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

type seedRow struct {
	clusterLabels string // "Destination Label" / "Cluster Label"
	selector      string // "Promise Selector"
	dynamic       string // "cluster-selectors.yaml" (seed 001 only)
	match         bool
}

func (r seedRow) name() string {
	verdict := "does not match"
	if r.match {
		verdict = "matches"
	}
	if r.dynamic == "" {
		return fmt.Sprintf("label %q, selector %q: %s", r.clusterLabels, r.selector, verdict)
	}
	return fmt.Sprintf("label %q, selector %q, cluster-selectors.yaml %q: %s", r.clusterLabels, r.selector, r.dynamic, verdict)
}

// matches runs a PickAll cycle for the row and reports whether the cluster was
// selected.
func (r seedRow) matches(t *testing.T, mode framework.SelectorMergeMode, strict bool) bool {
	opts := []ft.ClusterOption{ft.LabelMap(kratixLabels(r.clusterLabels))}
	if strict {
		opts = append(opts, ft.StrictMatchLabels())
	}
	in := ft.Input(requiredLabels(placementv1beta1.PickAll, kratixLabels(r.selector)), ft.Cluster("destination", opts...))
	in.SelectorMerge = mode
	if dyn := kratixLabels(r.dynamic); dyn != nil {
		in.DynamicSelectors = []framework.DynamicSelector{{MatchLabels: dyn, Source: framework.SourceResourceWorkflow}}
	}
	res := run(t, in)
	return len(res.Selected) == 1
}

// Seed 000, "Scheduling Promises": Destination Label | Promise Selector | Match?
var seed000PromiseTable = []seedRow{
	{clusterLabels: "no label", selector: "no selector", match: true},
	{clusterLabels: "env: dev", selector: "no selector", match: true},
	{clusterLabels: "env: dev", selector: "env: dev", match: true},
	{clusterLabels: "env: dev zone:eu", selector: "env: dev", match: true},
	{clusterLabels: "env: dev zone:eu", selector: "env: dev zone:eu", match: true},
	{clusterLabels: "env: dev", selector: "env: prod", match: false},
	{clusterLabels: "env: dev", selector: "env: dev zone:eu", match: false},
	{clusterLabels: "no label", selector: "env: dev", match: false},
}

// Seed 001, "Scheduling Promises": Cluster Label | Promise Selector | Match?
var seed001PromiseTable = []seedRow{
	{clusterLabels: "no label", selector: "no selector", match: true},
	{clusterLabels: "env: dev", selector: "no selector", match: true},
	{clusterLabels: "env: dev", selector: "env: dev", match: true},
	{clusterLabels: "env: dev zone:eu", selector: "env: dev", match: true},
	{clusterLabels: "env: dev zone:eu", selector: "env: dev zone:eu", match: true},
	{clusterLabels: "env: dev", selector: "env: prod", match: false},
	{clusterLabels: "env: dev", selector: "env: dev zone:eu", match: false},
	{clusterLabels: "no label", selector: "env: dev", match: false},
}

// Seed 001, "Dynamic Scheduling": Cluster Label | Promise Selector |
// cluster-selectors.yaml | Match? — the older form, merged without override.
var seed001DynamicTable = []seedRow{
	{clusterLabels: "no label", selector: "no selector", dynamic: "no_selector", match: true},
	{clusterLabels: "env: dev", selector: "no selector", dynamic: "no_selector", match: true},
	{clusterLabels: "env: dev", selector: "env: dev", dynamic: "no_selector", match: true},
	{clusterLabels: "env: dev zone: eu", selector: "env: dev", dynamic: "zone: eu", match: true},
	{clusterLabels: "env: dev zone: eu", selector: "no selector", dynamic: "zone: eu", match: true},
	{clusterLabels: "env: dev", selector: "env: dev", dynamic: "env: prod", match: false},
	{clusterLabels: "env: dev", selector: "env: prod", dynamic: "env: dev", match: false},
	{clusterLabels: "env: dev", selector: "env: dev zone: eu", dynamic: "no_selector", match: false},
	{clusterLabels: "no label", selector: "no_selector", dynamic: "env: dev", match: false},
}

func TestSeed000DestinationSelectorsTable(t *testing.T) {
	for _, row := range seed000PromiseTable {
		t.Run(row.name(), func(t *testing.T) {
			if got := row.matches(t, "", false); got != row.match {
				t.Errorf("match = %v, want %v", got, row.match)
			}
		})
	}
}

func TestSeed001ClusterSelectorTable(t *testing.T) {
	for _, row := range seed001PromiseTable {
		t.Run(row.name(), func(t *testing.T) {
			if got := row.matches(t, "", false); got != row.match {
				t.Errorf("match = %v, want %v", got, row.match)
			}
		})
	}
}

func TestSeed001ClusterSelectorsYAMLTableMergedWithoutOverride(t *testing.T) {
	for _, row := range seed001DynamicTable {
		t.Run(row.name(), func(t *testing.T) {
			if got := row.matches(t, framework.MergeWithoutOverride, false); got != row.match {
				t.Errorf("match = %v, want %v", got, row.match)
			}
		})
	}
}

// The newer form (seed 000) resolves a conflict by precedence instead: the
// placement's own selector wins, so exactly one row of seed 001's table — the
// Promise's env: dev against the workflow's env: prod — turns into a match.
func TestSeed001ClusterSelectorsYAMLTableMergedByPrecedence(t *testing.T) {
	for i, row := range seed001DynamicTable {
		if i == 5 {
			row.match = true // the Promise's env: dev wins over the workflow's env: prod
		}
		t.Run(row.name(), func(t *testing.T) {
			if got := row.matches(t, framework.MergeByPrecedence, false); got != row.match {
				t.Errorf("match = %v, want %v", got, row.match)
			}
		})
	}
}

// Seed 001, footnote: "if the Promise defines clusterSelector: { env: dev } and the
// Pipeline defines env: prod, Kratix will look for Clusters with labels: env=dev
// && env=prod. This will always return empty."
func TestSeed001ConflictingSelectorsAlwaysReturnEmpty(t *testing.T) {
	in := ft.Input(requiredLabels(placementv1beta1.PickAll, kratixLabels("env: dev")),
		clusterWithLabels("dev", "env", "dev"), clusterWithLabels("prod", "env", "prod"), clusterWithLabels("none"))
	in.SelectorMerge = framework.MergeWithoutOverride
	in.DynamicSelectors = []framework.DynamicSelector{{MatchLabels: kratixLabels("env: prod"), Source: framework.SourceResourceWorkflow}}
	res := run(t, in)
	if len(res.Selected) != 0 || res.Reason != placementv1beta1.ReasonScheduleFailed {
		t.Errorf("selected %v (%s), want none and ScheduleFailed", res.Selected, res.Reason)
	}
}

// Seed 000: "If a Promise has no destinationSelectors, it will be applied to all
// Destinations (unless the Destination has strictMatchLabels set)."
func TestSeed000StrictMatchLabels(t *testing.T) {
	rows := []seedRow{
		{clusterLabels: "no label", selector: "no selector", match: false},
		{clusterLabels: "env: dev", selector: "no selector", match: false},
		{clusterLabels: "env: dev", selector: "env: dev", match: true},
		{clusterLabels: "env: dev zone:eu", selector: "env: dev", match: true},
		{clusterLabels: "env: dev", selector: "env: prod", match: false},
	}
	for _, row := range rows {
		t.Run("strict destination, "+row.name(), func(t *testing.T) {
			if got := row.matches(t, "", true); got != row.match {
				t.Errorf("match = %v, want %v", got, row.match)
			}
		})
	}
}

// Seed 000: "When a new Destination is registered, Kratix will also schedule all
// Promise Dependencies onto this new Destination" — a PickAll placement spreads to
// a newly joined matching cluster on the next cycle.
func TestSeed000DependenciesSpreadToNewDestinations(t *testing.T) {
	in := ft.Input(requiredLabels(placementv1beta1.PickAll, kratixLabels("environment: dev")),
		clusterWithLabels("worker-1", "environment", "dev"))
	res := run(t, in)
	in.Clusters = append(in.Clusters, clusterWithLabels("worker-2", "environment", "dev"), clusterWithLabels("worker-3", "environment", "prod"))
	res = rerun(t, in, res, 1)
	if diff := cmp.Diff([]string{"worker-1", "worker-2"}, res.Selected); diff != "" {
		t.Errorf("Selected (-want +got):\n%s", diff)
	}
}

// Seed 000: "When multiple Destinations match, Kratix will by default randomly
// select a registered Destination ... the workload can only be scheduled to a
// Destination that has matching labels for the Promise" — and then it stays.
func TestSeed000AResourceGoesToOneRandomMatchingDestinationAndStays(t *testing.T) {
	world := func(seed int64) framework.CycleInput {
		in := ft.Input(pickN(1, requiring("env", "dev")),
			clusterWithLabels("dev-1", "env", "dev"), clusterWithLabels("dev-2", "env", "dev"),
			clusterWithLabels("dev-3", "env", "dev"), clusterWithLabels("prod-1", "env", "prod"))
		in.Rand = rand.New(rand.NewSource(seed))
		return in
	}
	chosen := map[string]int{}
	for seed := int64(0); seed < 60; seed++ {
		in := world(seed)
		res := run(t, in)
		if len(res.Selected) != 1 {
			t.Fatalf("seed %d: selected %v, want one destination", seed, res.Selected)
		}
		chosen[res.Selected[0]]++
		// It stays there, whatever the next cycles' randomness.
		for next := int64(100); next < 105; next++ {
			again := rerun(t, in, res, next)
			if diff := cmp.Diff(res.Selected, again.Selected); diff != "" {
				t.Fatalf("seed %d, re-run with seed %d moved the resource (-before +after):\n%s", seed, next, diff)
			}
		}
	}
	if chosen["prod-1"] != 0 {
		t.Errorf("a non-matching destination was chosen %d times", chosen["prod-1"])
	}
	for _, c := range []string{"dev-1", "dev-2", "dev-3"} {
		if chosen[c] == 0 {
			t.Errorf("matching destination %s was never chosen in 60 seeds: %v", c, chosen)
		}
	}
}

// Seed 000, "Default scheduling": the Promise selects promise=label, the workflow
// writes workflow=another-label without a directory: "All resources will only be
// scheduled to destinations containing both".
func TestSeed000DefaultSchedulingAddsWorkflowSelectors(t *testing.T) {
	in := ft.Input(requiredLabels(placementv1beta1.PickAll, kratixLabels("promise: label")),
		clusterWithLabels("both", "promise", "label", "workflow", "another-label"),
		clusterWithLabels("promise-only", "promise", "label"),
		clusterWithLabels("workflow-only", "workflow", "another-label"))
	in.DynamicSelectors = []framework.DynamicSelector{{MatchLabels: kratixLabels("workflow: another-label"), Source: framework.SourcePlacementWorkflow}}
	if diff := cmp.Diff([]string{"both"}, run(t, in).Selected); diff != "" {
		t.Errorf("Selected (-want +got):\n%s", diff)
	}
}

// Seed 000, "Directory-based scheduling": the workflow schedules scheduled-dir to
// workflow=subdir, which replaces the Promise's promise=label for that directory;
// document-0.yaml and some-dir/ "revert to the default scheduling".
func TestSeed000DirectoryBasedScheduling(t *testing.T) {
	clusters := []clusterv1beta1.MemberCluster{
		clusterWithLabels("promise-dest", "promise", "label"),
		clusterWithLabels("subdir-dest", "workflow", "subdir"),
	}
	dyn := []framework.DynamicSelector{{Group: "scheduled-dir", MatchLabels: kratixLabels("workflow: subdir"), Source: framework.SourcePlacementWorkflow}}
	tests := []struct {
		group string
		want  []string
	}{
		{group: "scheduled-dir", want: []string{"subdir-dest"}}, // document-2.yaml, document-3.yaml
		{group: "", want: []string{"promise-dest"}},             // document-0.yaml
		{group: "some-dir", want: []string{"promise-dest"}},     // some-dir/document-1.yaml
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("group %q", tt.group), func(t *testing.T) {
			in := ft.Input(requiredLabels(placementv1beta1.PickAll, kratixLabels("promise: label")), clusters...)
			in.DynamicSelectors = dyn
			in.Group = tt.group
			if diff := cmp.Diff(tt.want, run(t, in).Selected); diff != "" {
				t.Errorf("Selected (-want +got):\n%s", diff)
			}
		})
	}
}

// Seed 000: "In the event of a label conflict, the Promise spec.destinationSelectors
// take precedence over any dynamic scheduling. The order of precedence is: Promise
// spec.destinationSelectors, Promise workflow destination-selectors.yaml, Resource
// workflow destination-selectors.yaml."
func TestSeed000OrderOfPrecedence(t *testing.T) {
	clusters := []clusterv1beta1.MemberCluster{
		clusterWithLabels("dev", "env", "dev"), clusterWithLabels("staging", "env", "staging"), clusterWithLabels("prod", "env", "prod"),
	}
	promiseWorkflow := framework.DynamicSelector{MatchLabels: kratixLabels("env: staging"), Source: framework.SourcePlacementWorkflow}
	resourceWorkflow := framework.DynamicSelector{MatchLabels: kratixLabels("env: prod"), Source: framework.SourceResourceWorkflow}
	tests := []struct {
		name     string
		selector string
		dynamic  []framework.DynamicSelector
		want     []string
	}{
		{name: "the Promise's selector wins over both workflows", selector: "env: dev",
			dynamic: []framework.DynamicSelector{resourceWorkflow, promiseWorkflow}, want: []string{"dev"}},
		{name: "the Promise workflow wins over the resource workflow", selector: "no selector",
			dynamic: []framework.DynamicSelector{resourceWorkflow, promiseWorkflow}, want: []string{"staging"}},
		{name: "the resource workflow applies when nothing else constrains the key", selector: "no selector",
			dynamic: []framework.DynamicSelector{resourceWorkflow}, want: []string{"prod"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ft.Input(requiredLabels(placementv1beta1.PickAll, kratixLabels(tt.selector)), clusters...)
			in.DynamicSelectors = tt.dynamic
			if diff := cmp.Diff(tt.want, run(t, in).Selected); diff != "" {
				t.Errorf("Selected (-want +got):\n%s", diff)
			}
		})
	}
}

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

package framework

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// fake is a plugin whose every stage is a function; nil stages are absent.
type fake struct {
	name      string
	calls     *[]string
	preFilter func(clusters []*ClusterInfo) (*PreFilterResult, *Status)
	filter    func(c *ClusterInfo) *Status
}

func (f *fake) Name() string { return f.name }

func (f *fake) record(s string) {
	if f.calls != nil {
		*f.calls = append(*f.calls, f.name+"."+s)
	}
}

type fakePreFilter struct{ *fake }

func (f fakePreFilter) PreFilter(_ context.Context, _ *CycleState, _ *placementv1beta1.PlacementPolicy, clusters []*ClusterInfo) (*PreFilterResult, *Status) {
	f.record("PreFilter")
	return f.preFilter(clusters)
}

type fakeFilter struct{ *fake }

func (f fakeFilter) Filter(_ context.Context, _ *CycleState, _ *placementv1beta1.PlacementPolicy, c *ClusterInfo) *Status {
	f.record("Filter(" + c.Name + ")")
	return f.filter(c)
}

type fakeBoth struct {
	fakePreFilter
	fakeFilter
}

func (f fakeBoth) Name() string { return f.fakePreFilter.name }

// rejecting returns a filter plugin that rejects the named clusters with code.
func rejecting(name string, code Code, clusters ...string) Plugin {
	set := map[string]bool{}
	for _, c := range clusters {
		set[c] = true
	}
	return fakeFilter{&fake{name: name, filter: func(c *ClusterInfo) *Status {
		if set[c.Name] {
			return NewStatus(code, name+" says no")
		}
		return nil
	}}}
}

func clusters(names ...string) []clusterv1beta1.MemberCluster {
	out := make([]clusterv1beta1.MemberCluster, len(names))
	for i, n := range names {
		out[i] = mc(n, nil)
	}
	return out
}

func bound(names ...string) []placementv1beta1.BindingObj {
	out := make([]placementv1beta1.BindingObj, len(names))
	for i, n := range names {
		out[i] = binding(n, placementv1beta1.BindingStateBound)
	}
	return out
}

func pickN(n int32) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: &n}
}

func decisionsByName(res CycleResult) map[string]placementv1beta1.ClusterDecision {
	out := map[string]placementv1beta1.ClusterDecision{}
	for _, d := range res.Decisions {
		out[d.ClusterName] = d
	}
	return out
}

func TestPreFilterSkipMeansFilterIsNotCalled(t *testing.T) {
	var calls []string
	f := &fake{name: "p", calls: &calls,
		preFilter: func([]*ClusterInfo) (*PreFilterResult, *Status) { return nil, NewStatus(Skip) },
		filter:    func(*ClusterInfo) *Status { return NewStatus(ClusterMismatch, "never") },
	}
	fw := NewWithPlugins(Options{}, fakeBoth{fakePreFilter{f}, fakeFilter{f}})
	res, err := fw.RunCycle(t.Context(), CycleInput{Clusters: clusters("a", "b")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"p.PreFilter"}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, res.Selected); diff != "" {
		t.Errorf("Selected (-want +got):\n%s", diff)
	}
}

func TestFilterStopsAtTheFirstRejectionOfAnUnboundCluster(t *testing.T) {
	var calls []string
	first := &fake{name: "first", calls: &calls, filter: func(c *ClusterInfo) *Status {
		if c.Name == "a" {
			return NewStatus(ClusterUnschedulable, "a is busy")
		}
		return nil
	}}
	second := &fake{name: "second", calls: &calls, filter: func(*ClusterInfo) *Status { return nil }}
	fw := NewWithPlugins(Options{}, fakeFilter{first}, fakeFilter{second})
	res, err := fw.RunCycle(t.Context(), CycleInput{Clusters: clusters("a", "b")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"first.Filter(a)", "first.Filter(b)", "second.Filter(b)"}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	want := placementv1beta1.ClusterDecision{ClusterName: "a", Reason: "a is busy", FilteredBy: "first"}
	if diff := cmp.Diff(want, decisionsByName(res)["a"]); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
}

func TestRejectionsOfABoundCluster(t *testing.T) {
	tests := []struct {
		name          string
		kind          placementv1beta1.PlacementType
		code          Code
		wantSelected  []string
		wantUnsched   []string
		wantMisplaced map[string]string
		wantReason    string
	}{
		{
			name:         "ClusterUnschedulable keeps the cluster and reports the reason",
			kind:         placementv1beta1.PickAll,
			code:         ClusterUnschedulable,
			wantSelected: []string{"a"},
			wantReason:   "kept: the placement is already on the cluster; it could not take the placement anew: p says no",
		},
		{
			name:         "ClusterAlreadySelected is expected and not reported",
			kind:         placementv1beta1.PickAll,
			code:         ClusterAlreadySelected,
			wantSelected: []string{"a"},
			wantReason:   "kept: the placement is already on the cluster",
		},
		{
			name:        "ClusterMismatch unschedules a PickAll cluster",
			kind:        placementv1beta1.PickAll,
			code:        ClusterMismatch,
			wantUnsched: []string{"a"},
			wantReason:  "no longer matches the policy: p says no",
		},
		{
			name:          "ClusterMismatch keeps a PickN cluster as misplaced",
			kind:          placementv1beta1.PickN,
			code:          ClusterMismatch,
			wantSelected:  []string{"a"},
			wantMisplaced: map[string]string{"a": "no longer matches the policy: p says no"},
			wantReason:    "misplaced: it no longer matches the policy (p says no); kept, as a placed workload is not moved",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fw := NewWithPlugins(Options{}, rejecting("p", tt.code, "a"))
			policy := &placementv1beta1.PlacementPolicy{PlacementType: tt.kind}
			if tt.kind == placementv1beta1.PickN {
				policy = pickN(1)
			}
			res, err := fw.RunCycle(t.Context(), CycleInput{Policy: policy, Clusters: clusters("a"), Bindings: bound("a")})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantSelected, res.Selected); diff != "" {
				t.Errorf("Selected (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantUnsched, res.Unschedule); diff != "" {
				t.Errorf("Unschedule (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantMisplaced, res.Misplaced); diff != "" {
				t.Errorf("Misplaced (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantReason, res.Decisions[0].Reason); diff != "" {
				t.Errorf("reason (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPreFilterResultNarrowsTheClustersConsidered(t *testing.T) {
	var calls []string
	f := &fake{name: "p", calls: &calls,
		preFilter: func([]*ClusterInfo) (*PreFilterResult, *Status) {
			return &PreFilterResult{Includes: func(c *ClusterInfo) bool { return c.Name != "b" }, Reason: "b is out"}, nil
		},
		filter: func(*ClusterInfo) *Status { return nil },
	}
	fw := NewWithPlugins(Options{}, fakeBoth{fakePreFilter{f}, fakeFilter{f}})
	res, err := fw.RunCycle(t.Context(), CycleInput{Clusters: clusters("a", "b", "c"), Bindings: bound("b")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"p.PreFilter", "p.Filter(a)", "p.Filter(c)"}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "c"}, res.Selected); diff != "" {
		t.Errorf("Selected (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b"}, res.Unschedule); diff != "" {
		t.Errorf("Unschedule (-want +got):\n%s", diff)
	}
	if d := decisionsByName(res)["b"]; d.FilteredBy != "p" || d.Reason != "no longer matches the policy: b is out" {
		t.Errorf("decision of b = %+v", d)
	}
}

func TestPreFilterRejectionFailsTheCycle(t *testing.T) {
	f := &fake{name: "p", preFilter: func([]*ClusterInfo) (*PreFilterResult, *Status) {
		return nil, NewStatus(ClusterMismatch, "nothing can fit")
	}}
	fw := NewWithPlugins(Options{}, fakePreFilter{f})
	res, err := fw.RunCycle(t.Context(), CycleInput{Clusters: clusters("a", "b")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != metav1.ConditionFalse || res.Reason != placementv1beta1.ReasonScheduleFailed || res.Message != "0 clusters selected: nothing can fit" {
		t.Errorf("condition = %s %s %q", res.Status, res.Reason, res.Message)
	}
	for _, d := range res.Decisions {
		if d.Selected || d.FilteredBy != "p" || d.Reason != "nothing can fit" {
			t.Errorf("decision = %+v", d)
		}
	}
}

func TestErrorStatusesEndTheCycle(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name   string
		plugin Plugin
	}{
		{name: "from PreFilter", plugin: fakePreFilter{&fake{name: "p", preFilter: func([]*ClusterInfo) (*PreFilterResult, *Status) { return nil, FromError(boom) }}}},
		{name: "from Filter", plugin: fakeFilter{&fake{name: "p", filter: func(*ClusterInfo) *Status { return FromError(boom) }}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := NewWithPlugins(Options{}, tt.plugin).RunCycle(t.Context(), CycleInput{Clusters: clusters("a")})
			if !errors.Is(err, boom) {
				t.Errorf("RunCycle() error = %v, want boom", err)
			}
			if res.Reason != placementv1beta1.ReasonScheduleFailed || !strings.Contains(res.Message, "boom") {
				t.Errorf("condition = %s %q", res.Reason, res.Message)
			}
		})
	}
}

type postBatch struct{ n int }

func (p postBatch) Name() string { return "batch" }
func (p postBatch) PostBatch(_ context.Context, _ *CycleState, _ *placementv1beta1.PlacementPolicy, batch int) (int, *Status) {
	return p.n, nil
}

func TestPostBatchCanOnlyLowerTheBatch(t *testing.T) {
	tests := []struct {
		name string
		n    int
		want int
	}{
		{name: "a lower batch is taken", n: 1, want: 1},
		{name: "a higher batch is capped", n: 10, want: 3},
		{name: "a negative batch picks nothing", n: -1, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := NewWithPlugins(Options{}, postBatch{tt.n}).RunCycle(t.Context(), CycleInput{Policy: pickN(3), Clusters: clusters("a", "b", "c", "d")})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Selected) != tt.want {
				t.Errorf("selected %v, want %d clusters", res.Selected, tt.want)
			}
		})
	}
}

func TestNewWithPluginsPanicsOnProgrammingErrors(t *testing.T) {
	for name, plugins := range map[string][]Plugin{
		"duplicate names":     {rejecting("p", ClusterMismatch), rejecting("p", ClusterMismatch)},
		"no extension points": {&fake{name: "nothing"}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("NewWithPlugins() did not panic")
				}
			}()
			NewWithPlugins(Options{}, plugins...)
		})
	}
}

func TestOptionsDefaults(t *testing.T) {
	got := Options{}.WithDefaults()
	if got.DisconnectedGracePeriod != DefaultDisconnectedGracePeriod || got.MaxMessageClusters != DefaultMaxMessageClusters {
		t.Errorf("defaults = %+v", got)
	}
}

func TestInvalidPoliciesAreErrors(t *testing.T) {
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		want   string
	}{
		{
			name:   "PickN without numberOfClusters does not scale the placement to zero",
			policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN},
			want:   "placement type PickN requires numberOfClusters",
		},
		{
			name:   "an unknown placement type",
			policy: &placementv1beta1.PlacementPolicy{PlacementType: "PickSome"},
			want:   `unknown placement type "PickSome"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := NewWithPlugins(Options{}, rejecting("p", ClusterMismatch)).RunCycle(t.Context(),
				CycleInput{Policy: tt.policy, Clusters: clusters("a"), Bindings: bound("a")})
			if err == nil || err.Error() != tt.want {
				t.Fatalf("RunCycle() error = %v, want %s", err, tt.want)
			}
			if res.Selected != nil || res.Unschedule != nil || res.Reason != placementv1beta1.ReasonScheduleFailed {
				t.Errorf("result = %+v, want only a ScheduleFailed condition", res)
			}
		})
	}
}

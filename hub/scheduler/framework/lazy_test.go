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
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
)

// oddRejecter rejects the clusters whose "n" label is odd, saying so with a
// reason of the cluster's own: lazily (NewStatusFor) or eagerly (NewStatus).
type oddRejecter struct {
	lazy      bool
	explained atomic.Int64
}

func (p *oddRejecter) Name() string { return "odd" }

func (p *oddRejecter) Filter(_ context.Context, _ *framework.CycleState, _ *placementv1beta1.PlacementPolicy, c *framework.ClusterInfo) *framework.Status {
	n, _ := strconv.Atoi(c.Cluster.Labels["n"])
	if n%2 == 0 {
		return nil
	}
	if p.lazy {
		return framework.NewStatusFor(framework.ClusterMismatch, p, c)
	}
	return framework.NewStatus(framework.ClusterMismatch, p.Explain(c))
}

func (p *oddRejecter) Explain(c *framework.ClusterInfo) string {
	p.explained.Add(1)
	return fmt.Sprintf("cluster %s has the odd number %s", c.Name, c.Cluster.Labels["n"])
}

// numbered returns n (at most 1 000) healthy clusters c000, c001, ... labelled
// with their number.
func numbered(n int) []clusterv1beta1.MemberCluster {
	out := make([]clusterv1beta1.MemberCluster, n)
	for i := range out {
		out[i] = ft.Cluster(fmt.Sprintf("c%03d", i), ft.Labels("n", strconv.Itoa(i)))
	}
	return out
}

func TestALazilyExplainedRejectionRecordsTheEagerMessage(t *testing.T) {
	const clusters = 200
	tests := []struct {
		name      string
		policy    *placementv1beta1.PlacementPolicy
		bound     []string
		decisions int
		fleet     bool
	}{
		{"PickAll, every decision, a list", pickAll(), nil, 0, false},
		{"PickAll, 5 unselected decisions, a view", pickAll(), nil, 5, true},
		{"PickN, 3 unselected decisions, a view", pickN(4), nil, 3, true},
		{"PickN with bound clusters, some rejected", pickN(4), []string{"c001", "c002", "c007"}, 3, true},
		{"PickAll with bound clusters, some rejected", pickAll(), []string{"c003", "c004"}, 0, false},
		{"PickFixed", pickFixed("c001", "c002", "c005", "nope"), nil, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ft.Input(tt.policy, numbered(clusters)...)
			in.Bindings = ft.Bindings("test", tt.bound...)
			in.MaxUnselectedDecisions = tt.decisions
			if tt.fleet {
				in.Fleet = fleetOf(in.Clusters...)
				in.Clusters = nil
			}
			eager, lazy := &oddRejecter{}, &oddRejecter{lazy: true}
			want, err := framework.NewWithPlugins(framework.Options{}, eager).RunCycle(t.Context(), in)
			if err != nil {
				t.Fatalf("eager RunCycle() = %v", err)
			}
			got, err := framework.NewWithPlugins(framework.Options{}, lazy).RunCycle(t.Context(), in)
			if err != nil {
				t.Fatalf("lazy RunCycle() = %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("lazily explained result (-eager +lazy):\n%s", diff)
			}
			// Only the reasons the result shows are formatted: each at most twice
			// (its decision and the condition's message).
			if tt.decisions > 0 {
				shown := int64(tt.decisions + framework.Options{}.WithDefaults().MaxMessageClusters + len(tt.bound))
				if n := lazy.explained.Load(); n > 2*shown || (eager.explained.Load() > 2*shown && n >= eager.explained.Load()) {
					t.Errorf("the lazy cycle formatted %d reasons (the eager one %d), want at most %d", n, eager.explained.Load(), 2*shown)
				}
			}
		})
	}
}

func TestACycleResultStaysAsItWasAfterTheNextCycles(t *testing.T) {
	// The second fleet is smaller, the third larger: buffers are reused, cut
	// and grown.
	fleets := [][]clusterv1beta1.MemberCluster{numbered(30), numbered(12), numbered(60)}
	policy := pickN(3, requiring("env", "prod"), preferring(10, "zone", "a"), sortingBy(5, clusterv1beta1.PropertyNodeCount, placementv1beta1.Descending))
	for _, members := range fleets {
		for i := range members {
			members[i].Labels["env"] = []string{"prod", "dev", "prod"}[i%3]
			members[i].Labels["zone"] = []string{"a", "b"}[i%2]
		}
	}
	input := func(i int) framework.CycleInput {
		in := ft.Input(policy)
		in.Fleet = fleetOf(fleets[i]...)
		in.Bindings = ft.Bindings("test", fmt.Sprintf("c%03d", 2*i+1))
		in.MaxUnselectedDecisions = 4 + i
		return in
	}
	// want are the results of cycles run each on a framework of its own.
	want := make([]framework.CycleResult, len(fleets))
	for i := range fleets {
		want[i] = run(t, input(i))
	}
	fw := plugins.NewFramework(framework.Options{})
	var got []framework.CycleResult
	for round := range 3 {
		for i := range fleets {
			res, err := fw.RunCycle(t.Context(), input(i))
			if err != nil {
				t.Fatalf("RunCycle(fleet %d) = %v", i, err)
			}
			got = append(got, res)
		}
		for j, res := range got {
			if diff := cmp.Diff(want[j%len(fleets)], res); diff != "" {
				t.Fatalf("after round %d, result %d (-want +got):\n%s", round, j, diff)
			}
		}
	}

	// Cycles running at once on one framework each get buffers of their own.
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(fleets))
	for g := range 4 {
		wg.Go(func() {
			for k := range 10 {
				i := (g + k) % len(fleets)
				res, err := fw.RunCycle(t.Context(), input(i))
				if err != nil {
					errs <- err.Error()
					return
				}
				if diff := cmp.Diff(want[i], res); diff != "" {
					errs <- diff
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent cycle (-want +got):\n%s", e)
	}
}

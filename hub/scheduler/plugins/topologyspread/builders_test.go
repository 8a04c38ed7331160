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

package topologyspread

import (
	"context"
	"testing"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

func clusterInZone(name, zone string) clusterv1beta1.MemberCluster {
	if zone == "" {
		return ft.Cluster(name)
	}
	return ft.Cluster(name, ft.Labels("zone", zone))
}

func spreadOverZones(maxSkew int32, when placementv1beta1.UnsatisfiableConstraintAction) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{
		PlacementType:    placementv1beta1.PickN,
		NumberOfClusters: ft.Ptr[int32](3),
		TopologySpreadConstraints: []placementv1beta1.TopologySpreadConstraint{
			{MaxSkew: ft.Ptr(maxSkew), TopologyKey: "zone", WhenUnsatisfiable: when},
		},
	}
}

// world runs PreFilter and PreScore over the clusters, then reserves picked, as
// the framework would after picking them.
type world struct {
	t      *testing.T
	p      *Plugin
	state  *framework.CycleState
	policy *placementv1beta1.PlacementPolicy
}

func newWorld(t *testing.T, policy *placementv1beta1.PlacementPolicy, clusters ...clusterv1beta1.MemberCluster) *world {
	in := ft.Input(policy, clusters...)
	w := &world{t: t, p: New(), state: framework.NewCycleState(&in), policy: policy}
	ctx := context.Background()
	if _, st := w.p.PreFilter(ctx, w.state, policy, w.state.Clusters()); !st.IsSuccess() {
		t.Fatalf("PreFilter() = %v", st)
	}
	if st := w.p.PreScore(ctx, w.state, policy, w.state.Clusters()); !st.IsSuccess() {
		t.Fatalf("PreScore() = %v", st)
	}
	return w
}

func (w *world) cluster(name string) *framework.ClusterInfo {
	c, ok := w.state.Cluster(name)
	if !ok {
		w.t.Fatalf("no cluster %s", name)
	}
	return c
}

func (w *world) reserve(names ...string) *world {
	for _, n := range names {
		w.p.Reserve(context.Background(), w.state, w.policy, w.cluster(n))
	}
	return w
}

func (w *world) unreserve(names ...string) *world {
	for _, n := range names {
		w.p.Unreserve(context.Background(), w.state, w.policy, w.cluster(n))
	}
	return w
}

// filter returns the code of Filter for every cluster.
func (w *world) filter() map[string]string {
	out := map[string]string{}
	for _, c := range w.state.Clusters() {
		out[c.Name] = w.p.Filter(context.Background(), w.state, w.policy, c).Code().String()
	}
	return out
}

// scores returns the topology spread score of every cluster.
func (w *world) scores() map[string]int32 {
	out := map[string]int32{}
	for _, c := range w.state.Clusters() {
		s, st := w.p.Score(context.Background(), w.state, w.policy, c)
		if !st.IsSuccess() {
			w.t.Fatalf("Score(%s) = %v", c.Name, st)
		}
		out[c.Name] = s.TopologySpreadScore
	}
	return out
}

func zones() []clusterv1beta1.MemberCluster {
	return []clusterv1beta1.MemberCluster{
		clusterInZone("a1", "a"), clusterInZone("a2", "a"), clusterInZone("a3", "a"),
		clusterInZone("b1", "b"), clusterInZone("b2", "b"),
		clusterInZone("nozone", ""),
	}
}

const (
	ok       = "Success"
	rejected = "ClusterUnschedulable"
)

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
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
)

// run runs one cycle of the default framework.
func run(t testing.TB, in framework.CycleInput) framework.CycleResult {
	t.Helper()
	res, err := plugins.NewFramework(framework.Options{}).RunCycle(t.Context(), in)
	if err != nil {
		t.Fatalf("RunCycle() = %v", err)
	}
	return res
}

// rerun runs the cycle again in the world the result leaves behind: a Bound
// binding for every selected cluster, and none for the others.
func rerun(t testing.TB, in framework.CycleInput, res framework.CycleResult, seed int64) framework.CycleResult {
	t.Helper()
	in.Bindings = ft.Bindings(in.PlacementName, res.Selected...)
	in.Rand = rand.New(rand.NewSource(seed))
	return run(t, in)
}

// kratixLabels parses the label notation of the Kratix seed tables — "env: dev
// zone:eu", "no label", "no selector", "no_selector" — into a map (nil for none).
func kratixLabels(s string) map[string]string {
	switch s {
	case "no label", "no selector", "no_selector":
		return nil
	}
	s = strings.ReplaceAll(s, ": ", ":")
	m := map[string]string{}
	for _, kv := range strings.Fields(s) {
		k, v, _ := strings.Cut(kv, ":")
		m[k] = v
	}
	return m
}

// requiredLabels returns a policy that requires the labels (nil for no policy).
func requiredLabels(kind placementv1beta1.PlacementType, m map[string]string) *placementv1beta1.PlacementPolicy {
	p := &placementv1beta1.PlacementPolicy{PlacementType: kind}
	if m != nil {
		p.Affinity = &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{
				ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: m}}},
			},
		}}
	}
	return p
}

func pickN(n int32, opts ...func(*placementv1beta1.PlacementPolicy)) *placementv1beta1.PlacementPolicy {
	p := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: &n}
	for _, o := range opts {
		o(p)
	}
	return p
}

func pickAll(opts ...func(*placementv1beta1.PlacementPolicy)) *placementv1beta1.PlacementPolicy {
	p := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll}
	for _, o := range opts {
		o(p)
	}
	return p
}

func pickFixed(names ...string) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: names}
}

// requiring adds a required term with matchLabels kv.
func requiring(kv ...string) func(*placementv1beta1.PlacementPolicy) {
	return func(p *placementv1beta1.PlacementPolicy) {
		ca := clusterAffinity(p)
		if ca.RequiredDuringSchedulingIgnoredDuringExecution == nil {
			ca.RequiredDuringSchedulingIgnoredDuringExecution = &placementv1beta1.ClusterSelector{}
		}
		r := ca.RequiredDuringSchedulingIgnoredDuringExecution
		r.ClusterSelectorTerms = append(r.ClusterSelectorTerms, placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: pairs(kv...)}})
	}
}

// preferring adds a preferred term of weight with matchLabels kv.
func preferring(weight int32, kv ...string) func(*placementv1beta1.PlacementPolicy) {
	return func(p *placementv1beta1.PlacementPolicy) {
		ca := clusterAffinity(p)
		ca.PreferredDuringSchedulingIgnoredDuringExecution = append(ca.PreferredDuringSchedulingIgnoredDuringExecution,
			placementv1beta1.PreferredClusterSelector{Weight: weight, Preference: placementv1beta1.ClusterSelectorTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: pairs(kv...)},
			}})
	}
}

// sortingBy adds a preferred term of weight that sorts by a property.
func sortingBy(weight int32, property string, order placementv1beta1.PropertySortOrder) func(*placementv1beta1.PlacementPolicy) {
	return func(p *placementv1beta1.PlacementPolicy) {
		ca := clusterAffinity(p)
		ca.PreferredDuringSchedulingIgnoredDuringExecution = append(ca.PreferredDuringSchedulingIgnoredDuringExecution,
			placementv1beta1.PreferredClusterSelector{Weight: weight, Preference: placementv1beta1.ClusterSelectorTerm{
				PropertySorter: &placementv1beta1.PropertySorter{Name: property, SortOrder: order},
			}})
	}
}

// spreading adds a topology spread constraint.
func spreading(key string, maxSkew int32, when placementv1beta1.UnsatisfiableConstraintAction) func(*placementv1beta1.PlacementPolicy) {
	return func(p *placementv1beta1.PlacementPolicy) {
		p.TopologySpreadConstraints = append(p.TopologySpreadConstraints,
			placementv1beta1.TopologySpreadConstraint{TopologyKey: key, MaxSkew: &maxSkew, WhenUnsatisfiable: when})
	}
}

// tolerating adds a toleration.
func tolerating(key, value string) func(*placementv1beta1.PlacementPolicy) {
	return func(p *placementv1beta1.PlacementPolicy) {
		p.Tolerations = append(p.Tolerations, placementv1beta1.Toleration{Key: key, Operator: placementv1beta1.TolerationOpEqual, Value: value})
	}
}

func clusterAffinity(p *placementv1beta1.PlacementPolicy) *placementv1beta1.ClusterAffinity {
	if p.Affinity == nil {
		p.Affinity = &placementv1beta1.Affinity{}
	}
	if p.Affinity.ClusterAffinity == nil {
		p.Affinity.ClusterAffinity = &placementv1beta1.ClusterAffinity{}
	}
	return p.Affinity.ClusterAffinity
}

func pairs(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// clusterWithLabels returns a healthy cluster with labels kv.
func clusterWithLabels(name string, kv ...string) clusterv1beta1.MemberCluster {
	return ft.Cluster(name, ft.Labels(kv...))
}

// decisionOf returns the decision about the named cluster.
func decisionOf(t testing.TB, res framework.CycleResult, name string) placementv1beta1.ClusterDecision {
	t.Helper()
	d, ok := res.Decision(name)
	if !ok {
		t.Fatalf("no decision about %s", name)
	}
	return d
}

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

package scheduler

// A generative test of the scheduling stage: random fleets, policies and event
// sequences (joins, leaves, label changes, taints, disconnections, policy edits,
// scheduling and rollout passes) go through the real framework cycle and
// planBindings, and after every scheduling pass the plan must keep these
// invariants:
//
//   - a binding is created, or scheduled again, only on a cluster the policy
//     admits now (joined, connected, the required labels, no NoSchedule taint);
//   - a PickN placement never has more than numberOfClusters active bindings;
//   - a PickAll placement has a binding on every cluster it admits;
//   - a placement never gets two bindings for one cluster;
//   - no two (placement, cluster) pairs ever share a binding name;
//   - scheduling again in the world the plan leaves behind plans nothing.

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
)

// Names chosen to collide under naive naming: web on prod-1 and web-prod on 1.
var (
	clusterPool   = []string{"prod-1", "1", "m1", "m2", "eu-west", "x"}
	placementPool = []string{"web", "web-prod", "api"}
)

type fleetModel struct {
	fw         *framework.Framework
	clusters   map[string]clusterv1beta1.MemberCluster
	placements map[string]*placementModel
	// names maps every binding name ever created to its placement/cluster.
	names map[string]string
}

type placementModel struct {
	key      pipeline.PlacementKey
	policy   *placementv1beta1.PlacementPolicy
	snapshot int
	bindings map[string]*placementv1beta1.ClusterResourceBinding
}

func (m *fleetModel) clusterList() []clusterv1beta1.MemberCluster {
	out := make([]clusterv1beta1.MemberCluster, 0, len(m.clusters))
	for _, c := range m.clusters {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func randomPolicy(t *rapid.T) *placementv1beta1.PlacementPolicy {
	p := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll}
	if rapid.Bool().Draw(t, "pickN") {
		p.PlacementType = placementv1beta1.PickN
		p.NumberOfClusters = ft.Ptr(int32(rapid.IntRange(0, 4).Draw(t, "n")))
	}
	if env := rapid.SampledFrom([]string{"", "dev", "prod"}).Draw(t, "requiredEnv"); env != "" {
		p.Affinity = &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
				{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": env}}},
			}},
		}}
	}
	return p
}

// admits reports whether the policy may place on the cluster now.
func admits(p *placementv1beta1.PlacementPolicy, mc *clusterv1beta1.MemberCluster) bool {
	for _, c := range mc.Status.Conditions {
		if (c.Type == clusterv1beta1.ConditionAgentConnected || c.Type == clusterv1beta1.ConditionJoined) && c.Status != metav1.ConditionTrue {
			return false
		}
	}
	for _, t := range mc.Spec.Taints {
		if t.Effect == clusterv1beta1.TaintEffectNoSchedule {
			return false
		}
	}
	if p.Affinity != nil {
		want := p.Affinity.ClusterAffinity.RequiredDuringSchedulingIgnoredDuringExecution.ClusterSelectorTerms[0].LabelSelector.MatchLabels["env"]
		return mc.Labels["env"] == want
	}
	return true
}

func (m *fleetModel) schedule(t *rapid.T, p *placementModel, seed int64) bindingPlan {
	var existing []placementv1beta1.BindingObj
	for _, c := range sortedKeys((p.bindings)) {
		existing = append(existing, p.bindings[c])
	}
	in := framework.CycleInput{
		PlacementName: p.key.String(), Policy: p.policy, Clusters: m.clusterList(), Bindings: existing,
		Now: ft.Now, Rand: rand.New(rand.NewSource(seed)),
	}
	res, err := m.fw.RunCycle(t.Context(), in)
	if err != nil {
		t.Fatalf("RunCycle: %v", err)
	}
	return planBindings(existing, res, nil, fmt.Sprintf("%s-%d", p.key.Name, p.snapshot))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// apply carries a plan out on the model, as Reconciler.write does on the API.
func (m *fleetModel) apply(t *rapid.T, p *placementModel, plan bindingPlan) {
	for _, c := range plan.create {
		if b, ok := p.bindings[c.cluster]; ok && b.DeletionTimestamp == nil {
			t.Fatalf("placement %s: a second binding planned for cluster %s", p.key, c.cluster)
		}
		name := BindingName(p.key, "", c.cluster)
		pair := p.key.String() + "/" + c.cluster
		if other, ok := m.names[name]; ok && other != pair {
			t.Fatalf("binding name %s of %s collides with %s", name, pair, other)
		}
		m.names[name] = pair
		b := &placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1}, Spec: c.spec}
		p.bindings[c.cluster] = b
	}
	for _, w := range plan.spec {
		*w.binding.GetBindingSpec() = w.want
	}
	for _, w := range plan.scheduled {
		b := w.binding
		if b == nil {
			b = p.bindings[w.cluster]
		}
		status, reason, msg := scheduledCondition(b.GetBindingSpec(), w.misplaced, w.evicting)
		own := pipeline.OwnConditions(b.GetBindingStatus().Conditions, placementv1beta1.ConditionScheduled)
		setCondition(&own, placementv1beta1.ConditionScheduled, status, reason, msg, b.GetGeneration())
		b.GetBindingStatus().Conditions = own
	}
}

func (m *fleetModel) check(t *rapid.T, p *placementModel, plan bindingPlan) {
	newlyScheduled := map[string]bool{}
	for _, c := range plan.create {
		newlyScheduled[c.cluster] = true
	}
	for _, w := range plan.spec {
		if w.binding.GetBindingSpec().State == placementv1beta1.BindingStateUnscheduled && w.want.State == placementv1beta1.BindingStateScheduled {
			newlyScheduled[w.want.TargetCluster] = true
		}
	}
	for c := range newlyScheduled {
		mc, ok := m.clusters[c]
		if !ok || !admits(p.policy, &mc) {
			t.Fatalf("placement %s scheduled on %s, which its policy does not admit now", p.key, c)
		}
	}
	m.apply(t, p, plan)
	active := 0
	for _, b := range p.bindings {
		if pipeline.IsActive(b) {
			active++
		}
	}
	if p.policy.PlacementType == placementv1beta1.PickN && active > int(*p.policy.NumberOfClusters) {
		t.Fatalf("PickN %d placement %s has %d active bindings", *p.policy.NumberOfClusters, p.key, active)
	}
	if p.policy.PlacementType == placementv1beta1.PickAll {
		for name, mc := range m.clusters {
			b, ok := p.bindings[name]
			if admits(p.policy, &mc) && !slices.Contains(plan.waiting, name) && (!ok || !pipeline.IsActive(b)) {
				t.Fatalf("PickAll placement %s has no active binding on %s, which it admits", p.key, name)
			}
		}
	}
	if again := m.schedule(t, p, 1); len(again.create)+len(again.spec) > 0 {
		var diffs []string
		for _, w := range again.spec {
			diffs = append(diffs, cmp.Diff(*w.binding.GetBindingSpec(), w.want))
		}
		t.Fatalf("placement %s: scheduling again in the world the plan left plans %d creates and %d spec writes: %v",
			p.key, len(again.create), len(again.spec), diffs)
	}
}

func TestSchedulingPipelineInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := &fleetModel{
			fw: plugins.NewFramework(framework.Options{}), clusters: map[string]clusterv1beta1.MemberCluster{},
			placements: map[string]*placementModel{}, names: map[string]string{},
		}
		pickCluster := func(t *rapid.T) (string, bool) {
			if len(m.clusters) == 0 {
				return "", false
			}
			return rapid.SampledFrom(sortedKeys((m.clusters))).Draw(t, "cluster"), true
		}
		pickPlacement := func(t *rapid.T) *placementModel {
			if len(m.placements) == 0 {
				t.Skip("no placement yet")
			}
			return m.placements[rapid.SampledFrom(sortedKeys((m.placements))).Draw(t, "placement")]
		}
		t.Repeat(map[string]func(*rapid.T){
			"join": func(t *rapid.T) {
				name := rapid.SampledFrom(clusterPool).Draw(t, "name")
				m.clusters[name] = ft.Cluster(name, ft.Labels("env", rapid.SampledFrom([]string{"dev", "prod"}).Draw(t, "env")))
			},
			"leave": func(t *rapid.T) {
				if c, ok := pickCluster(t); ok {
					delete(m.clusters, c)
				}
			},
			"relabel": func(t *rapid.T) {
				if c, ok := pickCluster(t); ok {
					mc := m.clusters[c]
					mc.Labels = map[string]string{"env": rapid.SampledFrom([]string{"dev", "prod"}).Draw(t, "env")}
					m.clusters[c] = mc
				}
			},
			"taint": func(t *rapid.T) {
				if c, ok := pickCluster(t); ok {
					mc := m.clusters[c]
					ft.Taints(ft.Taint("maintenance", "true", clusterv1beta1.TaintEffectNoSchedule))(&mc)
					m.clusters[c] = mc
				}
			},
			"untaint": func(t *rapid.T) {
				if c, ok := pickCluster(t); ok {
					mc := m.clusters[c]
					mc.Spec.Taints = nil
					m.clusters[c] = mc
				}
			},
			"disconnect": func(t *rapid.T) {
				if c, ok := pickCluster(t); ok {
					mc := m.clusters[c]
					mc = *mc.DeepCopy()
					ft.Condition(clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse, time.Hour)(&mc)
					m.clusters[c] = mc
				}
			},
			"create or edit a placement": func(t *rapid.T) {
				name := rapid.SampledFrom(placementPool).Draw(t, "placement")
				p, ok := m.placements[name]
				if !ok {
					p = &placementModel{key: pipeline.PlacementKey{Name: name}, bindings: map[string]*placementv1beta1.ClusterResourceBinding{}}
					m.placements[name] = p
				}
				p.policy = randomPolicy(t)
				p.snapshot++
			},
			"schedule": func(t *rapid.T) {
				p := pickPlacement(t)
				m.check(t, p, m.schedule(t, p, rapid.Int64().Draw(t, "seed")))
			},
			"roll out": func(t *rapid.T) {
				p := pickPlacement(t)
				for c, b := range p.bindings {
					switch b.Spec.State {
					case placementv1beta1.BindingStateScheduled:
						b.Spec.State = placementv1beta1.BindingStateBound
					case placementv1beta1.BindingStateUnscheduled:
						delete(p.bindings, c)
					}
				}
			},
		})
	})
}

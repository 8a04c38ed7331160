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

package placement

// A generative test of the conflict decision between placements. Random sets
// of ClusterResourcePlacements (selecting whole namespaces and cluster-scoped
// objects) and ResourcePlacements (selecting ConfigMaps of their namespace),
// with random creation times (ties included) and allowCoOwnership, go through
// decideConflicts the way the placement controller runs it: each reconcile of
// a placement decides from what the others' status says they place and writes
// what it places to its own status. Reconciles come in random orders; then the
// placements are created, deleted, finalised and edited at random. Once every
// placement has been reconciled until nothing changes:
//
//   - every object is placed by at most one placement, unless every placement
//     that places it allows co-ownership (the Namespace a ResourcePlacement
//     brings is create-only and counts for none);
//   - the earliest-created (pipeline.Earlier) placement that selects an object
//     places it;
//   - the decision for a placement does not depend on the order of the others,
//     and reconciling in any order reaches the same result;
//   - creating, deleting or editing a placement never takes an object away
//     from a placement created earlier that still selects it; deleting one
//     takes nothing from a placement that does not allow co-ownership either.
//
// "Created earlier" is pipeline.Earlier: creation timestamps have whole
// seconds, so of two placements created in one second the
// ClusterResourcePlacement, then the smaller key, counts as the earlier.

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"pgregory.net/rapid"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

var (
	hubNamespaces   = []string{"a", "b"}
	hubConfigMaps   = []string{"x", "y"}
	hubClusterRoles = []string{"r1", "r2"}
	crpNames        = []string{"c1", "c2", "c3"}
	rpNames         = []string{"p1", "p2"}
)

func clusterRole(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("rbac.authorization.k8s.io/v1")
	u.SetKind("ClusterRole")
	u.SetName(name)
	return u
}

// conflictPlacement is a placement of the model and what it selects.
type conflictPlacement struct {
	obj placementv1beta1.PlacementObj
	// namespaces and roles are what a ClusterResourcePlacement selects: whole
	// namespaces (the Namespace and every ConfigMap in it) and ClusterRoles.
	namespaces, roles []string
	// configMaps are what a ResourcePlacement selects in its namespace; it
	// brings the Namespace too.
	configMaps []string
}

func (p *conflictPlacement) key() pipeline.PlacementKey { return pipeline.KeyOf(p.obj) }

func (p *conflictPlacement) selected() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	if ns := p.obj.GetNamespace(); ns != "" {
		out = append(out, namespaceObj(ns))
		for _, cm := range p.configMaps {
			out = append(out, configMap(ns, cm))
		}
		return out
	}
	for _, ns := range p.namespaces {
		out = append(out, namespaceObj(ns))
		for _, cm := range hubConfigMaps {
			out = append(out, configMap(ns, cm))
		}
	}
	for _, r := range p.roles {
		out = append(out, clusterRole(r))
	}
	return out
}

// counts reports whether the placement selecting or placing the object counts
// for its ownership: the Namespace a ResourcePlacement brings does not.
func counts(p *conflictPlacement, id objectID) bool {
	return !(p.key().Namespaced() && isNamespace(id.group, id.kind))
}

func (p *conflictPlacement) selects(id objectID) bool {
	return counts(p, id) && slices.ContainsFunc(p.selected(), func(u *unstructured.Unstructured) bool { return idOf(u) == id })
}

func (p *conflictPlacement) places(id objectID) bool {
	return counts(p, id) && slices.ContainsFunc(p.obj.GetPlacementStatus().SelectedResources, func(r placementv1beta1.ResourceIdentifier) bool {
		return idOfResource(r) == id
	})
}

func (p *conflictPlacement) live() bool { return p.obj.GetDeletionTimestamp().IsZero() }

type conflictModel struct {
	placements map[pipeline.PlacementKey]*conflictPlacement
	// latest is the latest creation time so far, in minutes after t0.
	latest int
}

func (m *conflictModel) keys() []pipeline.PlacementKey {
	out := make([]pipeline.PlacementKey, 0, len(m.placements))
	for k := range m.placements {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func (m *conflictModel) all() []placementv1beta1.PlacementObj {
	out := make([]placementv1beta1.PlacementObj, 0, len(m.placements))
	for _, k := range m.keys() {
		out = append(out, m.placements[k].obj)
	}
	return out
}

// universe is every object any placement may select.
func universe() []objectID {
	var out []objectID
	for _, ns := range hubNamespaces {
		out = append(out, namespaceOf(ns))
		for _, cm := range hubConfigMaps {
			out = append(out, objectID{kind: "ConfigMap", namespace: ns, name: cm})
		}
	}
	for _, r := range hubClusterRoles {
		out = append(out, objectID{group: "rbac.authorization.k8s.io", kind: "ClusterRole", name: r})
	}
	return out
}

// reconcile runs the conflict decision for one placement, as the controller
// does, and reports whether what it places changed. A placement being deleted
// is not reconciled.
func (m *conflictModel) reconcile(k pipeline.PlacementKey) bool {
	p := m.placements[k]
	if !p.live() {
		return false
	}
	kept, _ := decideConflicts(p.obj, p.selected(), m.all())
	var ids []placementv1beta1.ResourceIdentifier
	if len(kept) > 0 {
		ids = identifiers(kept)
	}
	st := p.obj.GetPlacementStatus()
	if cmp.Equal(ids, st.SelectedResources) {
		return false
	}
	st.SelectedResources = ids
	return true
}

// settle reconciles the placements in a random order, round after round, until
// nothing changes; the n-th placement (pipeline.Earlier) is final after n
// rounds at most.
func (m *conflictModel) settle(t *rapid.T) {
	order := rapid.Permutation(m.keys()).Draw(t, "reconcile order")
	for round := 0; ; round++ {
		if round > len(order)+1 {
			t.Fatalf("the placements still change after %d rounds of reconciles", round)
		}
		changed := false
		for _, k := range order {
			changed = m.reconcile(k) || changed
		}
		if !changed {
			return
		}
	}
}

// placed returns what each placement places.
func (m *conflictModel) placed() map[pipeline.PlacementKey][]objectID {
	out := map[pipeline.PlacementKey][]objectID{}
	for k, p := range m.placements {
		for _, id := range universe() {
			if p.places(id) {
				out[k] = append(out[k], id)
			}
		}
	}
	return out
}

// check checks the invariants of a settled model.
func (m *conflictModel) check(t *rapid.T) {
	var live []*conflictPlacement
	for _, k := range m.keys() {
		if p := m.placements[k]; p.live() {
			live = append(live, p)
		}
	}
	sort.SliceStable(live, func(i, j int) bool { return pipeline.Earlier(live[i].obj, live[j].obj) })
	for _, id := range universe() {
		var placers []string
		allCoOwned := true
		for _, p := range live {
			if p.places(id) {
				placers = append(placers, p.key().String())
				allCoOwned = allCoOwned && coOwned(p.obj)
			}
			if p.places(id) && !p.selects(id) {
				t.Fatalf("%s places %s, which it does not select", p.key(), id)
			}
		}
		if len(placers) > 1 && !allCoOwned {
			t.Fatalf("%s is placed by %v, and not all of them allow co-ownership", id, placers)
		}
		for _, p := range live {
			if p.selects(id) {
				if !p.places(id) {
					t.Fatalf("%s is selected first by %s (created %s), which does not place it; it is placed by %v",
						id, p.key(), p.obj.GetCreationTimestamp().UTC().Format(time.TimeOnly), placers)
				}
				break
			}
		}
	}
	// The decision does not depend on the order of the others.
	all := m.all()
	for _, p := range live {
		wantKept, wantConflicts := decideConflicts(p.obj, p.selected(), all)
		shuffled := rapid.Permutation(all).Draw(t, "others")
		gotKept, gotConflicts := decideConflicts(p.obj, p.selected(), shuffled)
		if diff := cmp.Diff(names(wantKept), names(gotKept)); diff != "" {
			t.Fatalf("%s places other objects when the others come in another order (-want +got):\n%s", p.key(), diff)
		}
		if diff := cmp.Diff(wantConflicts, gotConflicts, cmp.AllowUnexported(conflict{}, objectID{}, pipeline.PlacementKey{})); diff != "" {
			t.Fatalf("%s has other conflicts when the others come in another order (-want +got):\n%s", p.key(), diff)
		}
	}
}

// checkKept checks that every placement keep says must keep what it placed
// before (and still selects) still places it.
func (m *conflictModel) checkKept(t *rapid.T, before map[pipeline.PlacementKey][]objectID, event string, keep func(*conflictPlacement) bool) {
	for k, ids := range before {
		p := m.placements[k]
		if p == nil || !p.live() || !keep(p) {
			continue
		}
		for _, id := range ids {
			if p.selects(id) && !p.places(id) {
				t.Fatalf("%s took %s away from %s (created %s), which still selects it",
					event, id, k, p.obj.GetCreationTimestamp().UTC().Format(time.TimeOnly))
			}
		}
	}
}

// drawPlacement draws a new placement of a name not in use, created at the
// given minute after t0.
func (m *conflictModel) drawPlacement(t *rapid.T, minute int) *conflictPlacement {
	at := metav1.NewTime(t0.Add(time.Duration(minute) * time.Minute))
	p := &conflictPlacement{}
	if rapid.Bool().Draw(t, "cluster-scoped") {
		p.obj = &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: rapid.SampledFrom(crpNames).Draw(t, "name"), CreationTimestamp: at}}
	} else {
		p.obj = &placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{
			Namespace: rapid.SampledFrom(hubNamespaces).Draw(t, "namespace"), Name: rapid.SampledFrom(rpNames).Draw(t, "name"), CreationTimestamp: at}}
	}
	if m.placements[p.key()] != nil {
		return nil
	}
	drawSelection(t, p)
	return p
}

func drawSelection(t *rapid.T, p *conflictPlacement) {
	subset := func(from []string, label string) []string {
		var out []string
		for _, s := range from {
			if rapid.Bool().Draw(t, label+" "+s) {
				out = append(out, s)
			}
		}
		return out
	}
	p.namespaces, p.roles, p.configMaps = nil, nil, nil
	if p.key().Namespaced() {
		p.configMaps = subset(hubConfigMaps, "selects ConfigMap")
	} else {
		p.namespaces = subset(hubNamespaces, "selects namespace")
		p.roles = subset(hubClusterRoles, "selects ClusterRole")
	}
	var as *placementv1beta1.ApplyStrategy
	if rapid.Bool().Draw(t, "allowCoOwnership") {
		as = &placementv1beta1.ApplyStrategy{AllowCoOwnership: true}
	}
	p.obj.GetPlacementSpec().Strategy.ApplyStrategy = as
}

// keptOnDeletion says which placements keep all they place when p is deleted:
// those created before p, and those that do not allow co-ownership. A later
// one that shared an object with p (both allow co-ownership) may lose it to a
// placement created before it that p's claim kept out.
func keptOnDeletion(p *conflictPlacement) func(*conflictPlacement) bool {
	return func(o *conflictPlacement) bool { return pipeline.Earlier(o.obj, p.obj) || !coOwned(o.obj) }
}

func TestNoTwoPlacementsPlaceOneObject(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := &conflictModel{placements: map[pipeline.PlacementKey]*conflictPlacement{}}
		// Placements that exist already, created in any order, some at once.
		for range rapid.IntRange(0, 5).Draw(t, "placements") {
			if p := m.drawPlacement(t, rapid.IntRange(0, 3).Draw(t, "created")); p != nil {
				m.placements[p.key()] = p
				m.latest = max(m.latest, int(p.obj.GetCreationTimestamp().Sub(t0.Time)/time.Minute))
			}
		}
		// Some reconciles before all have run.
		for range rapid.IntRange(0, 4).Draw(t, "early reconciles") {
			if len(m.placements) > 0 {
				m.reconcile(rapid.SampledFrom(m.keys()).Draw(t, "reconcile"))
			}
		}
		m.settle(t)
		m.check(t)
		pick := func(t *rapid.T, live bool) *conflictPlacement {
			var ks []pipeline.PlacementKey
			for _, k := range m.keys() {
				if m.placements[k].live() == live {
					ks = append(ks, k)
				}
			}
			if len(ks) == 0 {
				t.Skip("no such placement")
			}
			return m.placements[rapid.SampledFrom(ks).Draw(t, "placement")]
		}
		t.Repeat(map[string]func(*rapid.T){
			"create a placement": func(t *rapid.T) {
				// Created now, or in the same second as the latest.
				minute := m.latest + rapid.IntRange(0, 1).Draw(t, "later")
				p := m.drawPlacement(t, minute)
				if p == nil {
					t.Skip("name in use")
				}
				before := m.placed()
				m.placements[p.key()] = p
				m.latest = minute
				m.settle(t)
				m.check(t)
				m.checkKept(t, before, "creating "+p.key().String(), func(o *conflictPlacement) bool { return pipeline.Earlier(o.obj, p.obj) })
			},
			"delete a placement": func(t *rapid.T) {
				p := pick(t, true)
				before := m.placed()
				now := metav1.NewTime(t0.Add(time.Hour))
				p.obj.SetDeletionTimestamp(&now)
				m.settle(t)
				m.check(t)
				m.checkKept(t, before, "deleting "+p.key().String(), keptOnDeletion(p))
			},
			"a deleted placement is gone": func(t *rapid.T) {
				p := pick(t, false)
				before := m.placed()
				delete(m.placements, p.key())
				m.settle(t)
				m.check(t)
				m.checkKept(t, before, fmt.Sprintf("%s being gone", p.key()), keptOnDeletion(p))
			},
			"edit what a placement selects": func(t *rapid.T) {
				p := pick(t, true)
				before := m.placed()
				drawSelection(t, p)
				m.settle(t)
				m.check(t)
				m.checkKept(t, before, "editing "+p.key().String(), func(o *conflictPlacement) bool { return pipeline.Earlier(o.obj, p.obj) })
			},
		})
	})
}

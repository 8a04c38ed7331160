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

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/resources"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
	t2 = metav1.NewTime(t0.Add(2 * time.Minute))
)

func coOwning[P placementv1beta1.PlacementObj](p P) P {
	p.GetPlacementSpec().Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{AllowCoOwnership: true}
	return p
}

func deleting[P placementv1beta1.PlacementObj](p P) P {
	now := metav1.NewTime(t2.Time)
	p.SetDeletionTimestamp(&now)
	return p
}

func crpPlacing(name string, at metav1.Time, ids ...placementv1beta1.ResourceIdentifier) *placementv1beta1.ClusterResourcePlacement {
	p := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at}}
	p.Status.SelectedResources = ids
	return p
}

func rpPlacing(ns, name string, at metav1.Time, ids ...placementv1beta1.ResourceIdentifier) *placementv1beta1.ResourcePlacement {
	p := &placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: at}}
	p.Status.SelectedResources = ids
	return p
}

func configMapID(ns, name string) placementv1beta1.ResourceIdentifier {
	return placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: name}
}

func namespaceID(name string) placementv1beta1.ResourceIdentifier {
	return placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "Namespace", Name: name}
}

func configMap(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func namespaceObj(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Namespace")
	u.SetName(name)
	return resources.MinimalNamespace(u)
}

func names(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, u := range objs {
		out = append(out, u.GetKind()+"/"+u.GetName())
	}
	return out
}

func TestTheLaterPlacementLeavesOutWhatAnEarlierOnePlaces(t *testing.T) {
	selected := func() []*unstructured.Unstructured {
		return []*unstructured.Unstructured{namespaceObj("team-a"), configMap("team-a", "app"), configMap("team-a", "other")}
	}
	for _, tc := range []struct {
		name         string
		self         placementv1beta1.PlacementObj
		others       []placementv1beta1.PlacementObj
		wantKept     []string
		wantConflict []conflict
	}{
		{
			name:     "a ResourcePlacement created after a ClusterResourcePlacement that places its ConfigMap leaves the ConfigMap out",
			self:     rpPlacing("team-a", "web", t1),
			others:   []placementv1beta1.PlacementObj{crpPlacing("all", t0, namespaceID("team-a"), configMapID("team-a", "app"))},
			wantKept: []string{"Namespace/team-a", "ConfigMap/other"},
			wantConflict: []conflict{{object: objectID{kind: "ConfigMap", namespace: "team-a", name: "app"},
				owner: pipeline.PlacementKey{Name: "all"}}},
		},
		{
			name:     "a ResourcePlacement created first keeps the ConfigMap",
			self:     rpPlacing("team-a", "web", t0),
			others:   []placementv1beta1.PlacementObj{crpPlacing("all", t1, namespaceID("team-a"), configMapID("team-a", "app"))},
			wantKept: []string{"Namespace/team-a", "ConfigMap/app", "ConfigMap/other"},
		},
		{
			name:     "the Namespace both bring is never a conflict",
			self:     rpPlacing("team-a", "web", t1),
			others:   []placementv1beta1.PlacementObj{crpPlacing("all", t0, namespaceID("team-a"))},
			wantKept: []string{"Namespace/team-a", "ConfigMap/app", "ConfigMap/other"},
		},
		{
			name:     "an earlier ResourcePlacement of the same namespace keeps what it places",
			self:     rpPlacing("team-a", "web", t1),
			others:   []placementv1beta1.PlacementObj{rpPlacing("team-a", "first", t0, configMapID("team-a", "other"))},
			wantKept: []string{"Namespace/team-a", "ConfigMap/app"},
			wantConflict: []conflict{{object: objectID{kind: "ConfigMap", namespace: "team-a", name: "other"},
				owner: pipeline.PlacementKey{Namespace: "team-a", Name: "first"}}},
		},
		{
			name:     "a ResourcePlacement of another namespace does not count",
			self:     rpPlacing("team-a", "web", t1),
			others:   []placementv1beta1.PlacementObj{rpPlacing("team-b", "first", t0, configMapID("team-a", "other"))},
			wantKept: []string{"Namespace/team-a", "ConfigMap/app", "ConfigMap/other"},
		},
		{
			name:     "a ClusterResourcePlacement created after another that places a ConfigMap leaves the ConfigMap out",
			self:     crpPlacing("late", t1),
			others:   []placementv1beta1.PlacementObj{crpPlacing("all", t0, configMapID("team-a", "app"))},
			wantKept: []string{"Namespace/team-a", "ConfigMap/other"},
			wantConflict: []conflict{{object: objectID{kind: "ConfigMap", namespace: "team-a", name: "app"},
				owner: pipeline.PlacementKey{Name: "all"}}},
		},
		{
			name:     "a ClusterResourcePlacement created after another that places the Namespace leaves the Namespace and all in it out",
			self:     crpPlacing("late", t1),
			others:   []placementv1beta1.PlacementObj{crpPlacing("all", t0, namespaceID("team-a"))},
			wantKept: []string{},
			wantConflict: []conflict{
				{object: objectID{kind: "Namespace", name: "team-a"}, owner: pipeline.PlacementKey{Name: "all"}},
				{object: objectID{kind: "ConfigMap", namespace: "team-a", name: "app"}, owner: pipeline.PlacementKey{Name: "all"}},
				{object: objectID{kind: "ConfigMap", namespace: "team-a", name: "other"}, owner: pipeline.PlacementKey{Name: "all"}},
			},
		},
		{
			name:     "the earliest of two earlier ClusterResourcePlacements is the owner",
			self:     crpPlacing("late", t2),
			others:   []placementv1beta1.PlacementObj{crpPlacing("second", t1, namespaceID("team-a")), crpPlacing("first", t0, configMapID("team-a", "app"))},
			wantKept: []string{},
			wantConflict: []conflict{
				{object: objectID{kind: "Namespace", name: "team-a"}, owner: pipeline.PlacementKey{Name: "second"}},
				{object: objectID{kind: "ConfigMap", namespace: "team-a", name: "app"}, owner: pipeline.PlacementKey{Name: "first"}},
				{object: objectID{kind: "ConfigMap", namespace: "team-a", name: "other"}, owner: pipeline.PlacementKey{Name: "second"}},
			},
		},
		{
			name:     "a ClusterResourcePlacement created first keeps the Namespace and all in it",
			self:     crpPlacing("first", t0),
			others:   []placementv1beta1.PlacementObj{crpPlacing("late", t1, namespaceID("team-a"), configMapID("team-a", "app"))},
			wantKept: []string{"Namespace/team-a", "ConfigMap/app", "ConfigMap/other"},
		},
		{
			name:     "two ClusterResourcePlacements that both allow co-ownership share the Namespace",
			self:     coOwning(crpPlacing("late", t1)),
			others:   []placementv1beta1.PlacementObj{coOwning(crpPlacing("all", t0, namespaceID("team-a"), configMapID("team-a", "app")))},
			wantKept: []string{"Namespace/team-a", "ConfigMap/app", "ConfigMap/other"},
		},
		{
			name:     "co-ownership allowed by the later ClusterResourcePlacement alone is no sharing",
			self:     coOwning(crpPlacing("late", t1)),
			others:   []placementv1beta1.PlacementObj{crpPlacing("all", t0, configMapID("team-a", "app"))},
			wantKept: []string{"Namespace/team-a", "ConfigMap/other"},
			wantConflict: []conflict{{object: objectID{kind: "ConfigMap", namespace: "team-a", name: "app"},
				owner: pipeline.PlacementKey{Name: "all"}}},
		},
		{
			name:     "co-ownership allowed by the earlier ClusterResourcePlacement alone is no sharing",
			self:     crpPlacing("late", t1),
			others:   []placementv1beta1.PlacementObj{coOwning(crpPlacing("all", t0, configMapID("team-a", "app")))},
			wantKept: []string{"Namespace/team-a", "ConfigMap/other"},
			wantConflict: []conflict{{object: objectID{kind: "ConfigMap", namespace: "team-a", name: "app"},
				owner: pipeline.PlacementKey{Name: "all"}}},
		},
		{
			name:     "an earlier ClusterResourcePlacement being deleted claims nothing",
			self:     crpPlacing("late", t1),
			others:   []placementv1beta1.PlacementObj{deleting(crpPlacing("all", t0, namespaceID("team-a"), configMapID("team-a", "app")))},
			wantKept: []string{"Namespace/team-a", "ConfigMap/app", "ConfigMap/other"},
		},
		{
			name:     "a ResourcePlacement's Namespace claims nothing for a later ClusterResourcePlacement",
			self:     crpPlacing("late", t1),
			others:   []placementv1beta1.PlacementObj{rpPlacing("team-a", "web", t0, namespaceID("team-a"))},
			wantKept: []string{"Namespace/team-a", "ConfigMap/app", "ConfigMap/other"},
		},
		{
			name:     "a ClusterResourcePlacement created after a ResourcePlacement leaves its ConfigMap out",
			self:     crpPlacing("late", t1),
			others:   []placementv1beta1.PlacementObj{rpPlacing("team-a", "web", t0, namespaceID("team-a"), configMapID("team-a", "app"))},
			wantKept: []string{"Namespace/team-a", "ConfigMap/other"},
			wantConflict: []conflict{{object: objectID{kind: "ConfigMap", namespace: "team-a", name: "app"},
				owner: pipeline.PlacementKey{Namespace: "team-a", Name: "web"}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept, got := withoutClaimed(pipeline.KeyOf(tc.self), selected(), claims(tc.self, append(tc.others, tc.self)))
			if diff := cmp.Diff(tc.wantKept, names(kept)); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantConflict, got, cmp.AllowUnexported(conflict{}, objectID{}, pipeline.PlacementKey{})); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConflictMessageNamesTheObjectsAndTheOtherPlacement(t *testing.T) {
	got := conflictMessage([]conflict{
		{object: objectID{kind: "ConfigMap", namespace: "team-a", name: "b"}, owner: pipeline.PlacementKey{Name: "all"}},
		{object: objectID{kind: "ConfigMap", namespace: "team-a", name: "a"}, owner: pipeline.PlacementKey{Name: "all"}},
		{object: objectID{group: "apps", kind: "Deployment", namespace: "team-a", name: "web"}, owner: pipeline.PlacementKey{Namespace: "team-a", Name: "first"}},
	})
	want := "3 selected object(s) not placed by this placement: ConfigMap team-a/a, ConfigMap team-a/b placed by ClusterResourcePlacement all, created earlier; " +
		"Deployment.apps team-a/web placed by ResourcePlacement team-a/first, created earlier"
	if got != want {
		t.Errorf("conflictMessage =\n%s\nwant\n%s", got, want)
	}
}

func TestMightSelectKeepsAResourcePlacementToItsNamespace(t *testing.T) {
	rp := &placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"},
		Spec: placementv1beta1.PlacementSpec{ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "ConfigMap"}}}}
	cm := func(ns string) resources.Change {
		return resources.Change{GVK: configMap("", "").GroupVersionKind(), Namespace: ns, Name: "app"}
	}
	ns := func(name string) resources.Change {
		return resources.Change{GVK: namespaceObj("").GroupVersionKind(), Name: name}
	}
	for _, tc := range []struct {
		name string
		ch   resources.Change
		want bool
	}{
		{"a ConfigMap of its namespace", cm("team-a"), true},
		{"a ConfigMap of another namespace", cm("team-b"), false},
		{"its Namespace (labels it brings)", ns("team-a"), true},
		{"another Namespace", ns("team-b"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mightSelect(rp, tc.ch); got != tc.want {
				t.Errorf("mightSelect = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLookupKeysFindEveryPlacementThatMayClaimASelectedObject(t *testing.T) {
	selected := []*unstructured.Unstructured{namespaceObj("team-a"), configMap("team-a", "app"), configMap("team-b", "x")}
	for _, tc := range []struct {
		name string
		self pipeline.PlacementKey
		want []string
	}{
		{
			name: "a ClusterResourcePlacement looks up each object and the Namespace of each namespaced one",
			self: pipeline.PlacementKey{Name: "late"},
			want: []string{"/Namespace//team-a", "/ConfigMap/team-a/app", "/ConfigMap/team-b/x", "/Namespace//team-b"},
		},
		{
			name: "a ResourcePlacement looks up each object only",
			self: pipeline.PlacementKey{Namespace: "team-a", Name: "web"},
			want: []string{"/Namespace//team-a", "/ConfigMap/team-a/app", "/ConfigMap/team-b/x"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, lookupKeys(tc.self, selected)); diff != "" {
				t.Errorf("lookupKeys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAPlacementIsIndexedUnderEveryObjectItPlaces(t *testing.T) {
	p := crpPlacing("all", t0, namespaceID("team-a"), configMapID("team-a", "app"))
	want := []string{"/Namespace//team-a", "/ConfigMap/team-a/app", "in-namespace:team-a"}
	if diff := cmp.Diff(want, claimsIndexKeys(p)); diff != "" {
		t.Errorf("claimsIndexKeys (-want +got):\n%s", diff)
	}
	// What the index finds is what claims reads: the lookup of a selected
	// object's key finds the placement.
	keys := map[string]bool{}
	for _, k := range claimsIndexKeys(p) {
		keys[k] = true
	}
	for _, k := range lookupKeys(pipeline.PlacementKey{Name: "late"}, []*unstructured.Unstructured{configMap("team-a", "other")}) {
		if keys[k] {
			return
		}
	}
	t.Errorf("a later ClusterResourcePlacement selecting ConfigMap team-a/other does not find %s, which places Namespace team-a", pipeline.KeyOf(p))
}

// A placement whose placed objects change wakes the placements placing the
// same objects and, for a Namespace, those placing objects in it; nothing
// else (a placement that leaves objects out for it is woken as Conflicted).
func TestAChangeWakesOnlyThePlacementsPlacingTheSameObjects(t *testing.T) {
	changed := crpPlacing("early", t0, namespaceID("team-a"), configMapID("team-b", "app"))
	keys, ok := wakeKeys(changed)
	if !ok {
		t.Fatal("two objects are over the bound")
	}
	woken := func(p placementv1beta1.PlacementObj) bool {
		for _, k := range claimsIndexKeys(p) {
			for _, w := range keys {
				if k == w {
					return true
				}
			}
		}
		return false
	}
	for _, tc := range []struct {
		p    placementv1beta1.PlacementObj
		want bool
	}{
		{crpPlacing("same-configmap", t0, configMapID("team-b", "app")), true},
		{crpPlacing("in-its-namespace", t0, configMapID("team-a", "web")), true},
		{crpPlacing("same-namespace-object", t0, namespaceID("team-a")), true},
		{crpPlacing("other-configmap-same-namespace", t0, configMapID("team-b", "web")), false},
		{crpPlacing("elsewhere", t0, namespaceID("team-c"), configMapID("team-c", "app")), false},
	} {
		if got := woken(tc.p); got != tc.want {
			t.Errorf("%s woken: %v, want %v", pipeline.KeyOf(tc.p), got, tc.want)
		}
	}
	many := make([]placementv1beta1.ResourceIdentifier, 0, maxPeerKeys+1)
	for i := range maxPeerKeys + 1 {
		many = append(many, configMapID("team-a", fmt.Sprint("cm-", i)))
	}
	if _, ok := wakeKeys(crpPlacing("big", t0, many...)); ok {
		t.Errorf("%d objects: want every placement woken instead of lookups", len(many))
	}
}

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

package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestWorkNamesNeverCollideAcrossScopes(t *testing.T) {
	keys := []PlacementKey{
		{Name: "web"},
		{Namespace: "team-a", Name: "web"},
		{Namespace: "team-b", Name: "web"},
		// A ClusterResourcePlacement named like a ResourcePlacement's prefix.
		{Name: "team-a.web"},
		{Namespace: "team-a", Name: "web-x"},
		{Namespace: "team-a-web", Name: "x"},
		// web's group g was web-g-work, which is also web-g's Work.
		{Name: "web-g"},
	}
	seen := map[string]PlacementKey{}
	for _, k := range keys {
		for _, group := range []string{"", "g"} {
			name := k.WorkName(group)
			if other, ok := seen[name]; ok {
				t.Errorf("%s and %s share the Work name %s", k, other, name)
			}
			seen[name] = k
		}
	}
	if got := (PlacementKey{Name: "web"}).WorkName(""); got != "web-work" {
		t.Errorf("a ClusterResourcePlacement's Work name changed: %s", got)
	}
	for _, k := range []PlacementKey{{Namespace: "n", Name: strings.Repeat("a", 300)}, {Name: strings.Repeat("b", 250)}} {
		for _, group := range []string{"", strings.Repeat("G_", 40)} {
			name := k.WorkName(group)
			if len(name) > 253 {
				t.Errorf("a Work name is %d characters long, more than 253", len(name))
			}
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				t.Errorf("Work name %q is not a valid object name: %v", name, errs)
			}
		}
	}
}

func TestLegacyWorkNameIsWhatOlderHubsWrote(t *testing.T) {
	for _, tc := range []struct {
		key   PlacementKey
		group string
		want  string
	}{
		{PlacementKey{Name: "web"}, "db", "web-db-work"},
		{PlacementKey{Name: "web"}, "", ""},
		{PlacementKey{Namespace: "team", Name: "web"}, "db", ""},
	} {
		if got := tc.key.LegacyWorkName(tc.group); got != tc.want {
			t.Errorf("LegacyWorkName(%s, %q) = %q, want %q", tc.key, tc.group, got, tc.want)
		}
	}
}

func TestOwnerKeyReadsBothScopes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   PlacementKey
		wantOK bool
	}{
		{"a ClusterResourcePlacement's object", map[string]string{placementv1beta1.LabelPlacementName: "web"}, PlacementKey{Name: "web"}, true},
		{"a ResourcePlacement's object", map[string]string{placementv1beta1.LabelPlacementName: "web", placementv1beta1.LabelPlacementNamespace: "team-a"},
			PlacementKey{Namespace: "team-a", Name: "web"}, true},
		{"an object of no placement", map[string]string{"x": "y"}, PlacementKey{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := OwnerKey(&metav1.ObjectMeta{Labels: tc.labels})
			if ok != tc.wantOK || got != tc.want {
				t.Errorf("OwnerKey = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
			if ok {
				if diff := cmp.Diff(tc.labels, got.Labels()); diff != "" {
					t.Errorf("Labels() (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestEarlierOrdersByCreationThenScopeThenKey(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Second))
	crp := func(name string, at metav1.Time) placementv1beta1.PlacementObj {
		return &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at}}
	}
	rp := func(ns, name string, at metav1.Time) placementv1beta1.PlacementObj {
		return &placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: at}}
	}
	for _, tc := range []struct {
		name string
		a, b placementv1beta1.PlacementObj
		want bool
	}{
		{"the older placement is earlier", rp("n", "b", t0), crp("a", t1), true},
		{"the newer placement is not earlier", crp("a", t1), rp("n", "b", t0), false},
		{"created in the same second, the ClusterResourcePlacement is earlier", crp("z", t0), rp("a", "a", t0), true},
		{"created in the same second, a ResourcePlacement is not earlier than a ClusterResourcePlacement", rp("a", "a", t0), crp("z", t0), false},
		{"two ResourcePlacements of the same second go by key", rp("n", "a", t0), rp("n", "b", t0), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Earlier(tc.a, tc.b); got != tc.want {
				t.Errorf("Earlier = %v, want %v", got, tc.want)
			}
		})
	}
}

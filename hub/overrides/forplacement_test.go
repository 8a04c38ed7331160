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

package overrides

import (
	"testing"

	"github.com/flotilla-io/flotilla/hub/pipeline"
)

func TestForPlacementMatchesPlacementNamesByScope(t *testing.T) {
	crp := pipeline.PlacementKey{Name: "web"}
	rpA := pipeline.PlacementKey{Namespace: "team-a", Name: "web"}
	rpB := pipeline.PlacementKey{Namespace: "team-b", Name: "web"}
	for _, tc := range []struct {
		name      string
		override  Override
		placement pipeline.PlacementKey
		want      bool
	}{
		{"an override without placement.name applies to a ClusterResourcePlacement", Override{}, crp, true},
		{"an override without placement.name applies to a ResourcePlacement", Override{Namespace: "team-a"}, rpA, true},
		{"a ClusterResourceOverride names a ClusterResourcePlacement", Override{Placement: "web"}, crp, true},
		{"a ClusterResourceOverride never names a ResourcePlacement", Override{Placement: "web"}, rpA, false},
		{"a ResourceOverride names the ResourcePlacement of its namespace", Override{Namespace: "team-a", Placement: "web"}, rpA, true},
		{"a ResourceOverride does not name a ResourcePlacement of another namespace", Override{Namespace: "team-a", Placement: "web"}, rpB, false},
		{"a ResourceOverride may name a ClusterResourcePlacement", Override{Namespace: "team-a", Placement: "web"}, crp, true},
		{"another name does not match", Override{Namespace: "team-a", Placement: "api"}, rpA, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.override.ForPlacement(tc.placement); got != tc.want {
				t.Errorf("ForPlacement(%s) = %v, want %v", tc.placement, got, tc.want)
			}
		})
	}
}

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

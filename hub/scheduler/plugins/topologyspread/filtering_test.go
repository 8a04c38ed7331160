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
	"testing"

	"github.com/google/go-cmp/cmp"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name     string
		maxSkew  int32
		when     placementv1beta1.UnsatisfiableConstraintAction
		reserved []string
		want     map[string]string
	}{
		{
			name: "with nothing selected every domain is open, a cluster without the key is not",
			want: map[string]string{"a1": ok, "a2": ok, "a3": ok, "b1": ok, "b2": ok, "nozone": rejected},
		},
		{
			name:     "with one cluster in zone a, a second one there would exceed maxSkew 1",
			reserved: []string{"a1"},
			want:     map[string]string{"a1": rejected, "a2": rejected, "a3": rejected, "b1": ok, "b2": ok, "nozone": rejected},
		},
		{
			name:     "maxSkew 2 allows a second cluster in zone a",
			maxSkew:  2,
			reserved: []string{"a1"},
			want:     map[string]string{"a1": ok, "a2": ok, "a3": ok, "b1": ok, "b2": ok, "nozone": rejected},
		},
		{
			name:     "with one cluster in each zone, both are open again",
			reserved: []string{"a1", "b1"},
			want:     map[string]string{"a1": ok, "a2": ok, "a3": ok, "b1": ok, "b2": ok, "nozone": rejected},
		},
		{
			name:     "ScheduleAnyway never filters, not even a cluster without the key",
			when:     placementv1beta1.ScheduleAnyway,
			reserved: []string{"a1", "a2"},
			want:     map[string]string{"a1": ok, "a2": ok, "a3": ok, "b1": ok, "b2": ok, "nozone": ok},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.maxSkew == 0 {
				tt.maxSkew = 1
			}
			if tt.when == "" {
				tt.when = placementv1beta1.DoNotSchedule
			}
			got := newWorld(t, spreadOverZones(tt.maxSkew, tt.when), zones()...).reserve(tt.reserved...).filter()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Filter() codes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnreserveReopensTheDomain(t *testing.T) {
	w := newWorld(t, spreadOverZones(1, placementv1beta1.DoNotSchedule), zones()...).reserve("a1")
	if got := w.filter()["a2"]; got != rejected {
		t.Fatalf("after reserving a1, Filter(a2) = %s, want %s", got, rejected)
	}
	if got := w.unreserve("a1").filter()["a2"]; got != ok {
		t.Errorf("after unreserving a1, Filter(a2) = %s, want %s", got, ok)
	}
}

func TestPreFilterSkipsWithoutConstraintsOrForOtherPlacementTypes(t *testing.T) {
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
	}{
		{name: "no policy", policy: nil},
		{name: "PickN without constraints", policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ft.Ptr[int32](1)}},
		{name: "PickAll with constraints", policy: &placementv1beta1.PlacementPolicy{
			PlacementType:             placementv1beta1.PickAll,
			TopologySpreadConstraints: []placementv1beta1.TopologySpreadConstraint{{TopologyKey: "zone"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ft.Input(tt.policy, zones()...)
			state := framework.NewCycleState(&in)
			if _, st := New().PreFilter(t.Context(), state, tt.policy, state.Clusters()); !st.IsSkip() {
				t.Errorf("PreFilter() = %v, want Skip", st)
			}
		})
	}
}

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
)

func TestScore(t *testing.T) {
	tests := []struct {
		name     string
		when     placementv1beta1.UnsatisfiableConstraintAction
		reserved []string
		want     map[string]int32
	}{
		{
			name: "with nothing selected every cluster with the key scores 0",
			when: placementv1beta1.ScheduleAnyway,
			want: map[string]int32{"a1": 0, "a2": 0, "a3": 0, "b1": 0, "b2": 0, "nozone": -1},
		},
		{
			name:     "fewer selected clusters in the domain score higher; a cluster without the key scores lowest",
			when:     placementv1beta1.ScheduleAnyway,
			reserved: []string{"a1", "a2", "b1"},
			want:     map[string]int32{"a1": -2, "a2": -2, "a3": -2, "b1": -1, "b2": -1, "nozone": -3},
		},
		{
			name:     "DoNotSchedule constraints score the same way",
			when:     placementv1beta1.DoNotSchedule,
			reserved: []string{"a1"},
			want:     map[string]int32{"a1": -1, "a2": -1, "a3": -1, "b1": 0, "b2": 0, "nozone": -2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newWorld(t, spreadOverZones(1, tt.when), zones()...).reserve(tt.reserved...).scores()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

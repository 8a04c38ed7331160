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

import (
	"fmt"
	"testing"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func decisions(selected, unselected int) []placementv1beta1.ClusterDecision {
	var out []placementv1beta1.ClusterDecision
	for i := range selected {
		out = append(out, placementv1beta1.ClusterDecision{ClusterName: fmt.Sprintf("s-%05d", i), Selected: true})
	}
	for i := range unselected {
		out = append(out, placementv1beta1.ClusterDecision{ClusterName: fmt.Sprintf("u-%05d", i)})
	}
	return out
}

func TestRecordedDecisions(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		in                       []placementv1beta1.ClusterDecision
		wantSelected, wantOthers int
		wantLastOther            string
	}{
		{"no decisions record nothing", nil, 0, 0, ""},
		{"a small fleet is recorded whole", decisions(3, 5), 3, 5, "u-00004"},
		{"every selected cluster and the first others of a large fleet", decisions(3, 9997), 3, MaxUnselectedDecisions, fmt.Sprintf("u-%05d", MaxUnselectedDecisions-1)},
		{"a PickAll over 10 000 clusters is cut at the API's bound", decisions(10000, 0), maxDecisions, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := recordedDecisions(tc.in)
			sel, others, last := 0, 0, ""
			for _, d := range got {
				if d.Selected {
					sel++
				} else {
					others++
					last = d.ClusterName
				}
			}
			if sel != tc.wantSelected || others != tc.wantOthers || last != tc.wantLastOther {
				t.Errorf("recorded %d selected and %d others (last %q), want %d and %d (last %q)", sel, others, last, tc.wantSelected, tc.wantOthers, tc.wantLastOther)
			}
		})
	}
}

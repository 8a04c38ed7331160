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
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

const evictedBy = "evicted by ClusterResourcePlacementEviction e-1"

// An evicted (excluded) cluster loses its binding in every evictable placement
// type, and a PickN placement picks a replacement in the same cycle.
func TestExcludedClusters(t *testing.T) {
	tests := []struct {
		name      string
		policy    *placementv1beta1.PlacementPolicy
		bound     []string
		excluded  []string
		want      []string
		unsched   []string
		misplaced map[string]string
		reasons   map[string]string
		filtered  map[string]string // FilteredBy per cluster
		status    metav1.ConditionStatus
	}{
		{
			name:     "PickN moves off an evicted cluster to the best other one",
			policy:   pickN(1, preferring(10, "env", "prod")),
			bound:    []string{"prod-1"},
			excluded: []string{"prod-1"},
			want:     []string{"prod-2"},
			unsched:  []string{"prod-1"},
			reasons:  map[string]string{"prod-1": "removed: " + evictedBy},
			filtered: map[string]string{"prod-1": "Evicted"},
			status:   metav1.ConditionTrue,
		},
		{
			name:     "PickN keeps its other clusters and replaces only the evicted one",
			policy:   pickN(2, preferring(10, "env", "prod")),
			bound:    []string{"dev-1", "prod-1"},
			excluded: []string{"prod-1"},
			want:     []string{"dev-1", "prod-2"},
			unsched:  []string{"prod-1"},
			status:   metav1.ConditionTrue,
		},
		{
			name:     "PickN unschedules an evicted cluster that is also misplaced, instead of keeping it",
			policy:   pickN(1, requiring("env", "prod")),
			bound:    []string{"dev-1"},
			excluded: []string{"dev-1"},
			want:     []string{"prod-1"},
			unsched:  []string{"dev-1"},
			reasons:  map[string]string{"dev-1": "removed: " + evictedBy},
			status:   metav1.ConditionTrue,
		},
		{
			name:     "PickN never picks an evicted cluster anew",
			policy:   pickN(1, preferring(10, "env", "prod"), preferring(20, "zone", "best")),
			excluded: []string{"prod-1", "prod-2"},
			want:     []string{"dev-1"},
			reasons:  map[string]string{"prod-1": evictedBy},
			filtered: map[string]string{"prod-1": "Evicted", "prod-2": "Evicted"},
			status:   metav1.ConditionTrue,
		},
		{
			name:     "PickN with no cluster left after the eviction is unfulfilled and says why",
			policy:   pickN(1, requiring("env", "prod")),
			bound:    []string{"prod-1"},
			excluded: []string{"prod-1", "prod-2"},
			unsched:  []string{"prod-1"},
			status:   metav1.ConditionFalse,
		},
		{
			name:     "PickAll unschedules the evicted cluster and keeps the others",
			policy:   pickAll(),
			bound:    []string{"dev-1", "dev-2", "prod-1", "prod-2"},
			excluded: []string{"dev-2"},
			want:     []string{"dev-1", "prod-1", "prod-2"},
			unsched:  []string{"dev-2"},
			reasons:  map[string]string{"dev-2": "removed: " + evictedBy},
			status:   metav1.ConditionTrue,
		},
		{
			name:     "PickAll does not spread to an evicted cluster",
			policy:   pickAll(),
			excluded: []string{"dev-2"},
			want:     []string{"dev-1", "prod-1", "prod-2"},
			reasons:  map[string]string{"dev-2": evictedBy},
			status:   metav1.ConditionTrue,
		},
		{
			name:     "PickFixed is never moved by an exclusion",
			policy:   pickFixed("dev-1"),
			bound:    []string{"dev-1"},
			excluded: []string{"dev-1"},
			want:     []string{"dev-1"},
			status:   metav1.ConditionTrue,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ft.Input(tt.policy, fleet()...)
			in.Bindings = ft.Bindings("test", tt.bound...)
			in.ExcludedClusters = map[string]string{}
			for _, c := range tt.excluded {
				in.ExcludedClusters[c] = evictedBy
			}
			res := run(t, in)
			if diff := cmp.Diff(tt.want, res.Selected); diff != "" {
				t.Errorf("Selected (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.unsched, res.Unschedule); diff != "" {
				t.Errorf("Unschedule (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.misplaced, res.Misplaced); diff != "" {
				t.Errorf("Misplaced (-want +got):\n%s", diff)
			}
			for name, want := range tt.reasons {
				if diff := cmp.Diff(want, decisionOf(t, res, name).Reason); diff != "" {
					t.Errorf("reason of %s (-want +got):\n%s", name, diff)
				}
			}
			for name, want := range tt.filtered {
				if got := decisionOf(t, res, name).FilteredBy; got != want {
					t.Errorf("FilteredBy of %s = %q, want %q", name, got, want)
				}
			}
			if res.Status != tt.status {
				t.Errorf("condition = %s %s: %s, want %s", res.Status, res.Reason, res.Message, tt.status)
			}
			// The world the cycle leaves behind is stable: the next cycle changes nothing.
			again := rerun(t, in, res, 1)
			if diff := cmp.Diff(res.Selected, again.Selected); diff != "" || len(again.Unschedule) > 0 {
				t.Errorf("rerun: Selected (-first +again):\n%s; Unschedule %v", diff, again.Unschedule)
			}
		})
	}
}

// The condition's message names the eviction for a cluster it keeps the placement
// off.
func TestExcludedClusterIsExplainedInTheCondition(t *testing.T) {
	in := ft.Input(pickN(1, requiring("env", "prod")), fleet()...)
	in.ExcludedClusters = map[string]string{"prod-1": evictedBy, "prod-2": evictedBy}
	res := run(t, in)
	want := "0 of 1 cluster selected; dev-1: cluster labels do not match the required selector env=prod; " +
		"dev-2: cluster labels do not match the required selector env=prod; prod-1: " + evictedBy + "; prod-2: " + evictedBy
	if diff := cmp.Diff(want, res.Message); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}

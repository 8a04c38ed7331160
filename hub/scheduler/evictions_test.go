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
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func evictionOf(name, placement, cluster string, executed metav1.ConditionStatus) placementv1beta1.ClusterResourcePlacementEviction {
	ev := placementv1beta1.ClusterResourcePlacementEviction{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       placementv1beta1.PlacementEvictionSpec{PlacementName: placement, ClusterName: cluster},
	}
	if executed != "" {
		ev.Status.Conditions = []metav1.Condition{{Type: placementv1beta1.ConditionEvictionExecuted, Status: executed}}
	}
	return ev
}

func TestExcludedClusters(t *testing.T) {
	tests := []struct {
		name      string
		evictions []placementv1beta1.ClusterResourcePlacementEviction
		want      map[string]string
	}{
		{
			name: "no evictions exclude nothing",
		},
		{
			name:      "an executed eviction of the placement excludes its cluster",
			evictions: []placementv1beta1.ClusterResourcePlacementEviction{evictionOf("e-1", "app", "member-1", metav1.ConditionTrue)},
			want:      map[string]string{"member-1": "evicted by ClusterResourcePlacementEviction e-1"},
		},
		{
			name: "evictions not executed yet, or blocked, exclude nothing",
			evictions: []placementv1beta1.ClusterResourcePlacementEviction{
				evictionOf("e-1", "app", "member-1", ""),
				evictionOf("e-2", "app", "member-2", metav1.ConditionFalse),
			},
		},
		{
			name:      "another placement's eviction excludes nothing",
			evictions: []placementv1beta1.ClusterResourcePlacementEviction{evictionOf("e-1", "other", "member-1", metav1.ConditionTrue)},
		},
		{
			name: "of several evictions from one cluster, the first by name is given",
			evictions: []placementv1beta1.ClusterResourcePlacementEviction{
				evictionOf("e-2", "app", "member-1", metav1.ConditionTrue),
				evictionOf("e-1", "app", "member-1", metav1.ConditionTrue),
				evictionOf("e-3", "app", "member-2", metav1.ConditionTrue),
			},
			want: map[string]string{
				"member-1": "evicted by ClusterResourcePlacementEviction e-1",
				"member-2": "evicted by ClusterResourcePlacementEviction e-3",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ExcludedClusters("app", tt.evictions)); diff != "" {
				t.Errorf("ExcludedClusters() (-want +got):\n%s", diff)
			}
		})
	}
}

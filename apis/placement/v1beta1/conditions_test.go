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

package v1beta1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// The names below are part of the API contract (design/API.md); these tests pin
// them so that a change is deliberate.

func TestConditionTypes(t *testing.T) {
	wantPerCluster := []string{"Scheduled", "RolloutStarted", "Overridden", "WorkSynchronized", "Applied", "Available"}
	if diff := cmp.Diff(wantPerCluster, placementv1beta1.PerClusterConditionTypes()); diff != "" {
		t.Errorf("per-cluster condition types (-want +got):\n%s", diff)
	}
	tests := []struct {
		perCluster, wantCRP, wantRP string
	}{
		{placementv1beta1.ConditionScheduled, "ClusterResourcePlacementScheduled", "ResourcePlacementScheduled"},
		{placementv1beta1.ConditionRolloutStarted, "ClusterResourcePlacementRolloutStarted", "ResourcePlacementRolloutStarted"},
		{placementv1beta1.ConditionOverridden, "ClusterResourcePlacementOverridden", "ResourcePlacementOverridden"},
		{placementv1beta1.ConditionWorkSynchronized, "ClusterResourcePlacementWorkSynchronized", "ResourcePlacementWorkSynchronized"},
		{placementv1beta1.ConditionApplied, "ClusterResourcePlacementApplied", "ResourcePlacementApplied"},
		{placementv1beta1.ConditionAvailable, "ClusterResourcePlacementAvailable", "ResourcePlacementAvailable"},
	}
	for _, tc := range tests {
		t.Run(tc.perCluster, func(t *testing.T) {
			crp, rp := &placementv1beta1.ClusterResourcePlacement{}, &placementv1beta1.ResourcePlacement{}
			got := []string{
				placementv1beta1.ClusterResourcePlacementConditionType(tc.perCluster),
				crp.PlacementConditionType(tc.perCluster),
				placementv1beta1.ResourcePlacementConditionType(tc.perCluster),
				rp.PlacementConditionType(tc.perCluster),
			}
			want := []string{tc.wantCRP, tc.wantCRP, tc.wantRP, tc.wantRP}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("placement-level condition types (-want +got):\n%s", diff)
			}
		})
	}
	pinned := map[string]string{
		placementv1beta1.ConditionClusterResourcePlacementScheduled:        "ClusterResourcePlacementScheduled",
		placementv1beta1.ConditionClusterResourcePlacementRolloutStarted:   "ClusterResourcePlacementRolloutStarted",
		placementv1beta1.ConditionClusterResourcePlacementOverridden:       "ClusterResourcePlacementOverridden",
		placementv1beta1.ConditionClusterResourcePlacementWorkSynchronized: "ClusterResourcePlacementWorkSynchronized",
		placementv1beta1.ConditionClusterResourcePlacementApplied:          "ClusterResourcePlacementApplied",
		placementv1beta1.ConditionClusterResourcePlacementAvailable:        "ClusterResourcePlacementAvailable",
		placementv1beta1.ConditionResourcePlacementScheduled:               "ResourcePlacementScheduled",
		placementv1beta1.ConditionResourcePlacementRolloutStarted:          "ResourcePlacementRolloutStarted",
		placementv1beta1.ConditionResourcePlacementOverridden:              "ResourcePlacementOverridden",
		placementv1beta1.ConditionResourcePlacementWorkSynchronized:        "ResourcePlacementWorkSynchronized",
		placementv1beta1.ConditionResourcePlacementApplied:                 "ResourcePlacementApplied",
		placementv1beta1.ConditionResourcePlacementAvailable:               "ResourcePlacementAvailable",
		placementv1beta1.ConditionEvictionValid:                            "Valid",
		placementv1beta1.ConditionEvictionExecuted:                         "Executed",
		placementv1beta1.ReasonScheduleFailed:                              "ScheduleFailed",
		placementv1beta1.ReasonSchedulingPolicyUnfulfilled:                 "SchedulingPolicyUnfulfilled",
	}
	for got, want := range pinned {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestWellKnownNames(t *testing.T) {
	pinned := map[string]string{
		placementv1beta1.LabelPlacementName:                  "placement.flotilla.io/placement-name",
		placementv1beta1.LabelIsLatestSnapshot:               "placement.flotilla.io/is-latest-snapshot",
		placementv1beta1.LabelResourceIndex:                  "placement.flotilla.io/resource-index",
		placementv1beta1.LabelPolicyIndex:                    "placement.flotilla.io/policy-index",
		placementv1beta1.AnnotationResourceHash:              "placement.flotilla.io/resource-hash",
		placementv1beta1.AnnotationNumberOfResourceSnapshots: "placement.flotilla.io/number-of-resource-snapshots",
		placementv1beta1.AnnotationNumberOfClusters:          "placement.flotilla.io/number-of-clusters",
	}
	for got, want := range pinned {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

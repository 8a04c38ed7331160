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
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// A rolling update held by its maintenance windows: the placement's
// RolloutStarted says so with the rollout's reason, names the clusters and
// says when the next window opens, at the placement's generation.
func TestPlacementSaysWhenTheMaintenanceWindowOpens(t *testing.T) {
	const why = "resource snapshot p-1-snapshot (index 1) waits: every maintenance window is closed; the next opens at 2026-11-30T21:00:00Z"
	held := func(cluster string) placementv1beta1.ClusterResourceBinding {
		b := bindingWith(cluster, "p-0-snapshot", 5, "")
		conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionRolloutStarted, metav1.ConditionFalse, placementv1beta1.ReasonOutsideMaintenanceWindow, why, 2)
		return b
	}
	s := &scope{placement: placementAt(3, nil), policySnapshot: scheduledSnapshot(metav1.ConditionTrue, "Scheduled", "2 clusters"),
		resourceSnapshot: resourceSnapshot("p-1-snapshot", "1")}
	a, b := held("a"), held("b")
	computeStatus(s, []placementv1beta1.BindingObj{&a, &b}, map[string]string{"p-0-snapshot": "0", "p-1-snapshot": "1"})

	got := conditions.Get(s.placement.GetPlacementStatus().Conditions, placementv1beta1.ConditionClusterResourcePlacementRolloutStarted)
	if got == nil {
		t.Fatal("the placement has no RolloutStarted condition")
	}
	want := metav1.Condition{Type: placementv1beta1.ConditionClusterResourcePlacementRolloutStarted, Status: metav1.ConditionFalse,
		Reason: placementv1beta1.ReasonOutsideMaintenanceWindow, Message: "2 of 2 clusters: a, b; a: " + why, ObservedGeneration: 3}
	got.LastTransitionTime = metav1.Time{}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("placement RolloutStarted (-want +got):\n%s", diff)
	}
}

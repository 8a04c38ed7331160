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
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func bindingIn(state placementv1beta1.BindingState, deleting bool) placementv1beta1.ClusterResourceBinding {
	b := placementv1beta1.ClusterResourceBinding{Spec: placementv1beta1.ResourceBindingSpec{State: state, TargetCluster: string(state)}}
	if deleting {
		now := metav1.Now()
		b.DeletionTimestamp = &now
	}
	return b
}

func TestIsActive(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    placementv1beta1.ClusterResourceBinding
		want bool
	}{
		{"a scheduled binding is active", bindingIn(placementv1beta1.BindingStateScheduled, false), true},
		{"a bound binding is active", bindingIn(placementv1beta1.BindingStateBound, false), true},
		{"an unscheduled binding is not", bindingIn(placementv1beta1.BindingStateUnscheduled, false), false},
		{"a bound binding being deleted is not", bindingIn(placementv1beta1.BindingStateBound, true), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsActive(&tc.b); got != tc.want {
				t.Errorf("IsActive = %v, want %v", got, tc.want)
			}
		})
	}
}

func patchOps(t *testing.T, p client.Patch) []map[string]any {
	t.Helper()
	data, err := p.Data(nil)
	if err != nil {
		t.Fatal(err)
	}
	var ops []map[string]any
	if err := json.Unmarshal(data, &ops); err != nil {
		t.Fatal(err)
	}
	return ops
}

func TestSpecPatch(t *testing.T) {
	b := &placementv1beta1.ClusterResourceBinding{Spec: placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateScheduled, TargetCluster: "m",
		ApplyStrategy: &placementv1beta1.ApplyStrategy{}}}
	p, err := SpecPatch(b, placementv1beta1.BindingStateScheduled, map[string]any{"state": placementv1beta1.BindingStateBound, "resourceSnapshotName": "p-1-snapshot", "applyStrategy": nil})
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"op": "test", "path": "/spec/state", "value": "Scheduled"},
		{"op": "remove", "path": "/spec/applyStrategy"},
		{"op": "add", "path": "/spec/resourceSnapshotName", "value": "p-1-snapshot"},
		{"op": "add", "path": "/spec/state", "value": "Bound"},
	}
	if diff := cmp.Diff(want, patchOps(t, p)); diff != "" {
		t.Errorf("SpecPatch (-want +got):\n%s", diff)
	}
}

func TestBindingStatusDiffersOnlyInTheManagersPart(t *testing.T) {
	b := &placementv1beta1.ClusterResourceBinding{}
	b.Status.Conditions = []metav1.Condition{
		{Type: "RolloutStarted", Status: metav1.ConditionTrue, Reason: "RolloutStarted", Message: "m", ObservedGeneration: 2},
		{Type: "Applied", Status: metav1.ConditionFalse, Reason: "ApplyFailed", Message: "x", ObservedGeneration: 2},
	}
	b.Status.FailedPlacements = []placementv1beta1.FailedResourcePlacement{{}}
	same := BindingStatus{Conditions: OwnConditions(b.Status.Conditions, "RolloutStarted")}
	if bindingStatusDiffers(b, []string{"RolloutStarted"}, same) {
		t.Error("the rollout's unchanged condition counts as a change (another manager's lists must not)")
	}
	moved := BindingStatus{Conditions: []metav1.Condition{{Type: "RolloutStarted", Status: metav1.ConditionFalse, Reason: "RolloutNotStartedYet", ObservedGeneration: 2}}}
	if !bindingStatusDiffers(b, []string{"RolloutStarted"}, moved) {
		t.Error("a changed condition does not count as a change")
	}
	lists := BindingStatus{Conditions: OwnConditions(b.Status.Conditions, "Applied"), OwnsPlacementLists: true}
	if !bindingStatusDiffers(b, []string{"Applied"}, lists) {
		t.Error("the work generator dropping failedPlacements does not count as a change")
	}
}

func TestSooner(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b time.Duration
		want time.Duration
	}{
		{name: "no wait on either side is no wait", want: 0},
		{name: "a wait on one side only is that wait", a: 0, b: 3 * time.Second, want: 3 * time.Second},
		{name: "a negative wait counts as none", a: -time.Second, b: 2 * time.Second, want: 2 * time.Second},
		{name: "two waits give the shorter", a: 5 * time.Second, b: 2 * time.Second, want: 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sooner(tc.a, tc.b); got != tc.want {
				t.Errorf("Sooner(%s, %s) = %s, want %s", tc.a, tc.b, got, tc.want)
			}
			if got := Sooner(tc.b, tc.a); got != tc.want {
				t.Errorf("Sooner(%s, %s) = %s, want %s", tc.b, tc.a, got, tc.want)
			}
		})
	}
}

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

package conditions

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSetKeepsTheTransitionTimeWhileTheStatusHolds(t *testing.T) {
	var conds []metav1.Condition
	if !Set(&conds, "Ready", metav1.ConditionFalse, "Waiting", "not yet", 1) {
		t.Fatal("adding a condition reported no change")
	}
	first := conds[0].LastTransitionTime
	Set(&conds, "Ready", metav1.ConditionFalse, "StillWaiting", "still not", 2)
	if got := conds[0]; got.LastTransitionTime != first || got.ObservedGeneration != 2 || got.Reason != "StillWaiting" {
		t.Errorf("same status: %+v, want the first transition time kept and the rest updated", got)
	}
	if !IsCurrentTrue([]metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, ObservedGeneration: 3}}, "Ready", 3) {
		t.Error("a True condition of the current generation is not current")
	}
	if IsCurrentTrue([]metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, ObservedGeneration: 2}}, "Ready", 3) {
		t.Error("a True condition of an older generation counts as current")
	}
}

func TestChangedListsStatusChangesOnly(t *testing.T) {
	before := []metav1.Condition{
		{Type: "A", Status: metav1.ConditionTrue, Reason: "x"},
		{Type: "B", Status: metav1.ConditionUnknown, Reason: "x"},
	}
	after := []metav1.Condition{
		{Type: "A", Status: metav1.ConditionTrue, Reason: "y"}, // reason only
		{Type: "B", Status: metav1.ConditionFalse, Reason: "x"},
		{Type: "C", Status: metav1.ConditionTrue, Reason: "x"}, // new
	}
	if diff := cmp.Diff([]string{"B", "C"}, Changed(before, after)); diff != "" {
		t.Errorf("Changed (-want +got):\n%s", diff)
	}
}

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

package session

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestSettledLeavesNothingToRetryOnlyWhenTheStatusSaysSo(t *testing.T) {
	cond := func(typ string, s metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason}
	}
	tests := []struct {
		name string
		cond []metav1.Condition
		want bool
	}{
		{"every manifest applied", []metav1.Condition{cond(placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied)}, true},
		{"drifts left on purpose (IfNotDrifted)", []metav1.Condition{cond(placementv1beta1.ConditionApplied, metav1.ConditionFalse, placementv1beta1.ReasonFoundDrifts)}, true},
		{"a manifest failed", []metav1.Condition{cond(placementv1beta1.ConditionApplied, metav1.ConditionFalse, placementv1beta1.ReasonApplyFailed)}, false},
		{"ReportDiff compared everything", []metav1.Condition{cond(placementv1beta1.ConditionDiffReported, metav1.ConditionTrue, placementv1beta1.ReasonDiffReported)}, true},
		{"ReportDiff could not compare", []metav1.Condition{cond(placementv1beta1.ConditionDiffReported, metav1.ConditionFalse, placementv1beta1.ReasonDiffReportFailed)}, false},
		{"nothing reported", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := settled(placementv1beta1.WorkStatus{Conditions: tt.cond}); got != tt.want {
				t.Errorf("settled() = %v, want %v", got, tt.want)
			}
		})
	}
}

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

package availability

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestRulesJudgeTheirKindsByCEL(t *testing.T) {
	database := func(phase any) map[string]any {
		if phase == nil {
			return map[string]any{}
		}
		return map[string]any{"status": map[string]any{"phase": phase}}
	}
	tests := []struct {
		name        string
		rule        string
		fields      map[string]any
		kind        string
		want        metav1.ConditionStatus
		wantReason  string
		wantMessage string
	}{
		{name: "a rule that holds makes the object available", rule: `self.status.phase == "Ready"`, fields: database("Ready"), kind: "Database",
			want: metav1.ConditionTrue, wantReason: placementv1beta1.ReasonAvailable, wantMessage: `the availability rule "self.status.phase == \"Ready\"" holds`},
		{name: "a rule that does not hold makes it not available yet", rule: `self.status.phase == "Ready"`, fields: database("Creating"), kind: "Database",
			want: metav1.ConditionFalse, wantReason: placementv1beta1.ReasonNotAvailableYet, wantMessage: "does not hold yet"},
		{name: "a field the object lacks yet is not available yet, with the error", rule: `self.status.phase == "Ready"`, fields: database(nil), kind: "Database",
			want: metav1.ConditionFalse, wantReason: placementv1beta1.ReasonNotAvailableYet, wantMessage: "no such key: status"},
		{name: "has() guards a missing field", rule: `has(self.status) && self.status.phase == "Ready"`, fields: database(nil), kind: "Database",
			want: metav1.ConditionFalse, wantReason: placementv1beta1.ReasonNotAvailableYet, wantMessage: "does not hold yet"},
		{name: "a rule that does not compile is reported with the compiler's message", rule: `self.status.phase ==`, fields: database("Ready"), kind: "Database",
			want: metav1.ConditionFalse, wantReason: placementv1beta1.ReasonAvailabilityRuleInvalid, wantMessage: "the availability rule for Database.example.com does not compile: ERROR: <input>:1:"},
		{name: "a rule that returns no bool is refused", rule: `self.status.phase`, fields: database("Ready"), kind: "Database",
			want: metav1.ConditionFalse, wantReason: placementv1beta1.ReasonAvailabilityRuleInvalid, wantMessage: "not a bool"},
		{name: "a rule whose type is known not to be bool does not compile", rule: `1 + 1`, fields: database("Ready"), kind: "Database",
			want: metav1.ConditionFalse, wantReason: placementv1beta1.ReasonAvailabilityRuleInvalid, wantMessage: "returns int, not bool"},
		{name: "kinds without a rule keep the built-in judgement", rule: `false`, fields: database("Ready"), kind: "Other",
			want: metav1.ConditionTrue, wantReason: placementv1beta1.ReasonNotTrackable, wantMessage: "cannot be tracked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules := CompileRules([]placementv1beta1.AvailabilityRule{{Group: "example.com", Kind: "Database", Expression: tt.rule}})
			got := rules.Check(object("example.com/v1", tt.kind, 1, tt.fields))
			if got.Available != tt.want || got.Reason != tt.wantReason || !strings.Contains(got.Message, tt.wantMessage) {
				t.Errorf("Check() = %+v, want %s/%s with %q", got, tt.want, tt.wantReason, tt.wantMessage)
			}
		})
	}
}

func TestCompileRuleStatesTheProblem(t *testing.T) {
	if err := CompileRule(`self.status.phase == "Ready"`); err != nil {
		t.Errorf("CompileRule(valid) = %v, want nil", err)
	}
	err := CompileRule(`self.status.phase = "Ready"`)
	if err == nil || !strings.Contains(err.Error(), "ERROR: <input>:1:") || strings.Contains(err.Error(), "\n") {
		t.Errorf("CompileRule(invalid) = %v, want the compiler's message on one line", err)
	}
}

func TestAnEmptyRuleSetChecksAsBefore(t *testing.T) {
	obj := object("example.com/v1", "Database", 1, nil)
	if got, want := (Rules{}).Check(obj), Check(obj); got != want {
		t.Errorf("Rules{}.Check() = %+v, want %+v", got, want)
	}
}

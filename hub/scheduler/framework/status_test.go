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

package framework

import (
	"errors"
	"testing"
)

func TestNilStatusIsSuccess(t *testing.T) {
	var s *Status
	if !s.IsSuccess() || s.Code() != Success || s.IsRejection() || s.IsSkip() || s.IsError() || s.AsError() != nil || s.Message() != "" {
		t.Errorf("nil status = %v, want a plain success", s)
	}
}

func TestErrorStatusesComeOnlyFromErrors(t *testing.T) {
	err := errors.New("boom")
	s := FromError(err)
	if !s.IsError() || !errors.Is(s.AsError(), err) || s.Message() != "boom" || s.String() != "Error: boom" {
		t.Errorf("FromError(boom) = %v", s)
	}
	if FromError(nil) != nil {
		t.Errorf("FromError(nil) is not nil")
	}
	if s := NewStatus(codeError, "made by hand"); s.AsError() == nil || s.AsError().Error() != "made by hand" {
		t.Errorf("NewStatus(error code) = %v, want an error status carrying an error", s)
	}
}

func TestStatusCodes(t *testing.T) {
	tests := []struct {
		code      Code
		rejection bool
		name      string
	}{
		{Success, false, "Success"},
		{ClusterUnschedulable, true, "ClusterUnschedulable"},
		{ClusterMismatch, true, "ClusterMismatch"},
		{ClusterAlreadySelected, true, "ClusterAlreadySelected"},
		{Skip, false, "Skip"},
		{ClusterEvicted, true, "ClusterEvicted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStatus(tt.code, "a", "b")
			if s.IsRejection() != tt.rejection || s.Code().String() != tt.name || s.Message() != "a; b" || s.AsError() != nil {
				t.Errorf("NewStatus(%s) = %v", tt.name, s)
			}
		})
	}
}

func TestClusterScoreRanksPreferenceThenTopologySpreadThenAffinity(t *testing.T) {
	score := func(preference, spread, affinity int32) ClusterScore {
		return ClusterScore{PreferenceScore: preference, TopologySpreadScore: spread, AffinityScore: affinity}
	}
	tests := []struct {
		name string
		a, b ClusterScore
		want int
	}{
		{"equal scores", score(0, 1, 2), score(0, 1, 2), 0},
		{"a more preferred group wins over any topology spread and affinity score", score(2, -100, -100), score(1, 0, 100), 1},
		{"a better topology spread score wins over any affinity score", score(0, 0, -100), score(0, -1, 100), 1},
		{"with equal topology spread scores the affinity score decides", score(0, -1, 5), score(0, -1, 6), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Compare(tt.b); got != tt.want {
				t.Errorf("Compare() = %d, want %d", got, tt.want)
			}
			if got := tt.b.Compare(tt.a); got != -tt.want {
				t.Errorf("reverse Compare() = %d, want %d", got, -tt.want)
			}
		})
	}
}

// countingExplainer explains a rejection by the cluster's name and counts how
// often it was asked.
type countingExplainer struct{ calls int }

func (e *countingExplainer) Explain(c *ClusterInfo) string {
	e.calls++
	return "cluster " + c.Name + " is not wanted"
}

func TestAStatusForAClusterFormatsItsReasonOnlyWhenRead(t *testing.T) {
	e := &countingExplainer{}
	s := NewStatusFor(ClusterMismatch, e, &ClusterInfo{Name: "a"})
	if e.calls != 0 {
		t.Fatalf("NewStatusFor formatted the reason %d times before it was read", e.calls)
	}
	if !s.IsRejection() || s.Code() != ClusterMismatch || s.AsError() != nil {
		t.Errorf("NewStatusFor(ClusterMismatch) = %v, want a mismatch", s)
	}
	eager := NewStatus(ClusterMismatch, "cluster a is not wanted")
	if s.Message() != eager.Message() || s.String() != eager.String() || len(s.Reasons()) != 1 || s.Reasons()[0] != eager.Reasons()[0] {
		t.Errorf("NewStatusFor = %q, %q, %q; want the eager %q, %q, %q",
			s.Message(), s.String(), s.Reasons(), eager.Message(), eager.String(), eager.Reasons())
	}
	if s := NewStatusFor(Skip, e, &ClusterInfo{Name: "b"}); !s.IsSkip() || s.Message() != "cluster b is not wanted" {
		t.Errorf("NewStatusFor(Skip) = %v", s)
	}
}

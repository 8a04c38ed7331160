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

package updaterun

import (
	"strings"
	"testing"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestRetryRequested(t *testing.T) {
	token, _ := retryRequested("1", nil, false)
	tests := []struct {
		name       string
		annotation string
		status     *placementv1beta1.AnalysisStatus
		rollback   bool
		want       bool
	}{
		{"no annotation, no retry", "", &placementv1beta1.AnalysisStatus{}, false, false},
		{"a new value retries a paused analysis", "1", &placementv1beta1.AnalysisStatus{Failures: 1}, false, true},
		{"the value that last restarted it does not retry again", "1", &placementv1beta1.AnalysisStatus{Retried: token}, false, false},
		{"another value retries again", "2", &placementv1beta1.AnalysisStatus{Retried: token}, false, true},
		{"a rolled-back run is never retried", "1", &placementv1beta1.AnalysisStatus{}, true, false},
		{"an analysis without status retries", "1", nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := retryRequested(tt.annotation, tt.status, tt.rollback); got != tt.want {
				t.Errorf("retryRequested = %v, want %v", got, tt.want)
			}
		})
	}
	if long, _ := retryRequested(strings.Repeat("x", 100000), nil, false); len(long) != 16 {
		t.Errorf("the token of a long value is %d characters, want 16", len(long))
	}
}

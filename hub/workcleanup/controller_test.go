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

package workcleanup

import (
	"testing"
	"time"
)

func TestRemaining(t *testing.T) {
	deleted := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		now  time.Time
		want time.Duration
	}{
		{"a fresh deletion waits the whole timeout", deleted, 5 * time.Minute},
		{"the wait shrinks as time passes", deleted.Add(4 * time.Minute), time.Minute},
		{"past the timeout the Work is let go", deleted.Add(6 * time.Minute), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Remaining(deleted, tc.now, 5*time.Minute); got != tc.want {
				t.Errorf("Remaining = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestATimeoutOfZeroWaitsNotAtAll(t *testing.T) {
	if got := (&Reconciler{}).timeout(); got != 0 {
		t.Errorf("timeout of a Reconciler with Timeout 0 = %s, want 0 (--work-cleanup-timeout 0 waits for no member)", got)
	}
	if got := (&Reconciler{Timeout: time.Minute}).timeout(); got != time.Minute {
		t.Errorf("timeout = %s, want 1m", got)
	}
}

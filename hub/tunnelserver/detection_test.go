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

package tunnelserver

import (
	"strings"
	"testing"
	"time"
)

func TestHeartbeatOverdue(t *testing.T) {
	last := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		now     time.Time
		overdue bool
	}{
		{"one missed period is tolerated", last.Add(6 * time.Second), false},
		{"exactly three periods is still tolerated", last.Add(15 * time.Second), false},
		{"more than three periods is a disconnection", last.Add(16 * time.Second), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := heartbeatOverdue(last, tc.now, 5*time.Second, 3)
			if got != tc.overdue {
				t.Fatalf("overdue = %v, want %v", got, tc.overdue)
			}
			if got && !strings.HasPrefix(why, "no heartbeat for 16s") {
				t.Errorf("reason %q", why)
			}
		})
	}
}

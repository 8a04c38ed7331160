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
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestDueForFencing(t *testing.T) {
	last := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	lease := func(s int32) *placementv1beta1.FencingPolicy {
		return &placementv1beta1.FencingPolicy{LeaseSeconds: ptr.To(s)}
	}
	tests := []struct {
		name  string
		works []fenceCandidate
		now   time.Time
		want  []string
	}{
		{
			name:  "a fenced Work is not due while the lease runs",
			works: []fenceCandidate{{name: "web", fencing: lease(60)}},
			now:   last.Add(59 * time.Second),
		},
		{
			name:  "a fenced Work is not due at exactly the lease",
			works: []fenceCandidate{{name: "web", fencing: lease(60)}},
			now:   last.Add(60 * time.Second),
		},
		{
			name:  "a fenced Work is due once the lease has run out",
			works: []fenceCandidate{{name: "web", fencing: lease(60)}},
			now:   last.Add(61 * time.Second),
			want:  []string{"web"},
		},
		{
			name:  "a fenced Work without a lease uses the default of 60s",
			works: []fenceCandidate{{name: "web", fencing: &placementv1beta1.FencingPolicy{}}},
			now:   last.Add(61 * time.Second),
			want:  []string{"web"},
		},
		{
			name:  "a Work without fencing is never due",
			works: []fenceCandidate{{name: "web"}},
			now:   last.Add(time.Hour),
		},
		{
			name:  "a Work fenced already is not fenced again",
			works: []fenceCandidate{{name: "web", fencing: lease(10), fenced: true}},
			now:   last.Add(time.Hour),
		},
		{
			name:  "each Work counts its own lease",
			works: []fenceCandidate{{name: "short", fencing: lease(10)}, {name: "long", fencing: lease(600)}, {name: "alsoshort", fencing: lease(20)}},
			now:   last.Add(30 * time.Second),
			want:  []string{"alsoshort", "short"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, w := range dueForFencing(tt.works, last, tt.now) {
				got = append(got, w.name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("dueForFencing() (-want +got):\n%s", diff)
			}
		})
	}
}

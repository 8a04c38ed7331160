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

func TestRestoredExchange(t *testing.T) {
	start := time.Now() // carries a monotonic reading, as Run's start does
	tests := []struct {
		name    string
		saved   time.Duration // before start; 0: none saved
		noSaved bool
		want    time.Duration // before start
	}{
		{name: "nothing saved counts from the start", noSaved: true, want: 0},
		{name: "an exchange saved before the start counts from it", saved: 40 * time.Second, want: 40 * time.Second},
		{name: "an exchange saved an hour before counts from it", saved: time.Hour, want: time.Hour},
		{name: "a saved time after now (a clock stepped back) counts from the start", saved: -time.Minute, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var saved time.Time
			if !tt.noSaved {
				saved = start.Round(0).Add(-tt.saved)
			}
			got := restoredExchange(start, saved, start)
			if diff := cmp.Diff(tt.want, start.Sub(got)); diff != "" {
				t.Errorf("restoredExchange counts from this long before the start (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExchangeDue(t *testing.T) {
	saved := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		last     time.Time
		saved    time.Time
		minLease time.Duration
		want     bool
	}{
		{"without fenced Works nothing is saved", saved.Add(time.Hour), saved, 0, false},
		{"an exchange less than a quarter lease newer is not saved", saved.Add(14 * time.Second), saved, time.Minute, false},
		{"an exchange a quarter lease newer is saved", saved.Add(15 * time.Second), saved, time.Minute, true},
		{"the shortest lease sets the pace", saved.Add(3 * time.Second), saved, 10 * time.Second, true},
		{"nothing saved yet saves at once", saved, time.Time{}, time.Minute, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exchangeDue(tt.last, tt.saved, tt.minLease); got != tt.want {
				t.Errorf("exchangeDue = %v, want %v", got, tt.want)
			}
		})
	}
}

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

package window

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func win(schedule, tz string, d time.Duration) placementv1beta1.MaintenanceWindow {
	return placementv1beta1.MaintenanceWindow{Schedule: schedule, TimeZone: tz, Duration: metav1.Duration{Duration: d}}
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestAt(t *testing.T) {
	const berlin = "Europe/Berlin"
	for _, tc := range []struct {
		name    string
		windows []placementv1beta1.MaintenanceWindow
		now     string
		want    State
	}{{
		name: "no windows are always open",
		now:  "2026-11-27T12:00:00Z",
		want: State{Open: true},
	}, {
		name:    "before a window in Berlin winter time it is closed and says when it opens",
		windows: []placementv1beta1.MaintenanceWindow{win("0 22 * * *", berlin, 2*time.Hour)},
		now:     "2026-11-27T20:30:00Z", // 21:30 CET
		want:    State{Opens: utc("2026-11-27T21:00:00Z")},
	}, {
		name:    "inside a window it is open until its duration has passed, and the next opens a day later",
		windows: []placementv1beta1.MaintenanceWindow{win("0 22 * * *", berlin, 2*time.Hour)},
		now:     "2026-11-27T21:30:00Z",
		want:    State{Open: true, Closes: utc("2026-11-27T23:00:00Z"), Opens: utc("2026-11-28T21:00:00Z")},
	}, {
		name:    "a window is open from the moment it opens",
		windows: []placementv1beta1.MaintenanceWindow{win("0 22 * * *", "", 2*time.Hour)},
		now:     "2026-11-27T22:00:00Z",
		want:    State{Open: true, Closes: utc("2026-11-28T00:00:00Z"), Opens: utc("2026-11-28T22:00:00Z")},
	}, {
		name:    "a window that spans midnight is open after midnight",
		windows: []placementv1beta1.MaintenanceWindow{win("0 23 * * *", "UTC", 3*time.Hour)},
		now:     "2026-11-28T01:00:00Z",
		want:    State{Open: true, Closes: utc("2026-11-28T02:00:00Z"), Opens: utc("2026-11-28T23:00:00Z")},
	}, {
		name:    "a window is closed at the moment its duration ends",
		windows: []placementv1beta1.MaintenanceWindow{win("0 23 * * *", "UTC", 3*time.Hour)},
		now:     "2026-11-28T02:00:00Z",
		want:    State{Opens: utc("2026-11-28T23:00:00Z")},
	}, {
		name:    "a wall-clock time skipped when clocks go forward does not open that day",
		windows: []placementv1beta1.MaintenanceWindow{win("30 2 * * *", berlin, time.Hour)},
		now:     "2026-03-29T00:00:00Z", // 01:00 CET; 02:00 CET becomes 03:00 CEST
		want:    State{Opens: utc("2026-03-30T00:30:00Z")},
	}, {
		name:    "the duration is elapsed time across the change to summer time",
		windows: []placementv1beta1.MaintenanceWindow{win("0 1 * * *", berlin, 2*time.Hour)},
		now:     "2026-03-29T01:30:00Z", // 03:30 CEST
		want:    State{Open: true, Closes: utc("2026-03-29T02:00:00Z"), Opens: utc("2026-03-29T23:00:00Z")},
	}, {
		name:    "a wall-clock time that repeats when clocks go back opens twice",
		windows: []placementv1beta1.MaintenanceWindow{win("30 2 * * *", berlin, 30*time.Minute)},
		now:     "2026-10-25T00:45:00Z", // 02:45 CEST
		want:    State{Open: true, Closes: utc("2026-10-25T01:00:00Z"), Opens: utc("2026-10-25T01:30:00Z")},
	}, {
		name:    "after the change to winter time the window opens at the same wall-clock time, an hour later in UTC",
		windows: []placementv1beta1.MaintenanceWindow{win("0 22 * * *", berlin, time.Hour)},
		now:     "2026-10-25T12:00:00Z",
		want:    State{Opens: utc("2026-10-25T21:00:00Z")},
	}, {
		name:    "a window that opens when another closes continues the open period",
		windows: []placementv1beta1.MaintenanceWindow{win("0 8 * * *", "UTC", time.Hour), win("0 9 * * *", "UTC", time.Hour)},
		now:     "2026-11-27T08:30:00Z",
		want:    State{Open: true, Closes: utc("2026-11-27T10:00:00Z"), Opens: utc("2026-11-28T08:00:00Z")},
	}, {
		name:    "of several closed windows the earliest opening counts",
		windows: []placementv1beta1.MaintenanceWindow{win("0 22 * * *", "UTC", time.Hour), win("0 6 * * *", "America/New_York", time.Hour)},
		now:     "2026-11-27T02:00:00Z",
		want:    State{Opens: utc("2026-11-27T11:00:00Z")},
	}, {
		name:    "a weekday window closed on Saturday opens on Monday",
		windows: []placementv1beta1.MaintenanceWindow{win("0 22 * * 1-5", "UTC", 2*time.Hour)},
		now:     "2026-11-28T12:00:00Z", // a Saturday
		want:    State{Opens: utc("2026-11-30T22:00:00Z")},
	}, {
		name:    "a window that opens again before it closes is open beyond what At looks ahead",
		windows: []placementv1beta1.MaintenanceWindow{win("0 * * * *", "UTC", 2*time.Hour)},
		now:     "2026-11-27T12:00:00Z",
		want:    State{Open: true},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := Parse(tc.windows, "spec.maintenanceWindows")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, At(ws, utc(tc.now))); diff != "" {
				t.Errorf("At(%s) (-want +got):\n%s", tc.now, diff)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window placementv1beta1.MaintenanceWindow
		want   string
	}{{
		name:   "a time zone the hub does not know",
		window: win("0 22 * * *", "Europe/Berln", time.Hour),
		want:   `spec.w[0].timeZone "Europe/Berln" is not a time zone the hub knows`,
	}, {
		name:   "a misspelt month name",
		window: win("0 22 * JNA *", "", time.Hour),
		want:   `spec.w[0].schedule "0 22 * JNA *": `,
	}, {
		name:   "six fields",
		window: win("0 0 22 * * *", "", time.Hour),
		want:   `spec.w[0].schedule "0 0 22 * * *": expected exactly 5 fields`,
	}, {
		name:   "a descriptor",
		window: win("@daily", "", time.Hour),
		want:   `spec.w[0].schedule "@daily": give five cron fields`,
	}, {
		name:   "a time zone prefix",
		window: win("CRON_TZ=UTC 0 22 * * *", "", time.Hour),
		want:   `spec.w[0].schedule "CRON_TZ=UTC 0 22 * * *": give five cron fields`,
	}, {
		name:   "a day that never comes",
		window: win("0 0 30 2 *", "", time.Hour),
		want:   `spec.w[0].schedule "0 0 30 2 *" never fires`,
	}, {
		name:   "a duration beyond a week",
		window: win("0 0 * * *", "", 8*24*time.Hour),
		want:   `spec.w[0].duration 192h0m0s must be from 1m to 168h`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]placementv1beta1.MaintenanceWindow{tc.window}, "spec.w")
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse() = %v, want an ErrInvalid containing %q", err, tc.want)
			}
		})
	}
}

func TestParseKeepsEveryWindowInOrder(t *testing.T) {
	in := []placementv1beta1.MaintenanceWindow{win("0 22 * * 1-5", "Europe/Berlin", 2*time.Hour), win("*/15 3 1 JAN,jul SUN", "", time.Minute)}
	ws, err := Parse(in, "w")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range ws {
		got = append(got, w.String())
	}
	want := []string{`"0 22 * * 1-5" Europe/Berlin for 2h0m0s`, `"*/15 3 1 JAN,jul SUN" UTC for 1m0s`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

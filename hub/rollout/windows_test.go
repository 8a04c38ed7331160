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

package rollout

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestSelectWaveOutsideMaintenanceWindows(t *testing.T) {
	closed := &Step{Action: ActionHold, Reason: placementv1beta1.ReasonOutsideMaintenanceWindow, Why: "every maintenance window is closed; the next opens at 2026-11-27T21:00:00Z"}
	windowHold := func(Binding) Step { return *closed }
	is := func(a Action) func(Binding) Step { return func(Binding) Step { return Step{Action: a} } }
	budgetHold := func(Binding) Step { return Step{Action: ActionHold, Reason: ""} }
	for _, tc := range []struct {
		name string
		in   Input
		want map[string]func(Binding) Step
	}{
		{
			name: "a new placement binds no cluster while every window is closed",
			in:   Input{Target: 2, MaxUnavailable: 1, Bindings: []Binding{scheduled("a"), scheduled("b")}},
			want: map[string]func(Binding) Step{"a": windowHold, "b": windowHold},
		},
		{
			name: "no ready cluster is updated, nor one held for the budget, and both say when the window opens",
			in:   Input{Target: 3, MaxUnavailable: 1, Bindings: []Binding{oldReady("a"), oldReady("b"), currentReady("c")}},
			want: map[string]func(Binding) Step{"a": windowHold, "b": windowHold, "c": is(ActionNone)},
		},
		{
			name: "a cluster that is not ready is not updated either",
			in:   Input{Target: 2, MaxUnavailable: 1, Bindings: []Binding{oldNotReady("a"), currentReady("b")}},
			want: map[string]func(Binding) Step{"a": windowHold, "b": is(ActionNone)},
		},
		{
			name: "a cluster already moved keeps becoming available: nothing is done to it",
			in:   Input{Target: 2, MaxUnavailable: 1, Bindings: []Binding{currentUpdating("a"), oldReady("b")}},
			want: map[string]func(Binding) Step{"a": is(ActionNone), "b": windowHold},
		},
		{
			name: "an evicted or unscheduled cluster is emptied at once: removals never wait for a window",
			in:   Input{Target: 2, MaxUnavailable: 1, Bindings: []Binding{unscheduledReady("a"), unscheduledEmpty("b"), currentReady("c"), scheduled("d")}},
			want: map[string]func(Binding) Step{"a": is(ActionRemove), "b": is(ActionRemove), "c": is(ActionNone), "d": windowHold},
		},
		{
			name: "a removal held by maxUnavailable stays held by the budget, not by the window",
			in:   Input{Target: 3, MaxUnavailable: 1, Bindings: []Binding{unscheduledReady("a"), unscheduledReady("b"), currentReady("c"), currentUpdating("d")}},
			want: map[string]func(Binding) Step{"a": is(ActionRemove), "b": budgetHold, "c": is(ActionNone), "d": is(ActionNone)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Window = closed
			got := SelectWave(in)
			gotSteps, wantSteps := map[string]Step{}, map[string]Step{}
			byName := map[string]Binding{}
			for _, b := range in.Bindings {
				byName[b.Name] = b
			}
			for n, s := range got.Steps {
				if s.Reason == "" {
					s.Why = "" // the budget's message is TestSelectWave's
				}
				gotSteps[n] = s
			}
			for n, f := range tc.want {
				wantSteps[n] = f(byName[n])
			}
			if diff := cmp.Diff(wantSteps, gotSteps); diff != "" {
				t.Errorf("SelectWave (-want +got):\n%s", diff)
			}
			// The same input with the windows open moves clusters: the window
			// is what held them.
			in.Window = nil
			open := SelectWave(in)
			for n, s := range got.Steps {
				if s.Reason != "" && open.Steps[n].Action == ActionHold && open.Steps[n].Reason != "" {
					t.Errorf("%s is held by a window with the windows open", n)
				}
			}
		})
	}
}

func TestWindowHold(t *testing.T) {
	now := time.Date(2026, time.November, 27, 20, 30, 0, 0, time.UTC) // 21:30 in Berlin
	ru := func(ws ...placementv1beta1.MaintenanceWindow) *placementv1beta1.RollingUpdateConfig {
		return &placementv1beta1.RollingUpdateConfig{MaintenanceWindows: ws}
	}
	w := func(schedule, tz string, d time.Duration) placementv1beta1.MaintenanceWindow {
		return placementv1beta1.MaintenanceWindow{Schedule: schedule, TimeZone: tz, Duration: metav1.Duration{Duration: d}}
	}
	for _, tc := range []struct {
		name     string
		cfg      *placementv1beta1.RollingUpdateConfig
		want     *Step
		wantWait time.Duration
	}{
		{name: "no rolling update config holds nothing"},
		{name: "no windows hold nothing", cfg: ru()},
		{name: "an open window holds nothing", cfg: ru(w("0 21 * * *", "Europe/Berlin", time.Hour))},
		{
			name:     "closed windows hold, say when the next opens in UTC and wait until then",
			cfg:      ru(w("0 22 * * *", "Europe/Berlin", 2*time.Hour), w("0 6 * * *", "UTC", time.Hour)),
			want:     &Step{Action: ActionHold, Reason: placementv1beta1.ReasonOutsideMaintenanceWindow, Why: "every maintenance window is closed; the next opens at 2026-11-27T21:00:00Z"},
			wantWait: 30 * time.Minute,
		},
		{
			name: "a time zone the hub does not know holds, naming the field, and waits for a change",
			cfg:  ru(w("0 22 * * *", "Europe/Berlin", time.Hour), w("0 22 * * *", "Mars/Olympus_Mons", time.Hour)),
			want: &Step{Action: ActionHold, Reason: placementv1beta1.ReasonInvalidMaintenanceWindow,
				Why: `invalid maintenance window: spec.strategy.rollingUpdate.maintenanceWindows[1].timeZone "Mars/Olympus_Mons" is not a time zone the hub knows: give an IANA name such as Europe/Berlin or UTC; the rolling update binds and updates no cluster until it is fixed`},
		},
		{
			name: "a schedule the cron parser refuses holds, naming the field",
			cfg:  ru(w("0 22 * FOO *", "", time.Hour)),
			want: &Step{Action: ActionHold, Reason: placementv1beta1.ReasonInvalidMaintenanceWindow,
				Why: `invalid maintenance window: spec.strategy.rollingUpdate.maintenanceWindows[0].schedule "0 22 * FOO *": failed to parse int from FOO: strconv.Atoi: parsing "FOO": invalid syntax; the rolling update binds and updates no cluster until it is fixed`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, wait := WindowHold(tc.cfg, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("WindowHold step (-want +got):\n%s", diff)
			}
			if wait != tc.wantWait {
				t.Errorf("WindowHold wait = %s, want %s", wait, tc.wantWait)
			}
		})
	}
}

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

package rollout_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/rollout"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// testClock runs at real speed from a time the test sets.
type testClock struct {
	mu    sync.Mutex
	base  time.Time
	start time.Time
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base, c.start = t, time.Now()
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base.Add(time.Since(c.start))
}

func startRolloutWithClock(t *testing.T, clock *testClock) {
	env.StartManager(t, func(mgr ctrl.Manager) error {
		return (&rollout.Reconciler{Client: mgr.GetClient(), Now: clock.now, Recorder: mgr.GetEventRecorder("rollout")}).SetupWithManager(mgr)
	})
}

// nightly is one at a time, only from 22:00 UTC for an hour.
func nightly(tz string) placementv1beta1.RolloutStrategy {
	s := oneAtATime()
	s.RollingUpdate.MaintenanceWindows = []placementv1beta1.MaintenanceWindow{{Schedule: "0 22 * * *", Duration: metav1.Duration{Duration: time.Hour}, TimeZone: tz}}
	return s
}

// heldBy returns a check that every given cluster's RolloutStarted is False with
// the reason and a message containing text.
func heldBy(t *testing.T, p, reason, text string, cs ...string) func() error {
	return func() error {
		for _, c := range cs {
			rs := rolloutStarted(t, p, c)
			if rs == nil || rs.Status != metav1.ConditionFalse || rs.Reason != reason || !strings.Contains(rs.Message, text) {
				return fmt.Errorf("%s RolloutStarted = %+v, want False %s saying %q", c, rs, reason, text)
			}
		}
		return nil
	}
}

func placementEvent(p, reason string) func() error {
	return func() error {
		list := &eventsv1.EventList{}
		if err := env.Client.List(context.Background(), list); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Regarding.Kind == "ClusterResourcePlacement" && e.Regarding.Name == p && e.Reason == reason {
				return nil
			}
		}
		return fmt.Errorf("no %s Event on placement %s", reason, p)
	}
}

// Outside its maintenance window a rolling update moves no cluster, says when
// the window opens, and moves them once it does, without any other event.
func TestMaintenanceWindowHoldsTheRolloutUntilItOpens(t *testing.T) {
	const p = "nightly"
	clock := &testClock{}
	clock.set(time.Date(2026, time.November, 27, 22, 30, 0, 0, time.UTC))
	startRolloutWithClock(t, clock)
	placementWith(p, nightly(""))
	v0 := snapshot(t, p, 0)
	scheduled(t, p, clusters...)
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v0, clusters...))
	for _, c := range clusters {
		report(t, p, c, true, true, placementv1beta1.ReasonAvailable)
	}

	// The next evening, eight seconds before the window opens.
	clock.set(time.Date(2026, time.November, 28, 21, 59, 52, 0, time.UTC))
	v1 := snapshot(t, p, 1)
	testenv.Eventually(t, 6*time.Second, heldBy(t, p, placementv1beta1.ReasonOutsideMaintenanceWindow, "the next opens at 2026-11-28T22:00:00Z", clusters...))
	if err := onSnapshot(t, p, v0, clusters...)(); err != nil {
		t.Fatalf("a cluster moved outside the window: %v", err)
	}
	testenv.Eventually(t, 10*time.Second, placementEvent(p, placementv1beta1.ReasonOutsideMaintenanceWindow))

	// The controller looks again when the window opens.
	testenv.Eventually(t, 30*time.Second, onSnapshot(t, p, v1, "member-1"))
	testenv.Eventually(t, 10*time.Second, placementEvent(p, rollout.EventMaintenanceWindowOpen))
	report(t, p, "member-1", true, true, placementv1beta1.ReasonAvailable)
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v1, "member-1", "member-2"))
}

// A removal never waits for a window: an unscheduled cluster is emptied while
// every window is closed.
func TestRemovalsDoNotWaitForAMaintenanceWindow(t *testing.T) {
	const p = "nightly-shrink"
	clock := &testClock{}
	clock.set(time.Date(2026, time.November, 27, 22, 30, 0, 0, time.UTC))
	startRolloutWithClock(t, clock)
	placementWith(p, nightly("UTC"))
	v0 := snapshot(t, p, 0)
	scheduled(t, p, clusters...)
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v0, clusters...))
	for _, c := range clusters {
		report(t, p, c, true, true, placementv1beta1.ReasonAvailable)
	}
	clock.set(time.Date(2026, time.November, 28, 12, 0, 0, 0, time.UTC))
	b := binding(t, p, "member-3")
	b.Spec.State = placementv1beta1.BindingStateUnscheduled
	if err := env.Client.Update(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, func() error {
		if err := env.Client.Get(context.Background(), types.NamespacedName{Name: p + "-member-3"}, &placementv1beta1.ClusterResourceBinding{}); err == nil {
			return fmt.Errorf("the unscheduled binding still exists")
		}
		return nil
	})
}

// A time zone the hub does not know holds the rollout with a condition that
// names the field; fixing the placement lets it go on.
func TestUnknownTimeZoneHoldsTheRolloutUntilFixed(t *testing.T) {
	const p = "nightly-mars"
	clock := &testClock{}
	clock.set(time.Date(2026, time.November, 27, 22, 30, 0, 0, time.UTC))
	startRolloutWithClock(t, clock)
	crp := placementWith(p, nightly("Mars/Olympus_Mons"))
	v0 := snapshot(t, p, 0)
	scheduled(t, p, clusters...)
	testenv.Eventually(t, 20*time.Second, heldBy(t, p, placementv1beta1.ReasonInvalidMaintenanceWindow,
		`spec.strategy.rollingUpdate.maintenanceWindows[0].timeZone "Mars/Olympus_Mons" is not a time zone the hub knows`, clusters...))
	testenv.Eventually(t, 10*time.Second, placementEvent(p, placementv1beta1.ReasonInvalidMaintenanceWindow))

	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: p}, crp); err != nil {
		t.Fatal(err)
	}
	crp.Spec.Strategy.RollingUpdate.MaintenanceWindows[0].TimeZone = "UTC"
	if err := env.Client.Update(context.Background(), crp); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v0, clusters...))
}

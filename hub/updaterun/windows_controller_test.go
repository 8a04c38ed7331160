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

package updaterun_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
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

// useClock makes the next startHub's update-run controller read clock.
func useClock(t *testing.T, clock *testClock) {
	runClock = clock.now
	t.Cleanup(func() { runClock = nil })
}

func windowedStrategy(name, suite, tz string) *placementv1beta1.ClusterStagedUpdateStrategy {
	return &placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{Name: "canary", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"suite": suite, "stage": "canary"}},
				MaintenanceWindows: []placementv1beta1.MaintenanceWindow{{Schedule: "0 22 * * *", Duration: metav1.Duration{Duration: time.Hour}, TimeZone: tz}}},
			{Name: "prod", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"suite": suite, "stage": "prod"}}},
		}},
	}
}

// A stage with a maintenance window starts no cluster before the window
// opens: the run and the stage say when it opens, the run is not failed, and
// the stage goes on by itself once the window is open.
func TestStageWaitsForItsMaintenanceWindow(t *testing.T) {
	clock := &testClock{}
	clock.set(time.Date(2026, time.November, 28, 12, 0, 0, 0, time.UTC))
	useClock(t, clock)
	startHub(t, newMemberAgents())
	testenv.ReadyMember(t, env.Client, "mw-1", map[string]string{"suite": "mw", "stage": "canary"})
	testenv.ReadyMember(t, env.Client, "mw-2", map[string]string{"suite": "mw", "stage": "prod"})
	appNamespace(t, "upd-mw", "blue")
	externalPlacement(t, "upd-mw", map[string]string{"suite": "mw"})
	testenv.Create(t, env.Client, windowedStrategy("upd-mw", "mw", "Europe/London"))
	waitUntilExternallyControlled(t, "upd-mw", "mw-1", "mw-2")

	// Twelve seconds before the window opens (22:00 in London is 22:00 UTC in
	// November).
	opening := time.Date(2026, time.November, 28, 22, 0, 0, 0, time.UTC)
	clock.set(opening.Add(-12 * time.Second))
	testenv.Create(t, env.Client, newRun("upd-mw-0", "upd-mw", "0", "upd-mw"))
	c := waitForRunCondition(t, "upd-mw-0", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionFalse, placementv1beta1.ReasonOutsideMaintenanceWindow)
	if want := "stage canary: every maintenance window is closed; 1 cluster(s) wait for the next, which opens at 2026-11-28T22:00:00Z"; c.Message != want {
		t.Errorf("run Progressing message = %q, want %q", c.Message, want)
	}
	run := getRun(t, "upd-mw-0")
	canary := run.Status.StagesStatus[0]
	if sc := conditions.Get(canary.Conditions, placementv1beta1.ConditionUpdateRunProgressing); sc == nil || sc.Reason != placementv1beta1.ReasonOutsideMaintenanceWindow || !strings.Contains(sc.Message, "opens at 2026-11-28T22:00:00Z") {
		t.Errorf("canary stage Progressing = %+v, want OutsideMaintenanceWindow saying when the window opens", sc)
	}
	if canary.StartTime != nil {
		t.Errorf("canary stage started at %s, before its window", canary.StartTime)
	}
	if s := conditions.Get(run.Status.Conditions, placementv1beta1.ConditionUpdateRunSucceeded); s != nil {
		t.Errorf("a run waiting for a window has Succeeded %+v", s)
	}
	if err := colorsAre("upd-mw", map[string]string{"mw-1": "", "mw-2": ""})(); err != nil {
		t.Fatalf("a cluster moved before the window opened: %v", err)
	}
	testenv.Eventually(t, 10*time.Second, func() error { return hasEvent("upd-mw-0", placementv1beta1.ReasonOutsideMaintenanceWindow) })

	// The run looks again when the window opens, and finishes.
	waitForRunCondition(t, "upd-mw-0", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
	if err := colorsAre("upd-mw", map[string]string{"mw-1": "blue", "mw-2": "blue"})(); err != nil {
		t.Fatal(err)
	}
	run = getRun(t, "upd-mw-0")
	if started := run.Status.StagesStatus[0].StartTime; started == nil || started.Before(&metav1.Time{Time: opening}) {
		t.Errorf("canary stage started at %v, want at or after %s", started, opening)
	}
}

// A strategy whose stage names a time zone the hub does not know keeps the run
// from starting, and the run says which field to fix.
func TestUnknownTimeZoneKeepsTheRunFromStarting(t *testing.T) {
	startHub(t, newMemberAgents())
	testenv.ReadyMember(t, env.Client, "mx-1", map[string]string{"suite": "mx", "stage": "canary"})
	appNamespace(t, "upd-mx", "blue")
	externalPlacement(t, "upd-mx", map[string]string{"suite": "mx"})
	testenv.Create(t, env.Client, windowedStrategy("upd-mx", "mx", "Mars/Olympus_Mons"))
	waitUntilExternallyControlled(t, "upd-mx", "mx-1")
	testenv.Create(t, env.Client, newRun("upd-mx-0", "upd-mx", "0", "upd-mx"))
	c := waitForRunCondition(t, "upd-mx-0", placementv1beta1.ConditionUpdateRunInitialized, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunInvalidStrategy)
	if want := `spec.stages[0].maintenanceWindows[0].timeZone "Mars/Olympus_Mons" is not a time zone the hub knows`; !strings.Contains(c.Message, want) {
		t.Errorf("Initialized message = %q, want it to contain %q", c.Message, want)
	}
	// Fixing the strategy lets the run start (initialization is tried again
	// when the strategy changes).
	strategy := &placementv1beta1.ClusterStagedUpdateStrategy{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: "upd-mx"}, strategy); err != nil {
		t.Fatal(err)
	}
	strategy.Spec.Stages[0].MaintenanceWindows = nil
	if err := env.Client.Update(context.Background(), strategy); err != nil {
		t.Fatal(err)
	}
	waitForRunCondition(t, "upd-mx-0", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
	if err := colorsAre("upd-mx", map[string]string{"mx-1": "blue"})(); err != nil {
		t.Fatal(err)
	}
}

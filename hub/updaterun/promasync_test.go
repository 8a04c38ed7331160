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
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/analysis"
	"github.com/flotilla-io/flotilla/pkg/poll"
)

func TestDecideRound(t *testing.T) {
	round2 := roundKey{round: 2}
	for _, tc := range []struct {
		name string
		have *backgroundRound
		key  roundKey
		want roundAction
	}{
		{name: "a round with nothing in its slot starts", key: round2, want: roundStart},
		{name: "a round that is running is waited for", have: &backgroundRound{key: round2}, key: round2, want: roundWait},
		{name: "a round whose results are in is judged", have: &backgroundRound{key: round2, done: true}, key: round2, want: roundJudge},
		{name: "a round after one that was judged starts", have: &backgroundRound{key: roundKey{round: 1}, done: true}, key: round2, want: roundStart},
		{name: "a round that supersedes one still running starts", have: &backgroundRound{key: roundKey{round: 1}}, key: round2, want: roundStart},
		{name: "round 1 of a retried analysis is not the round 1 before the retry", have: &backgroundRound{key: roundKey{round: 1}, done: true}, key: roundKey{round: 1, retried: "abc"}, want: roundStart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decideRound(tc.have, tc.key); got != tc.want {
				t.Errorf("decideRound = %s, want %s", got, tc.want)
			}
		})
	}
}

// gate is a round that runs until it is released, counting its runs.
type gate struct {
	release chan struct{}
	runs    atomic.Int32
	result  []analysis.CheckResult
}

func newGate(name string) *gate {
	return &gate{release: make(chan struct{}), result: []analysis.CheckResult{{Name: name, Passed: true}}}
}

func (g *gate) run(context.Context) ([]analysis.CheckResult, error) {
	g.runs.Add(1)
	<-g.release
	return g.result, nil
}

// A round runs once in the background: the reconciles that find it running
// wait, the run is woken when it is done, and its results (with the time it
// started) are judged, again if asked again, until the next round replaces
// them.
func TestAsyncRoundRunsOnceAndWakesTheRun(t *testing.T) {
	a := &asyncRounds{events: make(chan ctrlevent.GenericEvent, 10)}
	slot := roundSlot{run: "uid-1", stage: 0}
	start := metav1.NewTime(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	later := metav1.NewTime(start.Add(3 * time.Second))
	g := newGate("check")
	ctx := context.Background()

	if _, _, ok, err := a.round(ctx, slot, "run-1", roundKey{round: 1}, start, g.run); ok || err != nil {
		t.Fatalf("the first call: ok %v, err %v; want the round started and not done", ok, err)
	}
	if _, _, ok, _ := a.round(ctx, slot, "run-1", roundKey{round: 1}, later, g.run); ok {
		t.Fatal("a round that is still running was judged")
	}
	close(g.release)
	select {
	case e := <-a.events:
		if e.Object.GetName() != "run-1" {
			t.Errorf("woke %q, want run-1", e.Object.GetName())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run was not woken when its round was done")
	}
	for range 2 {
		results, at, ok, err := a.round(ctx, slot, "run-1", roundKey{round: 1}, later, g.run)
		if !ok || err != nil {
			t.Fatalf("after the round was done: ok %v, err %v", ok, err)
		}
		if diff := cmp.Diff(g.result, results, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("results (-want +got):\n%s", diff)
		}
		if !at.Equal(&start) {
			t.Errorf("the round's time is %s, want %s, when it started", at, start)
		}
	}
	if n := g.runs.Load(); n != 1 {
		t.Errorf("the round ran %d times, want 1", n)
	}

	// The next round starts afresh.
	g2 := newGate("check")
	if _, _, ok, _ := a.round(ctx, slot, "run-1", roundKey{round: 2}, later, g2.run); ok {
		t.Fatal("round 2 was judged with round 1's results")
	}
	close(g2.release)
	poll.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		if _, _, ok, _ := a.round(ctx, slot, "run-1", roundKey{round: 2}, later, g2.run); !ok {
			return fmt.Errorf("round 2 is not done")
		}
		return nil
	})
}

// A round of a run that was forgotten (finished, rolled back) neither keeps
// its results nor wakes the run.
func TestAForgottenRoundIsDropped(t *testing.T) {
	a := &asyncRounds{events: make(chan ctrlevent.GenericEvent, 10)}
	slot := roundSlot{run: "uid-2", stage: 1}
	g := newGate("check")
	ctx := context.Background()
	_, _, _, _ = a.round(ctx, slot, "run-2", roundKey{round: 1}, metav1.Now(), g.run)
	a.forget("uid-2")
	close(g.release)
	poll.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		if g.runs.Load() != 1 {
			return fmt.Errorf("the round has not run")
		}
		return nil
	})
	select {
	case e := <-a.events:
		t.Fatalf("a forgotten round woke %s", e.Object.GetName())
	case <-time.After(200 * time.Millisecond):
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.slots) != 0 {
		t.Errorf("slots after forget: %v", a.slots)
	}
}

// However many analyses have a round due, at most maxConcurrentRounds run at
// once; the others wait for a slot and all finish.
func TestAtMostMaxConcurrentRoundsRunAtOnce(t *testing.T) {
	a := &asyncRounds{}
	release := make(chan struct{})
	var mu sync.Mutex
	running, most, finished := 0, 0, 0
	run := func(context.Context) ([]analysis.CheckResult, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		<-release
		mu.Lock()
		running--
		finished++
		mu.Unlock()
		return nil, nil
	}
	const analyses = 3 * maxConcurrentRounds
	for i := range analyses {
		_, _, _, _ = a.round(context.Background(), roundSlot{run: fmt.Sprintf("uid-%d", i)}, "run", roundKey{round: 1}, metav1.Now(), run)
	}
	poll.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if running != maxConcurrentRounds {
			return fmt.Errorf("%d rounds running, want %d", running, maxConcurrentRounds)
		}
		return nil
	})
	close(release)
	poll.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if finished != analyses {
			return fmt.Errorf("%d of %d rounds finished", finished, analyses)
		}
		return nil
	})
	if most != maxConcurrentRounds {
		t.Errorf("at most %d rounds ran at once, want %d", most, maxConcurrentRounds)
	}
}

func TestAnalysisRoundRunning(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   placementv1beta1.AnalysisStatus
		want string
	}{
		{name: "the first round says only that it waits", want: "round 1 is waiting for Prometheus"},
		{name: "a later round says what the rounds before it counted", st: placementv1beta1.AnalysisStatus{Rounds: 2, ConsecutiveSuccesses: 1, Failures: 1},
			want: "2 rounds, 1 passing in a row, 1 failing; round 3 is waiting for Prometheus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := analysisRoundRunning(&tc.st)
			if diff := cmp.Diff(condition{metav1.ConditionUnknown, placementv1beta1.ReasonAnalysisRunning, tc.want}, c, cmp.AllowUnexported(condition{})); diff != "" {
				t.Errorf("analysisRoundRunning (-want +got):\n%s", diff)
			}
		})
	}
}

// A round that ends in an error rather than results returns it once, and the
// next reconcile runs the round again.
func TestARoundThatFailedToRunRunsAgain(t *testing.T) {
	a := &asyncRounds{}
	slot, key := roundSlot{run: "uid-3"}, roundKey{round: 1}
	var runs atomic.Int32
	run := func(context.Context) ([]analysis.CheckResult, error) {
		runs.Add(1)
		return nil, fmt.Errorf("failed to encode the status of cluster c-1")
	}
	ctx := context.Background()
	_, _, _, _ = a.round(ctx, slot, "run-3", key, metav1.Now(), run)
	poll.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		_, _, ok, err := a.round(ctx, slot, "run-3", key, metav1.Now(), run)
		if !ok {
			return fmt.Errorf("the round is not done")
		}
		if err == nil {
			t.Fatal("the round's error was lost")
		}
		return nil
	})
	if _, _, ok, _ := a.round(ctx, slot, "run-3", key, metav1.Now(), run); ok {
		t.Fatal("a round that failed to run was judged again instead of running again")
	}
	poll.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n := runs.Load(); n != 2 {
			return fmt.Errorf("the round ran %d times, want 2", n)
		}
		return nil
	})
}

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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/analysis"
)

// A round whose checks include a prometheus check does not run on the
// update-run worker: a Prometheus that answers slowly (up to
// --prometheus-timeout) would hold every other run for as long. The reconcile
// that finds the round due starts it in the background (asyncRounds) and
// returns; the round's checks (all of them, over the clusters as that
// reconcile saw them, the queries evaluated at its time) run there, at most
// maxConcurrentRounds at once. When they are done the run is enqueued again,
// and the reconcile that finds the round's results judges it as of the time
// it started. A round of cel checks only is quick and runs in the reconcile,
// as before.

const (
	// maxConcurrentRounds bounds the rounds with prometheus checks that run at
	// once, over all runs; more wait for a slot.
	maxConcurrentRounds = 8
	// roundRecheck is how soon a run whose round is still running looks again
	// even if nothing wakes it.
	roundRecheck = 2 * time.Second
)

// roundSlot is where one analysis keeps its running round: the run (by UID)
// and the stage's index. A slot holds one round at a time.
type roundSlot struct {
	run   string
	stage int
}

// roundKey says which round of its analysis a round is: its number and the
// retry token (a retried analysis counts its rounds from 1 again).
type roundKey struct {
	round   int32
	retried string
}

// backgroundRound is a round started in the background.
type backgroundRound struct {
	key roundKey
	// at is the round's time: when the reconcile that started it ran.
	at metav1.Time
	// done is set when results and err are in.
	done    bool
	results []analysis.CheckResult
	err     error
}

// roundAction is what a reconcile does about a round that is due.
type roundAction int

const (
	// roundStart: start the round in the background, and wait for it.
	roundStart roundAction = iota
	// roundWait: the round runs; wait for it.
	roundWait
	// roundJudge: the round's results are in; judge it.
	roundJudge
)

func (a roundAction) String() string {
	switch a {
	case roundWait:
		return "wait"
	case roundJudge:
		return "judge"
	default:
		return "start"
	}
}

// decideRound says what to do about the round key of an analysis whose slot
// holds have (nil: nothing). The rules:
//   - nothing in the slot, or another round (an older one whose status write
//     was lost or which a retry superseded): start this one (the other's
//     results, when they come, are dropped);
//   - this round, still running: wait;
//   - this round, done: judge it. Its results stay in the slot until the next
//     round replaces them, so a reconcile whose status write fails judges the
//     same results again rather than asking Prometheus again (a round that
//     ended in an error, not in results, is dropped, and runs again).
func decideRound(have *backgroundRound, key roundKey) roundAction {
	switch {
	case have == nil || have.key != key:
		return roundStart
	case !have.done:
		return roundWait
	default:
		return roundJudge
	}
}

// asyncRounds runs rounds in the background. The zero value is ready to use;
// a nil events runs them without waking the runs (they look again after
// roundRecheck).
type asyncRounds struct {
	mu    sync.Mutex
	slots map[roundSlot]*backgroundRound
	// sem holds a token per running round (maxConcurrentRounds).
	sem chan struct{}
	// events wakes a run when its round is done (SetupWithManager watches it).
	events chan ctrlevent.GenericEvent
}

// round returns the results of the round key of the analysis in slot once
// they are in (ok) and the round's time; until then it starts the round
// (run evaluates it) or leaves it running, and returns !ok. name is the run's
// name, to wake it.
func (a *asyncRounds) round(ctx context.Context, slot roundSlot, name string, key roundKey, at metav1.Time, run func(context.Context) ([]analysis.CheckResult, error)) (results []analysis.CheckResult, when metav1.Time, ok bool, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.slots == nil {
		a.slots = map[roundSlot]*backgroundRound{}
	}
	if a.sem == nil {
		a.sem = make(chan struct{}, maxConcurrentRounds)
	}
	have := a.slots[slot]
	switch decideRound(have, key) {
	case roundJudge:
		if have.err != nil {
			// No round to judge: the next reconcile starts it again.
			delete(a.slots, slot)
		}
		return have.results, have.at, true, have.err
	case roundWait:
		return nil, have.at, false, nil
	}
	br := &backgroundRound{key: key, at: at}
	a.slots[slot] = br
	// The round outlives this reconcile; the Prometheus timeout bounds it.
	bg := context.WithoutCancel(ctx)
	go func() {
		a.sem <- struct{}{}
		results, err := run(bg)
		<-a.sem
		a.mu.Lock()
		current := a.slots[slot] == br
		if current {
			br.results, br.err, br.done = results, err, true
		}
		a.mu.Unlock()
		if current && a.events != nil {
			obj := &placementv1beta1.ClusterStagedUpdateRun{}
			obj.Name = name
			select {
			case a.events <- ctrlevent.GenericEvent{Object: obj}:
			default: // the queue is full: the run looks again after roundRecheck
			}
		}
	}()
	return nil, at, false, nil
}

// forget drops a run's rounds (the run finished or rolled back); a round still
// running is dropped when it ends.
func (a *asyncRounds) forget(run string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k := range a.slots {
		if k.run == run {
			delete(a.slots, k)
		}
	}
}

// analysisRoundRunning says that the analysis's next round runs in the
// background, waiting for Prometheus.
func analysisRoundRunning(st *placementv1beta1.AnalysisStatus) condition {
	msg := fmt.Sprintf("round %d is waiting for Prometheus", st.Rounds+1)
	if st.Rounds > 0 {
		msg = analysisCounts(st) + "; " + msg
	}
	return condition{metav1.ConditionUnknown, placementv1beta1.ReasonAnalysisRunning, msg}
}

// roundResults evaluates a due round of the analysis of the run's stage (its
// status st) and returns its results and its time, or !ok while a round with
// prometheus checks runs in the background (the run is woken when it is done,
// or looks again after roundRecheck).
func (r *Reconciler) roundResults(ctx context.Context, s *scope, stage int, st *placementv1beta1.AnalysisStatus, checks []analysis.Check, rd analysis.Round) ([]analysis.CheckResult, metav1.Time, bool, error) {
	if !analysis.HasPrometheus(checks) {
		results, err := analysis.Run(ctx, checks, rd)
		return results, s.now, true, err
	}
	slot := roundSlot{run: string(s.run.UID), stage: stage}
	key := roundKey{round: st.Rounds + 1, retried: st.Retried}
	results, at, ok, err := r.rounds.round(ctx, slot, s.run.Name, key, s.now, func(ctx context.Context) ([]analysis.CheckResult, error) {
		return analysis.Run(ctx, checks, rd)
	})
	if !ok {
		s.requeueIn(roundRecheck)
	}
	return results, at, ok, err
}

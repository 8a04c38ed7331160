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

package failover

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Back-off of a cluster that failed repeatedly (failback rule 4).
const (
	// FailureWindow is how far back failures of a cluster count.
	FailureWindow = time.Hour
	// BackoffBase is the hold-out after a cluster's second failure in the
	// window; it doubles with every further failure, up to BackoffMax.
	BackoffBase = 5 * time.Minute
	BackoffMax  = time.Hour
	// ConcurrencyRetry is when a placement held by maxConcurrent looks again.
	ConcurrencyRetry = 10 * time.Second
)

// FailbackAction is what DecideFailback asks of a placement now.
type FailbackAction string

const (
	// FailbackNone: nothing to move back (not opted in, or on the most
	// preferred clusters it can be on).
	FailbackNone FailbackAction = "None"
	// FailbackWait: a more preferred cluster exists but the placement must not
	// move yet; Why says why and RecheckAfter when to look again.
	FailbackWait FailbackAction = "Wait"
	// FailbackMove: bind the placement to To; From is removed once the copy on
	// To is Available (the rollout's surge rules), so there is no gap.
	FailbackMove FailbackAction = "Move"
)

// PlacedCluster is a cluster the placement is on.
type PlacedCluster struct {
	Name string
	// Rank is the cluster's PreferenceScore (higher is more preferred).
	Rank int32
}

// CandidateCluster is a cluster the placement is not on that the scheduler
// would accept now (it passes every filter).
type CandidateCluster struct {
	Name string
	// Rank is the cluster's PreferenceScore (higher is more preferred).
	Rank int32
	// EligibleSince is when the cluster last became eligible, without a break
	// since.
	EligibleSince time.Time
	// Failures are when the cluster failed (a placement was evicted from it:
	// unreachable, not ready, unavailable too long), any order.
	Failures []time.Time
}

// FailbackInput is everything DecideFailback looks at.
type FailbackInput struct {
	Now time.Time
	// Policy is the placement's failback policy; nil means not opted in.
	Policy *placementv1beta1.FailbackPolicy
	// Placed are the clusters the placement is on (active bindings).
	Placed []PlacedCluster
	// Candidates are the other clusters the scheduler would accept now.
	Candidates []CandidateCluster
	// Moving is true while a failback of this placement is under way (a cluster
	// bound for it whose copy is not Available yet, or whose old cluster is not
	// removed yet).
	Moving bool
	// InFlight is how many other placements of the fleet are failing back now.
	InFlight int
}

// FailbackDecision is what a placement does about failing back.
type FailbackDecision struct {
	Action FailbackAction
	// From and To are set for FailbackMove (and To for FailbackWait on a
	// cluster): the cluster given up and the more preferred one.
	From, To string
	// Why explains the decision, for status and Events.
	Why string
	// RecheckAfter is when to decide again; 0 for no particular time (the next
	// change wakes the controller).
	RecheckAfter time.Duration
	// BackingOff is set for a FailbackWait on a cluster held out because it
	// failed repeatedly (rule 4), until RecheckAfter from now.
	BackingOff bool
}

// DecideFailback decides whether a placement moves back to a more preferred
// cluster. It is pure; FailbackReconciler loads the input and carries
// the decision out. The rules, in order:
//
//  1. Not opted in (Policy nil): None.
//  2. A failback of this placement is under way (Moving): Wait for it, one move
//     at a time per placement, so the rolling-update limits hold and the new
//     copy is Available before the old one goes.
//  3. The cluster to give up is the least preferred cluster the placement is on
//     (lowest Rank; the last by name on a tie). Only candidates of a strictly
//     higher Rank count; none: None.
//  4. A candidate is held out while it is stabilizing — eligible for less than
//     stabilizationSeconds — or backing off: with n >= 2 failures within
//     FailureWindow, for min(BackoffBase * 2^(n-2), BackoffMax) after its last
//     failure. A single failure costs only the stabilization window, so a
//     cluster that flaps over and over stays out longer and longer and nothing
//     ping-pongs.
//  5. Among the candidates not held out, the best Rank wins (the first by name on
//     a tie). None left: Wait until the first held-out one is due.
//  6. At most maxConcurrent placements fail back at once across the fleet:
//     while InFlight >= maxConcurrent, Wait and look again after
//     ConcurrencyRetry.
//  7. Otherwise Move from the cluster of rule 3 to the winner of rule 5.
func DecideFailback(in FailbackInput) FailbackDecision {
	if in.Policy == nil {
		return FailbackDecision{Action: FailbackNone, Why: "failback is not enabled"}
	}
	if in.Moving {
		return FailbackDecision{Action: FailbackWait, Why: "a failback of the placement is under way: waiting for the new copy to be Available and the old one removed"}
	}
	if len(in.Placed) == 0 {
		return FailbackDecision{Action: FailbackNone, Why: "the placement is on no cluster"}
	}
	stabilization := time.Duration(DefaultFailbackStabilizationSeconds) * time.Second
	if s := in.Policy.StabilizationSeconds; s != nil {
		stabilization = time.Duration(*s) * time.Second
	}
	maxConcurrent := DefaultFailbackMaxConcurrent
	if m := in.Policy.MaxConcurrent; m != nil {
		maxConcurrent = int(*m)
	}

	worst := slices.MaxFunc(in.Placed, func(a, b PlacedCluster) int {
		// The least preferred is the "largest"; the last by name on a tie.
		return cmp.Or(cmp.Compare(b.Rank, a.Rank), cmp.Compare(a.Name, b.Name))
	})
	better := make([]CandidateCluster, 0, len(in.Candidates))
	for _, c := range in.Candidates {
		if c.Rank > worst.Rank {
			better = append(better, c)
		}
	}
	if len(better) == 0 {
		return FailbackDecision{Action: FailbackNone, Why: "the placement is on the most preferred clusters it can be on"}
	}
	slices.SortFunc(better, func(a, b CandidateCluster) int {
		return cmp.Or(cmp.Compare(b.Rank, a.Rank), cmp.Compare(a.Name, b.Name))
	})

	var soonest time.Duration
	var held CandidateCluster
	var heldWhy string
	var backingOff bool
	for _, c := range better {
		due, why, backoff := heldOutUntil(c, stabilization, in.Now)
		if !due.After(in.Now) {
			if in.InFlight >= maxConcurrent {
				return FailbackDecision{Action: FailbackWait, To: c.Name, RecheckAfter: ConcurrencyRetry,
					Why: fmt.Sprintf("%d placements are failing back across the fleet (failback.maxConcurrent %d): waiting to move back to %s", in.InFlight, maxConcurrent, c.Name)}
			}
			return FailbackDecision{Action: FailbackMove, From: worst.Name, To: c.Name,
				Why: fmt.Sprintf("%s is preferred to %s and has been eligible for %s", c.Name, worst.Name, in.Now.Sub(c.EligibleSince).Round(time.Second))}
		}
		if wait := due.Sub(in.Now); soonest == 0 || wait < soonest {
			soonest, held, heldWhy, backingOff = wait, c, why, backoff
		}
	}
	return FailbackDecision{Action: FailbackWait, To: held.Name, RecheckAfter: soonest, BackingOff: backingOff,
		Why: fmt.Sprintf("%s is preferred to %s but %s", held.Name, worst.Name, heldWhy)}
}

// heldOutUntil returns when a candidate stops being held out (rule 4), why it
// is held out until then, and whether that is a back-off.
func heldOutUntil(c CandidateCluster, stabilization time.Duration, now time.Time) (time.Time, string, bool) {
	due := c.EligibleSince.Add(stabilization)
	why := fmt.Sprintf("has been eligible for less than the stabilization window of %s", stabilization)
	backingOff := false
	var recent []time.Time
	for _, f := range c.Failures {
		if now.Sub(f) <= FailureWindow {
			recent = append(recent, f)
		}
	}
	if n := len(recent); n >= 2 {
		backoff := BackoffMax
		if shift := n - 2; shift < 16 {
			backoff = min(BackoffBase<<shift, BackoffMax)
		}
		if until := slices.MaxFunc(recent, func(a, b time.Time) int { return a.Compare(b) }).Add(backoff); until.After(due) {
			due, backingOff = until, true
			why = fmt.Sprintf("failed %d times in the last %s: held out for %s after its last failure", n, FailureWindow, backoff)
		}
	}
	return due, why, backingOff
}

// Defaults of placementv1beta1.FailbackPolicy (spec.policy.failback).
const (
	DefaultFailbackStabilizationSeconds = 60
	DefaultFailbackMaxConcurrent        = 10
)

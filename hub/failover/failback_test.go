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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestDecideFailback(t *testing.T) {
	now := time.Date(2026, 11, 27, 7, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	policy := &placementv1beta1.FailbackPolicy{StabilizationSeconds: ptr.To[int32](30), MaxConcurrent: ptr.To[int32](2)}
	onSecondary := []PlacedCluster{{Name: "secondary-1", Rank: 1}}
	primary := func(eligibleFor time.Duration, failedAgo ...time.Duration) CandidateCluster {
		c := CandidateCluster{Name: "primary-1", Rank: 2, EligibleSince: ago(eligibleFor)}
		for _, f := range failedAgo {
			c.Failures = append(c.Failures, ago(f))
		}
		return c
	}
	tests := []struct {
		name string
		in   FailbackInput
		want FailbackDecision
	}{
		{
			name: "a placement not opted in never fails back",
			in:   FailbackInput{Placed: onSecondary, Candidates: []CandidateCluster{primary(time.Hour)}},
			want: FailbackDecision{Action: FailbackNone, Why: "failback is not enabled"},
		},
		{
			name: "a preferred cluster eligible for the window is moved back to",
			in:   FailbackInput{Policy: policy, Placed: onSecondary, Candidates: []CandidateCluster{primary(31 * time.Second)}},
			want: FailbackDecision{Action: FailbackMove, From: "secondary-1", To: "primary-1", Why: "primary-1 is preferred to secondary-1 and has been eligible for 31s"},
		},
		{
			name: "a preferred cluster still in the stabilization window is waited for",
			in:   FailbackInput{Policy: policy, Placed: onSecondary, Candidates: []CandidateCluster{primary(10 * time.Second)}},
			want: FailbackDecision{Action: FailbackWait, To: "primary-1", RecheckAfter: 20 * time.Second,
				Why: "primary-1 is preferred to secondary-1 but has been eligible for less than the stabilization window of 30s"},
		},
		{
			name: "the default stabilization window is 60s",
			in:   FailbackInput{Policy: &placementv1beta1.FailbackPolicy{}, Placed: onSecondary, Candidates: []CandidateCluster{primary(45 * time.Second)}},
			want: FailbackDecision{Action: FailbackWait, To: "primary-1", RecheckAfter: 15 * time.Second,
				Why: "primary-1 is preferred to secondary-1 but has been eligible for less than the stabilization window of 1m0s"},
		},
		{
			name: "one failure costs only the stabilization window",
			in:   FailbackInput{Policy: policy, Placed: onSecondary, Candidates: []CandidateCluster{primary(40*time.Second, 2*time.Minute)}},
			want: FailbackDecision{Action: FailbackMove, From: "secondary-1", To: "primary-1", Why: "primary-1 is preferred to secondary-1 and has been eligible for 40s"},
		},
		{
			name: "a cluster that failed twice within the hour is held out for the base back-off after its last failure",
			in:   FailbackInput{Policy: policy, Placed: onSecondary, Candidates: []CandidateCluster{primary(40*time.Second, 2*time.Minute, 20*time.Minute)}},
			want: FailbackDecision{Action: FailbackWait, To: "primary-1", RecheckAfter: 3 * time.Minute, BackingOff: true,
				Why: "primary-1 is preferred to secondary-1 but failed 2 times in the last 1h0m0s: held out for 5m0s after its last failure"},
		},
		{
			name: "the back-off doubles with each further failure",
			in:   FailbackInput{Policy: policy, Placed: onSecondary, Candidates: []CandidateCluster{primary(40*time.Second, 2*time.Minute, 10*time.Minute, 20*time.Minute)}},
			want: FailbackDecision{Action: FailbackWait, To: "primary-1", RecheckAfter: 8 * time.Minute, BackingOff: true,
				Why: "primary-1 is preferred to secondary-1 but failed 3 times in the last 1h0m0s: held out for 10m0s after its last failure"},
		},
		{
			name: "the back-off is capped at an hour",
			in: FailbackInput{Policy: policy, Placed: onSecondary, Candidates: []CandidateCluster{
				primary(40*time.Second, time.Minute, 2*time.Minute, 3*time.Minute, 4*time.Minute, 5*time.Minute, 6*time.Minute, 7*time.Minute, 8*time.Minute),
			}},
			want: FailbackDecision{Action: FailbackWait, To: "primary-1", RecheckAfter: 59 * time.Minute, BackingOff: true,
				Why: "primary-1 is preferred to secondary-1 but failed 8 times in the last 1h0m0s: held out for 1h0m0s after its last failure"},
		},
		{
			name: "failures older than the window are forgotten",
			in:   FailbackInput{Policy: policy, Placed: onSecondary, Candidates: []CandidateCluster{primary(40*time.Second, 2*time.Hour, 3*time.Hour)}},
			want: FailbackDecision{Action: FailbackMove, From: "secondary-1", To: "primary-1", Why: "primary-1 is preferred to secondary-1 and has been eligible for 40s"},
		},
		{
			name: "maxConcurrent failbacks under way across the fleet make it wait",
			in:   FailbackInput{Policy: policy, Placed: onSecondary, Candidates: []CandidateCluster{primary(time.Minute)}, InFlight: 2},
			want: FailbackDecision{Action: FailbackWait, To: "primary-1", RecheckAfter: ConcurrencyRetry,
				Why: "2 placements are failing back across the fleet (failback.maxConcurrent 2): waiting to move back to primary-1"},
		},
		{
			name: "fewer failbacks under way than maxConcurrent let it move",
			in:   FailbackInput{Policy: policy, Placed: onSecondary, Candidates: []CandidateCluster{primary(time.Minute)}, InFlight: 1},
			want: FailbackDecision{Action: FailbackMove, From: "secondary-1", To: "primary-1", Why: "primary-1 is preferred to secondary-1 and has been eligible for 1m0s"},
		},
		{
			name: "a failback under way is finished before the next one starts",
			in:   FailbackInput{Policy: policy, Placed: onSecondary, Candidates: []CandidateCluster{primary(time.Minute)}, Moving: true},
			want: FailbackDecision{Action: FailbackWait, Why: "a failback of the placement is under way: waiting for the new copy to be Available and the old one removed"},
		},
		{
			name: "a placement on its most preferred clusters stays",
			in: FailbackInput{Policy: policy, Placed: []PlacedCluster{{Name: "primary-2", Rank: 2}},
				Candidates: []CandidateCluster{primary(time.Hour), {Name: "secondary-2", Rank: 1, EligibleSince: ago(time.Hour)}}},
			want: FailbackDecision{Action: FailbackNone, Why: "the placement is on the most preferred clusters it can be on"},
		},
		{
			name: "the least preferred cluster the placement is on is given up first",
			in: FailbackInput{Policy: policy, Placed: []PlacedCluster{{Name: "secondary-1", Rank: 2}, {Name: "tertiary-1", Rank: 1}},
				Candidates: []CandidateCluster{{Name: "secondary-2", Rank: 2, EligibleSince: ago(time.Hour)}}},
			want: FailbackDecision{Action: FailbackMove, From: "tertiary-1", To: "secondary-2", Why: "secondary-2 is preferred to tertiary-1 and has been eligible for 1h0m0s"},
		},
		{
			name: "the most preferred candidate ready to take the placement wins",
			in: FailbackInput{Policy: policy, Placed: []PlacedCluster{{Name: "tertiary-1", Rank: 1}},
				Candidates: []CandidateCluster{
					{Name: "secondary-1", Rank: 2, EligibleSince: ago(time.Hour)},
					{Name: "primary-2", Rank: 3, EligibleSince: ago(time.Hour)},
					{Name: "primary-1", Rank: 3, EligibleSince: ago(time.Hour)},
				}},
			want: FailbackDecision{Action: FailbackMove, From: "tertiary-1", To: "primary-1", Why: "primary-1 is preferred to tertiary-1 and has been eligible for 1h0m0s"},
		},
		{
			name: "while the most preferred candidate stabilizes, a less preferred one ready now is taken",
			in: FailbackInput{Policy: policy, Placed: []PlacedCluster{{Name: "tertiary-1", Rank: 1}},
				Candidates: []CandidateCluster{
					{Name: "primary-1", Rank: 3, EligibleSince: ago(time.Second)},
					{Name: "secondary-1", Rank: 2, EligibleSince: ago(time.Hour)},
				}},
			want: FailbackDecision{Action: FailbackMove, From: "tertiary-1", To: "secondary-1", Why: "secondary-1 is preferred to tertiary-1 and has been eligible for 1h0m0s"},
		},
		{
			name: "with every candidate held out it waits for the first that is due",
			in: FailbackInput{Policy: policy, Placed: []PlacedCluster{{Name: "tertiary-1", Rank: 1}},
				Candidates: []CandidateCluster{
					{Name: "primary-1", Rank: 3, EligibleSince: ago(5 * time.Second)},
					{Name: "secondary-1", Rank: 2, EligibleSince: ago(20 * time.Second)},
				}},
			want: FailbackDecision{Action: FailbackWait, To: "secondary-1", RecheckAfter: 10 * time.Second,
				Why: "secondary-1 is preferred to tertiary-1 but has been eligible for less than the stabilization window of 30s"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Now = now
			if diff := cmp.Diff(tt.want, DecideFailback(tt.in)); diff != "" {
				t.Errorf("DecideFailback() (-want +got):\n%s", diff)
			}
		})
	}
}

// A cluster that flaps — eligible for a while, then failing again — is moved
// back to at most once per back-off, and ever less often.
func TestAFlappingClusterIsMovedBackToEverLessOften(t *testing.T) {
	start := time.Date(2026, 11, 27, 7, 0, 0, 0, time.UTC)
	policy := &placementv1beta1.FailbackPolicy{StabilizationSeconds: ptr.To[int32](30)}
	var failures []time.Time
	var moves []time.Duration
	eligibleSince, onPrimary := start, false
	// The primary fails every 2 minutes for 30 minutes (the placement fails over
	// to the secondary at once) and is eligible again 10s later; the placement
	// is checked every 10s.
	for now := start; now.Before(start.Add(30 * time.Minute)); now = now.Add(10 * time.Second) {
		if now.Sub(start)%(2*time.Minute) == 0 && now != start {
			failures = append(failures, now)
			eligibleSince, onPrimary = now.Add(10*time.Second), false
			continue
		}
		if onPrimary || now.Before(eligibleSince) {
			continue
		}
		d := DecideFailback(FailbackInput{Now: now, Policy: policy, Placed: []PlacedCluster{{Name: "secondary-1", Rank: 1}},
			Candidates: []CandidateCluster{{Name: "primary-1", Rank: 2, EligibleSince: eligibleSince, Failures: failures}}})
		if d.Action == FailbackMove {
			moves = append(moves, now.Sub(start))
			onPrimary = true
		}
	}
	// Without back-off it would move back after every failure (15 times).
	if len(moves) > 3 {
		t.Errorf("moved back %d times in 30 minutes of flapping (at %v), want at most 3", len(moves), moves)
	}
	if len(moves) == 0 {
		t.Errorf("never moved back")
	}
}

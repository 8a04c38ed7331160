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

package pipeline

import (
	"reflect"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// spanStep is one call on a Spans at a time after the test's origin.
type spanStep struct {
	at       time.Duration
	start    bool          // Start of a reconcile begun at began
	began    time.Duration // when the reconcile of a Start began
	done     bool          // Done
	forget   bool          // Forget
	cluster  string
	stage    Stage
	snapshot string
}

type observed struct {
	stage Stage
	d     time.Duration
}

func TestSpans(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name  string
		steps []spanStep
		want  []observed
		// took is what the last Done returns; ok whether it found a change.
		took time.Duration
		ok   bool
	}{{
		name: "a new placement on one cluster: each stage from the one before",
		steps: []spanStep{
			{at: 5 * ms, start: true, snapshot: "s-0"},
			{at: 20 * ms, cluster: "a", stage: StageScheduled},
			{at: 30 * ms, cluster: "a", stage: StageBound, snapshot: "s-0"},
			{at: 45 * ms, cluster: "a", stage: StageWork, snapshot: "s-0"},
			{at: 145 * ms, cluster: "a", stage: StageApplied, snapshot: "s-0"},
			{at: 150 * ms, cluster: "a", stage: StageAvailable, snapshot: "s-0"},
			{at: 180 * ms, done: true},
		},
		want: []observed{{StageSnapshot, 5 * ms}, {StageScheduled, 15 * ms}, {StageBound, 10 * ms},
			{StageWork, 15 * ms}, {StageApplied, 100 * ms}, {StageAvailable, 5 * ms}, {StagePlacement, 30 * ms}},
		took: 180 * ms, ok: true,
	}, {
		name: "an edit rolled out one cluster at a time: the next cluster's move is timed from the last one available",
		steps: []spanStep{
			{at: 10 * ms, start: true, snapshot: "s-1"},
			{at: 20 * ms, cluster: "a", stage: StageBound, snapshot: "s-1"},
			{at: 30 * ms, cluster: "a", stage: StageWork, snapshot: "s-1"},
			{at: 90 * ms, cluster: "a", stage: StageApplied, snapshot: "s-1"},
			{at: 100 * ms, cluster: "a", stage: StageAvailable, snapshot: "s-1"},
			{at: 125 * ms, cluster: "b", stage: StageBound, snapshot: "s-1"},
			{at: 130 * ms, done: true},
		},
		want: []observed{{StageSnapshot, 10 * ms}, {StageBound, 10 * ms}, {StageWork, 10 * ms}, {StageApplied, 60 * ms},
			{StageAvailable, 10 * ms}, {StageBound, 25 * ms}, {StagePlacement, 30 * ms}},
		took: 130 * ms, ok: true,
	}, {
		name: "marks of another snapshot, repeated marks and marks without a change are not observed",
		steps: []spanStep{
			{at: 1 * ms, cluster: "a", stage: StageWork, snapshot: "s-0"},
			{at: 2 * ms, start: true, snapshot: "s-1"},
			{at: 3 * ms, cluster: "a", stage: StageWork, snapshot: "s-0"},
			{at: 4 * ms, cluster: "a", stage: StageWork, snapshot: "s-1"},
			{at: 9 * ms, cluster: "a", stage: StageWork, snapshot: "s-1"},
		},
		want: []observed{{StageSnapshot, 2 * ms}, {StageWork, 2 * ms}},
	}, {
		name: "a new change replaces the open one; Done without a change finds none",
		steps: []spanStep{
			{at: 2 * ms, start: true, snapshot: "s-0"},
			{at: 3 * ms, cluster: "a", stage: StageAvailable, snapshot: "s-0"},
			{at: 7 * ms, start: true, began: 6 * ms, snapshot: "s-1"},
			{at: 8 * ms, cluster: "a", stage: StageAvailable, snapshot: "s-1"},
			{at: 9 * ms, done: true},
			{at: 10 * ms, done: true},
		},
		want: []observed{{StageSnapshot, 2 * ms}, {StageAvailable, 1 * ms}, {StageSnapshot, 1 * ms},
			{StageAvailable, 1 * ms}, {StagePlacement, 1 * ms}},
	}, {
		name: "a binding scheduled before the reconcile named the resource snapshot counts; a second Start of it only names it",
		steps: []spanStep{
			{at: 2 * ms, start: true},
			{at: 3 * ms, cluster: "a", stage: StageScheduled},
			{at: 4 * ms, cluster: "a", stage: StageBound, snapshot: "s-0"},
			{at: 5 * ms, start: true, snapshot: "s-0"},
			{at: 6 * ms, cluster: "a", stage: StageWork, snapshot: "s-9"},
			{at: 7 * ms, cluster: "a", stage: StageWork, snapshot: "s-0"},
		},
		want: []observed{{StageSnapshot, 2 * ms}, {StageScheduled, 1 * ms}, {StageBound, 1 * ms}, {StageWork, 3 * ms}},
	}, {
		name: "a forgotten placement has no change to mark or end",
		steps: []spanStep{
			{at: 2 * ms, start: true, snapshot: "s-0"},
			{at: 3 * ms, forget: true},
			{at: 4 * ms, cluster: "a", stage: StageBound, snapshot: "s-0"},
			{at: 5 * ms, done: true},
		},
		want: []observed{{StageSnapshot, 2 * ms}},
	}, {
		name: "a placement Available with no cluster stage is timed from its snapshot",
		steps: []spanStep{
			{at: 2 * ms, start: true, snapshot: "s-0"},
			{at: 12 * ms, done: true},
		},
		want: []observed{{StageSnapshot, 2 * ms}, {StagePlacement, 10 * ms}},
		took: 12 * ms, ok: true,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			origin := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
			var clock time.Time
			var got []observed
			s := NewSpans(logr.Discard())
			s.now = func() time.Time { return clock }
			s.observe = func(st Stage, d time.Duration) { got = append(got, observed{st, d}) }
			key := PlacementKey{Name: "web"}
			var took time.Duration
			var ok bool
			for _, st := range tc.steps {
				clock = origin.Add(st.at)
				switch {
				case st.start:
					s.Start(key, origin.Add(st.began), st.snapshot)
				case st.done:
					took, ok = s.Done(key)
				case st.forget:
					s.Forget(key)
				default:
					s.Mark(key, st.cluster, st.stage, st.snapshot)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("observed %v, want %v", got, tc.want)
			}
			if took != tc.took || ok != tc.ok {
				t.Errorf("Done returned %v, %v; want %v, %v", took, ok, tc.took, tc.ok)
			}
		})
	}
}

func TestNilSpansDoNothing(t *testing.T) {
	var s *Spans
	key := PlacementKey{Name: "web"}
	s.Start(key, time.Now(), "s-0")
	s.Mark(key, "a", StageWork, "s-0")
	s.Forget(key)
	if _, ok := s.Done(key); ok {
		t.Error("a nil Spans found a change")
	}
}

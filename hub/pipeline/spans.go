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
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Stage is a step of one change of a placement through the pipeline, in the
// order a change takes them. A change starts when the placement controller
// writes a new policy or resource snapshot (a new placement, a policy change,
// an edit of a selected object); it ends when the placement is Available.
type Stage string

const (
	// StageSnapshot: the placement controller wrote the new snapshots, timed
	// from the start of the reconcile that found the change.
	StageSnapshot Stage = "snapshot"
	// StageScheduled: the scheduler wrote a cluster's binding, timed from the
	// snapshot (new placements and policy changes only).
	StageScheduled Stage = "scheduled"
	// StageBound: the rollout moved a cluster's binding to the change's
	// resource snapshot, timed from the latest of the snapshot, the cluster's
	// scheduling and another cluster of the change becoming available (what
	// lets a rolling update move the next cluster).
	StageBound Stage = "bound"
	// StageWork: the work generator wrote the cluster's Work, timed from
	// StageBound.
	StageWork Stage = "work"
	// StageApplied: the work generator saw the agent's report that the Work is
	// applied, timed from StageWork. It holds the tunnel to the agent, the
	// apply on the member and the report back.
	StageApplied Stage = "applied"
	// StageAvailable: the work generator saw the agent's report that the
	// Work's resources are available and wrote it to the binding, timed from
	// StageApplied.
	StageAvailable Stage = "available"
	// StagePlacement: the placement controller wrote the placement Available,
	// timed from the last cluster's StageAvailable.
	StagePlacement Stage = "placement"
)

// clusterStages are the per-cluster stages in order.
var clusterStages = []Stage{StageScheduled, StageBound, StageWork, StageApplied, StageAvailable}

var stageSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name: "flotilla_placement_stage_seconds",
	Help: "Time a change of a placement spent in each stage of the pipeline (label stage: snapshot, scheduled, bound, work, applied, available per cluster; placement once), " +
		"each timed from the stage before it (docs/operations/metrics.md).",
	Buckets: prometheus.ExponentialBuckets(0.001, 2, 20),
}, []string{"stage"})

func init() { metrics.Registry.MustRegister(stageSeconds) }

// Spans times each change of each placement through the hub's pipeline, stage
// by stage, for flotilla_placement_stage_seconds and a log line when the
// placement is Available. The controllers of one hub process share one; all
// of them run on the leader, so it sees every stage of a change. A nil *Spans
// does nothing.
//
// The rules:
//   - Start opens a change for a placement, replacing one still open, as
//     soon as the placement controller writes the first snapshot of it.
//   - A cluster's stage is marked once per change, the first time it is
//     reached, and only when it names the change's resource snapshot (or
//     none: scheduling does not depend on it); a mark for an older snapshot,
//     or for a placement with no open change, is ignored.
//   - Each mark is observed at once, timed from the cluster's stage before
//     it (see the Stage constants), so a change that never ends is still
//     seen.
//   - Done closes the change: it observes StagePlacement and logs the change.
//
// It holds one change a placement, with one entry a cluster, until the
// placement is Available or deleted (Forget).
type Spans struct {
	// Log, when set, gets a line at V(1) for every change that ends.
	Log logr.Logger
	// now is time.Now, or a test's clock.
	now func() time.Time
	// observe records one stage's time: flotilla_placement_stage_seconds, or
	// a test's list.
	observe func(Stage, time.Duration)

	mu   sync.Mutex
	open map[PlacementKey]*change
}

// change is one open change of a placement.
type change struct {
	start, snapshot  time.Time
	resourceSnapshot string
	// lastAvailable is when a cluster of this change last became available.
	lastAvailable time.Time
	clusters      map[string]*clusterSpan
	// slowest is the longest time observed for each stage.
	slowest map[Stage]time.Duration
}

// clusterSpan is when one cluster reached each stage of a change.
type clusterSpan struct {
	at map[Stage]time.Time
}

// NewSpans returns an empty Spans.
func NewSpans(log logr.Logger) *Spans {
	return &Spans{Log: log, now: time.Now, open: map[PlacementKey]*change{},
		observe: func(st Stage, d time.Duration) { stageSeconds.WithLabelValues(string(st)).Observe(d.Seconds()) }}
}

// Start opens a change of the placement that a reconcile begun at start found,
// as soon as it wrote a snapshot; resourceSnapshot is the change's latest
// resource snapshot, or "" while the reconcile has not decided it (marks of
// any snapshot count until it does). A second Start of the same reconcile
// (the same start) only names the resource snapshot: the scheduler may have
// created bindings between the policy snapshot and the resource snapshot.
func (s *Spans) Start(key PlacementKey, start time.Time, resourceSnapshot string) {
	if s == nil {
		return
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.open[key]; c != nil && c.start.Equal(start) {
		if resourceSnapshot != "" {
			c.resourceSnapshot = resourceSnapshot
		}
		return
	}
	c := &change{start: start, snapshot: now, resourceSnapshot: resourceSnapshot,
		clusters: map[string]*clusterSpan{}, slowest: map[Stage]time.Duration{}}
	s.open[key] = c
	s.record(c, StageSnapshot, now.Sub(start))
}

// Mark notes that cluster reached stage for the placement's open change, for
// the binding's resource snapshot resourceSnapshot ("" when the stage does not
// depend on it).
func (s *Spans) Mark(key PlacementKey, cluster string, stage Stage, resourceSnapshot string) {
	if s == nil {
		return
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.open[key]
	if c == nil || (resourceSnapshot != "" && c.resourceSnapshot != "" && resourceSnapshot != c.resourceSnapshot) {
		return
	}
	cs := c.clusters[cluster]
	if cs == nil {
		cs = &clusterSpan{at: map[Stage]time.Time{}}
		c.clusters[cluster] = cs
	}
	if _, seen := cs.at[stage]; seen {
		return
	}
	cs.at[stage] = now
	s.record(c, stage, now.Sub(c.from(cs, stage)))
	if stage == StageAvailable {
		c.lastAvailable = now
	}
}

// from is when the stage before stage was reached for the cluster: the rules
// are on the Stage constants.
func (c *change) from(cs *clusterSpan, stage Stage) time.Time {
	from := c.snapshot
	for _, earlier := range clusterStages {
		if earlier == stage {
			break
		}
		if at, ok := cs.at[earlier]; ok && at.After(from) {
			from = at
		}
	}
	if stage == StageBound && c.lastAvailable.After(from) {
		from = c.lastAvailable
	}
	return from
}

// record observes d for the change's stage.
func (s *Spans) record(c *change, stage Stage, d time.Duration) {
	d = max(d, 0)
	s.observe(stage, d)
	if d > c.slowest[stage] {
		c.slowest[stage] = d
	}
}

// Done closes the placement's open change now that it is Available, and
// returns how long the change took from its start (false when none was open).
func (s *Spans) Done(key PlacementKey) (time.Duration, bool) {
	if s == nil {
		return 0, false
	}
	now := s.now()
	s.mu.Lock()
	c := s.open[key]
	delete(s.open, key)
	s.mu.Unlock()
	if c == nil {
		return 0, false
	}
	from := c.lastAvailable
	if from.IsZero() {
		from = c.snapshot
	}
	s.record(c, StagePlacement, now.Sub(from))
	total := now.Sub(c.start)
	if s.Log.GetSink() != nil {
		kv := []any{"placement", key.String(), "took", total.Round(time.Millisecond).String(), "clusters", len(c.clusters)}
		for _, st := range append(append([]Stage{StageSnapshot}, clusterStages...), StagePlacement) {
			if d, ok := c.slowest[st]; ok {
				kv = append(kv, "slowest-"+string(st), d.Round(time.Millisecond).String())
			}
		}
		s.Log.V(1).Info("Placement change rolled out", kv...)
	}
	return total, true
}

// Forget drops the placement's open change (the placement is gone).
func (s *Spans) Forget(key PlacementKey) {
	if s == nil {
		return
	}
	s.mu.Lock()
	delete(s.open, key)
	s.mu.Unlock()
}

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

package framework

import (
	"context"
	"fmt"
)

// pickN selects numberOfClusters clusters: it keeps the clusters the placement is
// on (matching or misplaced), then scales up by picking the best candidates one at
// a time, or scales down by removing misplaced clusters and then the
// lowest-scoring ones one at a time.
func (c *cycle) pickN(ctx context.Context) error {
	n := 0
	if c.policy.NumberOfClusters != nil && *c.policy.NumberOfClusters > 0 {
		n = int(*c.policy.NumberOfClusters)
	}
	c.asked = n

	var kept, misplaced, candidates []*ClusterInfo
	for _, ci := range c.sorted {
		switch c.recs[ci.Index].outcome {
		case outKept:
			kept = append(kept, ci)
			c.state.markSelected(ci)
		case outMisplaced:
			misplaced = append(misplaced, ci)
			c.state.markSelected(ci)
		case outFeasible:
			candidates = append(candidates, ci)
		}
	}
	feasible := make([]*ClusterInfo, 0, len(kept)+len(candidates))
	feasible = append(append(feasible, kept...), candidates...)
	scorers, err := c.score(ctx, feasible)
	if err != nil {
		return err
	}
	l := loop{cycle: c, scorers: scorers}
	for i := range c.fw.entries {
		e := &c.fw.entries[i]
		if !c.dynamic(e) {
			continue
		}
		if e.filter != nil && !c.skipFilter[i] {
			l.filters = append(l.filters, i)
		}
		if !c.skipFilter[i] || !c.skipScore[i] {
			l.reservers = append(l.reservers, i)
		}
	}

	need := n - len(kept) - len(misplaced)
	switch {
	case need > 0:
		if err := l.scaleUp(ctx, need, candidates); err != nil {
			return err
		}
	case need < 0:
		if err := l.scaleDown(ctx, -need, kept, misplaced); err != nil {
			return err
		}
	}
	for _, ci := range candidates {
		r := &c.recs[ci.Index]
		if r.outcome != outFeasible {
			continue
		}
		if r.plugin != "" {
			r.outcome, r.listed = outFiltered, true
		} else {
			r.outcome = outNotPicked
		}
	}
	// Report every selected cluster's score as of the final selection, so that a
	// cycle over the same world reports the same scores.
	for _, ci := range feasible {
		r := &c.recs[ci.Index]
		if r.outcome == outKept || r.outcome == outPicked {
			if r.score, err = c.dynamicScore(ctx, ci, scorers); err != nil {
				return err
			}
		}
	}
	return nil
}

// loop picks or removes clusters one at a time.
type loop struct {
	*cycle
	// filters, scorers and reservers are the entries of the selection-dependent
	// plugins that run in this cycle.
	filters, scorers, reservers []int
}

// scaleUp picks up to need clusters from candidates (sorted by name), one at a
// time: the best-scoring candidate that passes the selection-dependent filters,
// chosen at random (with the cycle's Rand) among equal best scores.
func (l *loop) scaleUp(ctx context.Context, need int, candidates []*ClusterInfo) error {
	batch, err := l.postBatch(ctx, need)
	if err != nil {
		return err
	}
	remaining := append([]*ClusterInfo(nil), candidates...)
	ties := make([]*ClusterInfo, 0, 8)
	for picked := 0; picked < batch && len(remaining) > 0; picked++ {
		var best ClusterScore
		ties = ties[:0]
		for _, ci := range remaining {
			ok, err := l.passes(ctx, ci)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			total, err := l.dynamicScore(ctx, ci, l.scorers)
			if err != nil {
				return err
			}
			l.recs[ci.Index].score = total
			switch cmp := total.Compare(best); {
			case len(ties) == 0 || cmp > 0:
				best = total
				ties = append(ties[:0], ci)
			case cmp == 0:
				ties = append(ties, ci)
			}
		}
		if len(ties) == 0 {
			break
		}
		chosen := ties[0]
		if rnd := l.state.Rand(); rnd != nil && len(ties) > 1 {
			chosen = ties[rnd.Intn(len(ties))]
		}
		l.recs[chosen.Index].outcome = outPicked
		l.state.markSelected(chosen)
		for _, i := range l.reservers {
			l.fw.entries[i].reserve.Reserve(ctx, l.state, l.policy, chosen)
		}
		for i, ci := range remaining {
			if ci == chosen {
				remaining = append(remaining[:i], remaining[i+1:]...)
				break
			}
		}
	}
	return nil
}

// postBatch lets the PostBatch plugins lower the number of clusters to pick.
func (l *loop) postBatch(ctx context.Context, batch int) (int, error) {
	for _, e := range l.fw.entries {
		if e.postBatch == nil {
			continue
		}
		n, st := e.postBatch.PostBatch(ctx, l.state, l.policy, batch)
		switch {
		case st.IsError():
			return 0, fmt.Errorf("plugin %s failed to post-batch: %w", e.name, st.AsError())
		case st.IsSkip():
			continue
		case st.IsRejection():
			return 0, nil
		}
		batch = max(0, min(batch, n))
	}
	return batch, nil
}

// passes runs the selection-dependent filters on a candidate, recording the
// rejection (or clearing an earlier one).
func (l *loop) passes(ctx context.Context, ci *ClusterInfo) (bool, error) {
	r := &l.recs[ci.Index]
	for _, i := range l.filters {
		e := &l.fw.entries[i]
		st := e.filter.Filter(ctx, l.state, l.policy, ci)
		if st.IsError() {
			return false, fmt.Errorf("plugin %s failed to filter cluster %s: %w", e.name, ci.Name, st.AsError())
		}
		if st.IsRejection() {
			r.plugin, r.reason, r.rejection = e.name, "", st
			r.passed &^= 1 << i
			return false, nil
		}
		r.passed |= 1 << i
	}
	r.plugin, r.reason, r.rejection = "", "", nil
	return true, nil
}

// scaleDown removes remove clusters from the selection: misplaced ones first (by
// name), then, one at a time, the lowest-scoring kept one (the last by name among
// equal scores).
func (l *loop) scaleDown(ctx context.Context, remove int, kept, misplaced []*ClusterInfo) error {
	for _, ci := range misplaced {
		if remove == 0 {
			return nil
		}
		r := &l.recs[ci.Index]
		r.outcome, r.reason = outUnscheduled, reasonScaledDownWrong+r.reason
		l.unselect(ctx, ci)
		remove--
	}
	live := append([]*ClusterInfo(nil), kept...)
	for ; remove > 0 && len(live) > 0; remove-- {
		worst := -1
		var worstScore ClusterScore
		for i, ci := range live {
			total, err := l.dynamicScore(ctx, ci, l.scorers)
			if err != nil {
				return err
			}
			l.recs[ci.Index].score = total
			if worst < 0 || total.Compare(worstScore) <= 0 {
				worst, worstScore = i, total
			}
		}
		ci := live[worst]
		r := &l.recs[ci.Index]
		r.outcome, r.reason = outUnscheduled, reasonScaledDown
		l.unselect(ctx, ci)
		live = append(live[:worst], live[worst+1:]...)
	}
	return nil
}

// unselect removes a cluster from the selection and tells the reserve plugins.
func (l *loop) unselect(ctx context.Context, ci *ClusterInfo) {
	l.state.unmarkSelected(ci)
	for _, i := range l.reservers {
		l.fw.entries[i].reserve.Unreserve(ctx, l.state, l.policy, ci)
	}
}

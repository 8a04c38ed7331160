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
	"slices"
	"strings"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// outcome is what a cycle decided about a cluster.
type outcome uint8

const (
	// outFiltered: not selected; a plugin (or the policy) rejected it.
	outFiltered outcome = iota
	// outFeasible: passed every filter; a PickN candidate until picked or not.
	outFeasible
	// outNotPicked: feasible, but PickN selected enough clusters without it.
	outNotPicked
	// outPicked: newly selected.
	outPicked
	// outKept: bound and still matching; kept.
	outKept
	// outMisplaced: bound and no longer matching; kept, flagged (PickN, PickFixed).
	outMisplaced
	// outUnscheduled: bound; the binding goes.
	outUnscheduled
)

func (o outcome) selected() bool { return o == outPicked || o == outKept || o == outMisplaced }

// record is what a cycle learned about one cluster.
type record struct {
	outcome outcome
	// plugin is the plugin that rejected the cluster (FilteredBy), if one did.
	plugin string
	// reason explains a rejection, a mismatch or a removal.
	reason string
	// rejection is the status of the plugin that rejected a cluster without a
	// binding, when reason is empty: its message, formatted only when a decision
	// or the condition's message shows it, is the reason (see explanation).
	rejection *Status
	// notes are the reasons a bound cluster could not take the placement anew
	// (ClusterUnschedulable); it is kept regardless.
	notes []string
	// listed is whether a rejection belongs in the condition's message.
	listed bool
	// evicted is whether a plugin evicted the bound cluster (ClusterEvicted).
	evicted bool
	// static is the sum of the selection-independent scores; score the last total.
	static ClusterScore
	score  ClusterScore
	scored bool
	// passed has bit i set when plugin entry i's PreFilter kept the cluster or its
	// Filter passed it (PassedFilters).
	passed uint64
	// inLocation is whether the cluster is an instance of the chosen Location.
	inLocation bool
	// deferred is whether the cluster is left out by a NarrowingPlugin and not
	// filtered yet: it is filtered out (listed), by a plugin settle finds.
	deferred bool
}

// explanation returns the record's reason: reason, or the rejecting status's
// message.
func (r *record) explanation() string {
	if r.rejection != nil {
		return r.rejection.Message()
	}
	return r.reason
}

// cycle is one run of the framework: the scope its phases share.
type cycle struct {
	fw     *Framework
	in     *CycleInput
	policy *placementv1beta1.PlacementPolicy
	kind   placementv1beta1.PlacementType
	state  *CycleState
	recs   []record
	// buffers hold state's and recs' arrays; RunCycle gives them back to the
	// framework when the cycle is over.
	buffers *buffers

	// sorted are all clusters sorted by name: the order of decisions and of ties.
	sorted []*ClusterInfo
	// view are the clusters under consideration, sorted by name; set by scopeView
	// and preFilter.
	view []*ClusterInfo
	// skipFilter and skipScore say, per plugin entry, that its pre-stage returned
	// Skip; set by preFilter and preScore.
	skipFilter []bool
	skipScore  []bool
	// missing are the names PickFixed lists that are not clusters; set by scopeView.
	missing []string
	// rejectedAll is the message of a PreFilter that rejected every cluster.
	rejectedAll string
	// asked is how many clusters the policy asks for; -1 for PickAll.
	asked int
	// passedNames caches filterNames by mask; set by result.
	passedNames map[uint64][]string
	// filters are the plugin entries whose Filter the filter stage runs, in
	// order; set by filter.
	filters []int
}

func newCycle(f *Framework, in *CycleInput) *cycle {
	policy := in.Policy
	if policy == nil {
		policy = &placementv1beta1.PlacementPolicy{}
	}
	kind := policy.PlacementType
	if kind == "" {
		kind = placementv1beta1.PickAll
	}
	b := f.getBuffers(inputLen(in))
	state := newCycleState(in, b)
	return &cycle{
		fw:         f,
		in:         in,
		policy:     policy,
		kind:       kind,
		state:      state,
		recs:       b.recs,
		buffers:    b,
		skipFilter: make([]bool, len(f.entries)),
		skipScore:  make([]bool, len(f.entries)),
		asked:      -1,
	}
}

// run goes through the stages. Each stage works on c.view and c.recs.
func (c *cycle) run(ctx context.Context) error {
	switch c.kind {
	case placementv1beta1.PickAll, placementv1beta1.PickFixed:
	case placementv1beta1.PickN:
		// Scaling to zero removes the placement everywhere: never do it by accident.
		if c.policy.NumberOfClusters == nil {
			return fmt.Errorf("placement type PickN requires numberOfClusters")
		}
	default:
		return fmt.Errorf("unknown placement type %q", c.kind)
	}
	c.scopeView()
	if err := c.preFilter(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.filter(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	switch c.kind {
	case placementv1beta1.PickN:
		return c.pickN(ctx)
	case placementv1beta1.PickFixed:
		c.asked = len(c.policy.ClusterNames)
		c.selectFeasible()
		return nil
	default:
		c.selectFeasible()
		// PickAll does not rank, but scores explain the clusters' standing.
		_, err := c.score(ctx, c.feasible())
		return err
	}
}

// scopeView sets the clusters under consideration: all of them, or for PickFixed
// the named ones.
func (c *cycle) scopeView() {
	c.sorted = c.state.Clusters()
	if !c.state.nameOrder {
		c.sorted = slices.Clone(c.sorted)
		slices.SortFunc(c.sorted, func(a, b *ClusterInfo) int { return strings.Compare(a.Name, b.Name) })
	}
	all := c.sorted
	if c.kind != placementv1beta1.PickFixed {
		c.view = all
		return
	}
	named := make(map[string]bool, len(c.policy.ClusterNames))
	for _, n := range c.policy.ClusterNames {
		named[n] = false
	}
	c.view = make([]*ClusterInfo, 0, len(named))
	for _, ci := range all {
		if _, ok := named[ci.Name]; ok {
			named[ci.Name] = true
			c.view = append(c.view, ci)
			continue
		}
		r := &c.recs[ci.Index]
		if ci.Bound {
			r.outcome, r.reason = outUnscheduled, reasonNotNamed
		} else {
			r.outcome, r.reason = outFiltered, reasonNotNamed
		}
	}
	for _, n := range c.policy.ClusterNames {
		if !named[n] {
			c.missing = append(c.missing, n)
		}
	}
}

// preFilter runs the PreFilter plugins in order, each on the clusters the earlier
// ones kept under consideration.
func (c *cycle) preFilter(ctx context.Context) error {
	chosen := c.state.ChosenLocation()
	for i, e := range c.fw.entries {
		if e.preFilter == nil {
			continue
		}
		res, st := e.preFilter.PreFilter(ctx, c.state, c.policy, c.view)
		switch {
		case st.IsError():
			return fmt.Errorf("plugin %s failed to prefilter: %w", e.name, st.AsError())
		case st.IsSkip():
			c.skipFilter[i] = true
			continue
		case st.IsRejection():
			for _, ci := range c.view {
				c.reject(ci, e.name, st, false)
			}
			c.view = nil
			c.rejectedAll = st.Message()
			return nil
		}
		if res == nil || res.Includes == nil {
			continue
		}
		chose := chosen == "" && c.state.ChosenLocation() != ""
		chosen = c.state.ChosenLocation()
		kept := c.view[:0:0]
		var mismatch *Status // one for every cluster the plugin leaves out
		for _, ci := range c.view {
			if res.Includes(ci) {
				kept = append(kept, ci)
				r := &c.recs[ci.Index]
				r.passed |= 1 << i
				r.inLocation = r.inLocation || chose
				continue
			}
			if mismatch == nil {
				mismatch = NewStatus(ClusterMismatch, res.Reason)
			}
			c.reject(ci, e.name, mismatch, false)
		}
		c.view = kept
	}
	return nil
}

// dynamic reports whether the entry's Filter and Score depend on the selection so
// far; in PickN cycles they run in the pick loop.
func (c *cycle) dynamic(e *entry) bool {
	return e.reserve != nil && c.kind == placementv1beta1.PickN
}

// filter runs the selection-independent filters on every cluster under
// consideration.
func (c *cycle) filter(ctx context.Context) error {
	filters := make([]int, 0, len(c.fw.entries))
	for i := range c.fw.entries {
		e := &c.fw.entries[i]
		if e.filter != nil && !c.skipFilter[i] && !c.dynamic(e) {
			filters = append(filters, i)
		}
	}
	c.filters = filters
	candidates, narrowed := c.candidates(ctx)
	next := 0 // the first candidate not behind the cluster
	for _, ci := range c.view {
		if narrowed && !ci.Bound {
			for next < len(candidates) && int(candidates[next]) < ci.Index {
				next++
			}
			if next == len(candidates) || int(candidates[next]) != ci.Index {
				r := &c.recs[ci.Index]
				r.outcome, r.listed, r.deferred = outFiltered, true, true
				continue
			}
		}
		if err := c.filterCluster(ctx, ci); err != nil {
			return err
		}
	}
	return nil
}

// filterCluster runs the filters on one cluster.
func (c *cycle) filterCluster(ctx context.Context, ci *ClusterInfo) error {
	r := &c.recs[ci.Index]
	if ci.Bound {
		r.outcome = outKept
	} else {
		r.outcome = outFeasible
	}
	for _, i := range c.filters {
		e := &c.fw.entries[i]
		st := e.filter.Filter(ctx, c.state, c.policy, ci)
		if st.IsError() {
			return fmt.Errorf("plugin %s failed to filter cluster %s: %w", e.name, ci.Name, st.AsError())
		}
		// A bound cluster already selected is what the plugin expects: it passed.
		if !st.IsRejection() || (ci.Bound && st.Code() == ClusterAlreadySelected) {
			r.passed |= 1 << i
			continue
		}
		c.reject(ci, e.name, st, true)
		if !ci.Bound {
			break
		}
	}
	return nil
}

// candidates returns the positions, ascending, of the only clusters without a
// binding that the filter stage need filter, when a NarrowingPlugin names them:
// the cycle reads a fleet view (positions are cluster indexes), and the plugin's
// Filter and every one before it depend on nothing that changes during the cycle
// (no ReservePlugin), so that settle, filtering the others later, finds what the
// filter stage would have.
func (c *cycle) candidates(ctx context.Context) ([]int32, bool) {
	fleet := c.state.Fleet()
	if fleet == nil {
		return nil, false
	}
	for _, i := range c.filters {
		e := &c.fw.entries[i]
		if e.reserve != nil {
			return nil, false
		}
		if e.narrowing != nil {
			return e.narrowing.Candidates(ctx, c.state, c.policy, fleet)
		}
	}
	return nil, false
}

// settle filters the clusters the filter stage left out as no candidates of a
// NarrowingPlugin wherever the result shows their decisions: among the first
// CycleInput.MaxUnselectedDecisions unselected clusters (all of them without a
// bound), and among the first MaxMessageClusters filtered clusters the
// condition's message lists. They are unselected and listed whoever rejects
// them, so the counts come out the same as if every cluster had been filtered.
func (c *cycle) settle(ctx context.Context) error {
	decisions := c.in.MaxUnselectedDecisions
	if decisions <= 0 {
		decisions = len(c.sorted)
	}
	listed := c.fw.opts.MaxMessageClusters
	unselected, messaged := 0, 0
	for _, ci := range c.sorted {
		if unselected >= decisions && messaged >= listed {
			return nil
		}
		r := &c.recs[ci.Index]
		if r.deferred {
			r.deferred = false
			if err := c.filterCluster(ctx, ci); err != nil {
				return err
			}
			if r.outcome != outFiltered || !r.listed {
				return fmt.Errorf("cluster %s is no candidate, yet no filter rejects it", ci.Name)
			}
		}
		if !r.outcome.selected() {
			unselected++
		}
		if r.outcome == outFiltered && r.listed {
			messaged++
		}
	}
	return nil
}

// reject records a rejection of a cluster by a plugin. For a cluster without a
// binding it is final, and its reason is formatted only when it is shown. For a bound cluster, ClusterUnschedulable is noted (the
// cluster is kept), ClusterMismatch means it no longer matches, ClusterEvicted
// means it must go whatever the placement type (it overrides a mismatch), and
// ClusterAlreadySelected is expected.
func (c *cycle) reject(ci *ClusterInfo, plugin string, st *Status, listed bool) {
	r := &c.recs[ci.Index]
	if !ci.Bound {
		r.outcome, r.plugin, r.reason, r.rejection, r.listed = outFiltered, plugin, "", st, listed
		return
	}
	code, msg := st.Code(), st.Message()
	if r.outcome == outFiltered {
		r.outcome = outKept // a bound cluster is kept unless it no longer matches
	}
	switch code {
	case ClusterUnschedulable:
		r.notes = append(r.notes, msg)
	case ClusterEvicted:
		if r.outcome == outUnscheduled && r.evicted {
			return // the first eviction explains it
		}
		r.outcome, r.plugin, r.reason, r.evicted = outUnscheduled, plugin, reasonEvicted+msg, true
	case ClusterMismatch:
		if r.outcome == outMisplaced || r.outcome == outUnscheduled {
			return // the first mismatch explains it
		}
		r.plugin = plugin
		if c.kind == placementv1beta1.PickAll {
			r.outcome, r.reason = outUnscheduled, "no longer matches the policy: "+msg
		} else {
			r.outcome, r.reason = outMisplaced, msg
		}
	}
}

// selectFeasible selects every feasible cluster (PickAll, PickFixed).
func (c *cycle) selectFeasible() {
	for _, ci := range c.view {
		r := &c.recs[ci.Index]
		if r.outcome == outFeasible {
			r.outcome = outPicked
		}
		if r.outcome.selected() {
			c.state.markSelected(ci)
		}
	}
}

// feasible returns the clusters that can be ranked: kept ones that still match,
// and candidates that passed every filter (or were picked already).
func (c *cycle) feasible() []*ClusterInfo {
	out := make([]*ClusterInfo, 0, len(c.view))
	for _, ci := range c.view {
		switch c.recs[ci.Index].outcome {
		case outKept, outFeasible, outPicked:
			out = append(out, ci)
		}
	}
	return out
}

// score runs PreScore and the selection-independent Score plugins on clusters and
// records their static scores. It returns the selection-dependent score plugins.
func (c *cycle) score(ctx context.Context, clusters []*ClusterInfo) ([]int, error) {
	var static, dynamic []int
	for i := range c.fw.entries {
		e := &c.fw.entries[i]
		if e.preScore != nil {
			st := e.preScore.PreScore(ctx, c.state, c.policy, clusters)
			if st.IsError() {
				return nil, fmt.Errorf("plugin %s failed to prescore: %w", e.name, st.AsError())
			}
			if st.IsSkip() {
				c.skipScore[i] = true
			}
		}
		if e.score == nil || c.skipScore[i] {
			continue
		}
		if c.dynamic(e) {
			dynamic = append(dynamic, i)
		} else {
			static = append(static, i)
		}
	}
	for _, ci := range clusters {
		r := &c.recs[ci.Index]
		var total ClusterScore
		for _, i := range static {
			e := &c.fw.entries[i]
			s, st := e.score.Score(ctx, c.state, c.policy, ci)
			if !st.IsSuccess() {
				return nil, fmt.Errorf("plugin %s failed to score cluster %s: %s", e.name, ci.Name, st.Message())
			}
			total = total.Add(s)
		}
		r.static, r.score, r.scored = total, total, true
	}
	return dynamic, nil
}

// dynamicScore returns the cluster's static score plus the selection-dependent
// scores as of now.
func (c *cycle) dynamicScore(ctx context.Context, ci *ClusterInfo, scorers []int) (ClusterScore, error) {
	total := c.recs[ci.Index].static
	for _, i := range scorers {
		e := &c.fw.entries[i]
		s, st := e.score.Score(ctx, c.state, c.policy, ci)
		if !st.IsSuccess() {
			return total, fmt.Errorf("plugin %s failed to score cluster %s: %s", e.name, ci.Name, st.Message())
		}
		total = total.Add(s)
	}
	return total, nil
}

// ReasonKept is the decision's reason for a cluster the placement is already on
// and stays on, with nothing else to say.
const ReasonKept = "kept: the placement is already on the cluster"

// Picked reports whether a decision's reason is one the framework gives a
// cluster it picks ("picked: ...").
func Picked(reason string) bool { return strings.HasPrefix(reason, "picked: ") }

// Reasons the framework itself gives.
const (
	reasonNotNamed        = "not named in the policy's clusterNames"
	reasonMissing         = "named in the policy's clusterNames, but no such member cluster exists"
	reasonPickedAll       = "picked: matches the scheduling policy"
	reasonPickedN         = "picked: among the best-scoring clusters that match the scheduling policy"
	reasonPickedFixed     = "picked: named in the policy's clusterNames"
	reasonKept            = ReasonKept
	reasonNotPicked       = "not picked: the policy's number of clusters was reached with clusters scoring as high or higher"
	reasonScaledDown      = "removed to scale down to numberOfClusters: among the lowest-scoring clusters"
	reasonScaledDownWrong = "removed to scale down to numberOfClusters: it no longer matches the policy: "
	reasonEvicted         = "removed: "
)

func (c *cycle) keptReason(r *record) string {
	if len(r.notes) == 0 {
		return reasonKept
	}
	return reasonKept + "; it could not take the placement anew: " + strings.Join(r.notes, "; ")
}

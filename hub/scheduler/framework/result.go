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
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// result turns the cycle's records into the decisions, the selection and the
// Scheduled condition.
func (c *cycle) result() CycleResult {
	res := CycleResult{ChosenLocation: c.state.ChosenLocation()}
	scored, selected := 0, 0
	for i := range c.recs {
		if c.recs[i].scored {
			scored++
		}
		if c.recs[i].outcome.selected() {
			selected++
		}
	}
	// limit bounds the decisions about unselected clusters (besides the
	// unscheduled ones); -1: no bound.
	limit, decisions := -1, len(c.sorted)+len(c.missing)
	if c.in.MaxUnselectedDecisions > 0 {
		limit = c.in.MaxUnselectedDecisions
		decisions = min(decisions, selected+limit)
		scored = min(scored, decisions)
	}
	scores := newAPIScores(scored)
	c.passedNames = map[uint64][]string{}
	res.Decisions = make([]placementv1beta1.ClusterDecision, 0, decisions)
	for _, ci := range c.sorted {
		r := &c.recs[ci.Index]
		if !r.outcome.selected() {
			continue
		}
		res.Selected = append(res.Selected, ci.Name)
		if r.outcome == outMisplaced {
			if res.Misplaced == nil {
				res.Misplaced = map[string]string{}
			}
			res.Misplaced[ci.Name] = "no longer matches the policy: " + r.reason
		}
		res.Decisions = append(res.Decisions, c.decision(ci, r, scores))
	}
	unselected := 0
	for _, ci := range c.sorted {
		r := &c.recs[ci.Index]
		if r.outcome.selected() {
			continue
		}
		if r.outcome == outUnscheduled {
			res.Unschedule = append(res.Unschedule, ci.Name)
		} else if limit >= 0 && unselected >= limit {
			continue
		}
		unselected++
		res.Decisions = append(res.Decisions, c.decision(ci, r, scores))
	}
	for _, name := range c.missing {
		if limit >= 0 && unselected >= limit {
			break
		}
		unselected++
		res.Decisions = append(res.Decisions, placementv1beta1.ClusterDecision{ClusterName: name, Reason: reasonMissing})
	}
	if len(c.state.gone) > 0 {
		res.Unschedule = append(res.Unschedule, c.state.gone...)
		slices.Sort(res.Unschedule)
	}
	res.Status, res.Reason, res.Message = c.condition(&res)
	return res
}

// decision explains the cycle's decision about one cluster.
func (c *cycle) decision(ci *ClusterInfo, r *record, scores *apiScores) placementv1beta1.ClusterDecision {
	d := placementv1beta1.ClusterDecision{ClusterName: ci.Name, Selected: r.outcome.selected(), PassedFilters: c.filterNames(r.passed)}
	if r.inLocation {
		d.Location = c.state.ChosenLocation()
	}
	if r.scored {
		d.ClusterScore = scores.convert(r.score)
	}
	switch r.outcome {
	case outPicked:
		switch c.kind {
		case placementv1beta1.PickN:
			d.Reason = reasonPickedN
		case placementv1beta1.PickFixed:
			d.Reason = reasonPickedFixed
		default:
			d.Reason = reasonPickedAll
		}
	case outKept:
		d.Reason = c.keptReason(r)
	case outMisplaced:
		d.Reason = "misplaced: it no longer matches the policy (" + r.reason + "); kept, as a placed workload is not moved"
		d.FilteredBy = r.plugin
	case outNotPicked, outFeasible:
		d.Reason = reasonNotPicked
	default: // outFiltered, outUnscheduled
		d.Reason = r.explanation()
		d.FilteredBy = r.plugin
	}
	return d
}

// filterNames returns the names of the plugin entries whose bits are set, in
// order; decisions with the same set share one slice.
func (c *cycle) filterNames(mask uint64) []string {
	if mask == 0 {
		return nil
	}
	if names, ok := c.passedNames[mask]; ok {
		return names
	}
	var names []string
	for i := range c.fw.entries {
		if mask&(1<<i) != 0 {
			names = append(names, c.fw.entries[i].name)
		}
	}
	c.passedNames[mask] = names
	return names
}

// condition returns the Scheduled condition's status, reason and message.
func (c *cycle) condition(res *CycleResult) (metav1.ConditionStatus, string, string) {
	n := len(res.Selected)
	status, reason := metav1.ConditionTrue, placementv1beta1.ReasonSchedulingPolicyFulfilled
	switch {
	case c.asked < 0 && n == 0, c.asked > 0 && n == 0:
		status, reason = metav1.ConditionFalse, placementv1beta1.ReasonScheduleFailed
	case c.asked > 0 && n < c.asked:
		status, reason = metav1.ConditionFalse, placementv1beta1.ReasonSchedulingPolicyUnfulfilled
	}

	var b strings.Builder
	if res.ChosenLocation != "" {
		fmt.Fprintf(&b, "in Location %s: ", res.ChosenLocation)
	}
	if c.asked < 0 {
		fmt.Fprintf(&b, "%d %s selected", n, plural(n, "cluster", "clusters"))
	} else {
		fmt.Fprintf(&b, "%d of %d %s selected", n, c.asked, plural(c.asked, "cluster", "clusters"))
	}
	if len(c.state.Clusters()) == 0 {
		b.WriteString(": there are no member clusters")
	}
	if c.rejectedAll != "" {
		b.WriteString(": " + c.rejectedAll)
	}
	limit := c.fw.opts.MaxMessageClusters
	listed, more := 0, 0
	// shown reports whether the next cluster left out is listed by name (and
	// its reason formatted), or only counted.
	shown := func() bool {
		if listed < limit {
			listed++
			return true
		}
		more++
		return false
	}
	for _, ci := range c.sorted {
		if r := &c.recs[ci.Index]; r.outcome == outFiltered && r.listed && shown() {
			b.WriteString("; " + ci.Name + ": " + r.explanation())
		}
	}
	for _, name := range c.missing {
		if shown() {
			b.WriteString("; " + name + ": no such member cluster")
		}
	}
	if more > 0 {
		fmt.Fprintf(&b, "; and %d more %s left out", more, plural(more, "cluster", "clusters"))
	}
	if len(res.Misplaced) > 0 {
		names := make([]string, 0, len(res.Misplaced))
		for name := range res.Misplaced {
			names = append(names, name)
		}
		slices.Sort(names)
		fmt.Fprintf(&b, "; %d misplaced (kept, not moved): %s", len(names), strings.Join(names, ", "))
	}
	return status, reason, b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// failedResult is the result of a cycle that could not evaluate the policy.
func failedResult(err error) CycleResult {
	return CycleResult{
		Status:  metav1.ConditionFalse,
		Reason:  placementv1beta1.ReasonScheduleFailed,
		Message: "failed to evaluate the scheduling policy: " + err.Error(),
	}
}

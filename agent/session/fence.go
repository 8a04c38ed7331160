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

package session

import (
	"context"
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// fenceCandidate is a Work the agent holds, as dueForFencing sees it.
type fenceCandidate struct {
	name string
	// fencing is the Work's spec.fencing (nil: not fenced).
	fencing *placementv1beta1.FencingPolicy
	// fenced is set once the agent stopped its workloads, until the hub's
	// Work is applied again.
	fenced bool
}

// dueForFencing returns the Works to fence now, sorted by name: those with
// spec.fencing, not fenced yet, whose lease has run out since lastExchange —
// the moment the agent sent the last heartbeat the hub acknowledged (or the
// Runner started). Both times come from the agent's monotonic clock, so a
// wall-clock step changes nothing. A Work is due once now - lastExchange is
// more than its lease; the hub counts the same lease from the moment it
// received a heartbeat, which is later than the moment the agent sent it, and
// adds its --fencing-margin.
func dueForFencing(works []fenceCandidate, lastExchange, now time.Time) []fenceCandidate {
	var out []fenceCandidate
	cutOff := now.Sub(lastExchange)
	for _, w := range works {
		if w.fencing == nil || w.fenced || cutOff <= w.fencing.Lease() {
			continue
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// exchanged records that the hub acknowledged a heartbeat sent at sent.
func (r *Runner) exchanged(sent time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sent.After(r.lastExchange) {
		r.lastExchange = sent
	}
}

// fenceLoop checks every FenceCheckInterval whether fenced Works are due and
// stops their workloads.
func (r *Runner) fenceLoop(ctx context.Context) {
	t := time.NewTicker(r.opts.FenceCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.fenceDue(ctx, time.Now())
	}
}

// fenceDue fences the Works due at now (dueForFencing). A Work fenced is
// not rechecked (its objects are meant to be stopped), is listed without a
// hash in the next inventory so that the hub sends it again, and is applied
// in full when it does; its status carries the Fenced condition until then.
func (r *Runner) fenceDue(ctx context.Context, now time.Time) {
	r.mu.Lock()
	last := r.lastExchange
	candidates := make([]fenceCandidate, 0, len(r.works))
	for name, st := range r.works {
		if st.work == nil || st.appliedHash == "" {
			continue
		}
		candidates = append(candidates, fenceCandidate{name: name, fencing: st.work.Spec.Fencing, fenced: st.fenced})
	}
	r.mu.Unlock()
	for _, c := range dueForFencing(candidates, last, now) {
		action := c.fencing.ActionOrDefault()
		cutOff := now.Sub(last).Round(time.Second)
		fenced, err := r.opts.Applier.Fence(ctx, c.name, action)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			// Tried again at the next check.
			r.log.Error(err, "Failed to fence a Work cut off from the hub; retrying", "work", c.name, "action", action)
			continue
		}
		r.log.Info("Cut off from the hub for longer than the fencing lease: stopped the Work's workloads",
			"work", c.name, "action", action, "cutOffFor", cutOff.String(), "lease", c.fencing.Lease().String(),
			"stopped", len(fenced.Stopped), "left", len(fenced.Left))
		r.opts.Metrics.workFenced(string(action))
		r.mu.Lock()
		if st := r.works[c.name]; st != nil {
			st.fenced = true
			st.complete = false
			if st.status != nil {
				status := st.status.DeepCopy()
				conditions.Set(&status.Conditions, placementv1beta1.ConditionFenced, metav1.ConditionTrue, placementv1beta1.ReasonFencedCutOff,
					fmt.Sprintf("the agent was cut off from the hub for %s, longer than the fencing lease of %s, and applied %s to %d objects at %s; the Work is applied again when the hub sends it",
						cutOff, c.fencing.Lease(), action, len(fenced.Stopped), now.UTC().Format(time.RFC3339)), st.work.Generation)
				st.status = status
			}
		}
		r.mu.Unlock()
	}
}

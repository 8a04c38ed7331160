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

// restoredWork is a fenced Work the agent knows only from its record: it
// restarted and has had no session since, so the hub has not sent the Work.
type restoredWork struct {
	fencing *placementv1beta1.FencingPolicy
	fenced  bool
}

// restoredExchange is when a restarted agent counts its fencing leases from:
// the exchange the previous process saved on the member, if it is earlier than
// this process's start, else the start. saved is a wall-clock time; the
// result is on now's clock (monotonic), now - (wall now - saved), so that a
// wall-clock step after the restart changes nothing. A saved time after now
// (a clock stepped back) is not trusted: the start counts.
func restoredExchange(startedAt, saved, now time.Time) time.Time {
	if saved.IsZero() {
		return startedAt
	}
	ago := now.Round(0).Sub(saved)
	if ago < 0 {
		return startedAt
	}
	if t := now.Add(-ago); t.Before(startedAt) {
		return t
	}
	return startedAt
}

// exchangeDue says whether the last exchange should be saved on the member:
// only while the agent holds fenced Works (minLease is the shortest of their
// leases, 0 with none), and once it is a quarter of that lease newer than the
// one saved. A saved time is never later than the real last exchange, so a
// restarted agent fences at most a quarter of the lease early, never late.
func exchangeDue(last, saved time.Time, minLease time.Duration) bool {
	if minLease <= 0 {
		return false
	}
	return last.Round(0).Sub(saved) >= minLease/4
}

// fenceLoop checks every FenceCheckInterval whether fenced Works are due and
// stops their workloads. Until it has, it reads the records of the Works the
// member holds and the exchange a previous agent process saved (restore), so
// that an agent restarted while cut off fences too, counting from that
// exchange; and while it holds fenced Works it saves the last exchange.
func (r *Runner) fenceLoop(ctx context.Context) {
	t := time.NewTicker(r.opts.FenceCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.restore(ctx)
		r.fenceDue(ctx, time.Now())
		r.saveExchange(ctx)
	}
}

// restore reads, once, the records of the Works the member holds and the
// exchange saved by an earlier agent process, unless a session's inventory
// has already taken over (inventoryOf). A failure is retried at the next
// check.
func (r *Runner) restore(ctx context.Context) {
	r.mu.Lock()
	done := r.restoreDone
	r.mu.Unlock()
	if done {
		return
	}
	records, err := r.opts.Applier.Inventory(ctx)
	if err != nil {
		r.log.V(1).Info("Cannot read the Work records yet to count fencing leases across a restart; retrying", "error", err.Error())
		return
	}
	saved, err := r.opts.Applier.LastExchange(ctx)
	if err != nil {
		r.log.V(1).Info("Cannot read the last exchange with the hub yet; retrying", "error", err.Error())
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.restoreDone {
		return
	}
	r.restoreDone = true
	restored := map[string]*restoredWork{}
	for _, rec := range records {
		if rec.Hash == "" || rec.Work == nil || rec.Work.Spec.Fencing == nil || r.works[rec.WorkName] != nil {
			continue
		}
		restored[rec.WorkName] = &restoredWork{fencing: rec.Work.Spec.Fencing.DeepCopy()}
	}
	r.restored = restored
	r.savedExchange = saved
	if r.lastExchange.Equal(r.startedAt) {
		r.lastExchange = restoredExchange(r.startedAt, saved, time.Now())
	}
	if len(restored) > 0 {
		r.log.Info("Holding fenced Works from before the agent started; counting their leases from the last exchange with the hub",
			"works", len(restored), "lastExchange", r.lastExchange.Round(0), "saved", !saved.IsZero())
	}
}

// saveExchange saves the last exchange on the member when exchangeDue says so.
func (r *Runner) saveExchange(ctx context.Context) {
	r.mu.Lock()
	var minLease time.Duration
	for _, st := range r.works {
		if st.work != nil && st.work.Spec.Fencing != nil && (minLease == 0 || st.work.Spec.Fencing.Lease() < minLease) {
			minLease = st.work.Spec.Fencing.Lease()
		}
	}
	for _, rw := range r.restored {
		if minLease == 0 || rw.fencing.Lease() < minLease {
			minLease = rw.fencing.Lease()
		}
	}
	last, saved := r.lastExchange, r.savedExchange
	r.mu.Unlock()
	if !exchangeDue(last, saved, minLease) {
		return
	}
	if err := r.opts.Applier.SaveLastExchange(ctx, last.Round(0)); err != nil {
		if ctx.Err() == nil {
			r.log.V(1).Info("Failed to save the last exchange with the hub; retrying", "error", err.Error())
		}
		return
	}
	r.mu.Lock()
	if last.After(r.savedExchange) {
		r.savedExchange = last.Round(0)
	}
	r.mu.Unlock()
}

// fenceDue fences the Works due at now (dueForFencing). A Work the session
// holds is fenced by a worker (opFence), in turn with the Work's applies and
// rechecks: a recheck that ran beside the fencing would see the replicas it
// set to zero as drift and put them back. A Work known only from its record
// (restored) is fenced here: nothing else acts on it until a session. A Work
// fenced is not rechecked (its objects are meant to be stopped), is listed
// without a hash in the next inventory so that the hub sends it again, and is
// applied in full when it does; its status carries the Fenced condition until
// then.
func (r *Runner) fenceDue(ctx context.Context, now time.Time) {
	r.mu.Lock()
	last := r.lastExchange
	candidates := make([]fenceCandidate, 0, len(r.works)+len(r.restored))
	for name, st := range r.works {
		if st.work == nil || st.appliedHash == "" {
			continue
		}
		candidates = append(candidates, fenceCandidate{name: name, fencing: st.work.Spec.Fencing, fenced: st.fenced})
	}
	for name, rw := range r.restored {
		if r.works[name] == nil {
			candidates = append(candidates, fenceCandidate{name: name, fencing: rw.fencing, fenced: rw.fenced})
		}
	}
	r.mu.Unlock()
	cutOff := now.Sub(last).Round(time.Second)
	for _, c := range dueForFencing(candidates, last, now) {
		r.mu.Lock()
		st := r.works[c.name]
		switch {
		case st == nil:
			r.mu.Unlock()
			r.fence(ctx, c.name, c.fencing, cutOff, now)
			continue
		case st.next == opFence, st.next == opApply && st.hubSent, st.next == opRemove:
			// Already asked, or the hub sent something meanwhile.
		default:
			st.next, st.fenceCutOff = opFence, cutOff
			r.mu.Unlock()
			r.queue.Add(c.name)
			continue
		}
		r.mu.Unlock()
	}
}

// fence stops the workloads of the named Work and records that it did.
func (r *Runner) fence(ctx context.Context, name string, fencing *placementv1beta1.FencingPolicy, cutOff time.Duration, now time.Time) {
	action := fencing.ActionOrDefault()
	fenced, err := r.opts.Applier.Fence(ctx, name, action)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		// Tried again at the next check.
		r.log.Error(err, "Failed to fence a Work cut off from the hub; retrying", "work", name, "action", action)
		return
	}
	r.log.Info("Cut off from the hub for longer than the fencing lease: stopped the Work's workloads",
		"work", name, "action", action, "cutOffFor", cutOff.String(), "lease", fencing.Lease().String(),
		"stopped", len(fenced.Stopped), "left", len(fenced.Left))
	r.opts.Metrics.workFenced(string(action))
	r.mu.Lock()
	defer r.mu.Unlock()
	if rw := r.restored[name]; rw != nil && r.works[name] == nil {
		rw.fenced = true
	}
	if st := r.works[name]; st != nil {
		st.fenced = true
		st.complete = false
		if st.status != nil && st.work != nil {
			status := st.status.DeepCopy()
			conditions.Set(&status.Conditions, placementv1beta1.ConditionFenced, metav1.ConditionTrue, placementv1beta1.ReasonFencedCutOff,
				fmt.Sprintf("the agent was cut off from the hub for %s, longer than the fencing lease of %s, and applied %s to %d objects at %s; the Work is applied again when the hub sends it",
					cutOff, fencing.Lease(), action, len(fenced.Stopped), now.UTC().Format(time.RFC3339)), st.work.Generation)
			st.status = status
		}
	}
}

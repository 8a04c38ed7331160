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
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/agent/apply"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
	"github.com/flotilla-io/flotilla/pkg/workhash"
)

// op is what is to be done next for a Work. A newer apply or remove replaces
// one that has not started; a recheck never replaces anything.
type op int

const (
	opNone op = iota
	// opApply applies the Work's desired spec (workState.work).
	opApply
	// opRemove removes what the Work applied.
	opRemove
	// opRecheck re-evaluates the status of the applied spec.
	opRecheck
	// opFence stops the Work's workloads: the agent has been cut off from the
	// hub for longer than its fencing lease (fence.go).
	opFence
)

// workState is what the agent knows of one Work. The Runner's mu guards it.
type workState struct {
	name string

	// work is the newest spec the hub sent and hash its hash
	// (workhash.Of); nil and "" once the hub deleted the Work.
	work *placementv1beta1.Work
	hash string

	// next is what a worker does next for the Work.
	next op

	// appliedHash is the hash of the spec last applied (or found unchanged);
	// "" if none was in this process.
	appliedHash string
	// complete is true when that apply returned no error and every manifest
	// was applied.
	complete bool
	// status is the last status of the spec appliedHash names.
	status *placementv1beta1.WorkStatus
	// sent is the statusKey of the status last reported in the current
	// session; "" if none.
	sent string
	// fenced is set once the agent stopped the Work's workloads because it
	// was cut off from the hub for longer than spec.fencing's lease
	// (fence.go); it is cleared when the hub's Work is applied again.
	fenced bool
	// hubSent is set when the hub sent the spec to apply next (an upsert),
	// and cleared when a worker takes it: only such an apply lifts fencing.
	hubSent bool
	// fenceCutOff is how long the agent had been cut off when opFence was
	// asked for (for its log line and condition).
	fenceCutOff time.Duration
}

// workLoop states the Works the member holds, then takes the hub's upserts
// and deletes, handing them to the workers.
func (r *Runner) workLoop(ctx context.Context, c *conn) error {
	inventory, err := r.inventory(ctx, c)
	if err != nil {
		return err
	}
	if err := c.s.Work().Send(inventory); err != nil {
		return fmt.Errorf("failed to send the Work inventory: %w", err)
	}
	c.log.V(1).Info("Sent the Work inventory", "works", len(inventory.Items))
	for {
		m, err := c.s.Work().Recv()
		if err != nil {
			return err
		}
		switch m := m.(type) {
		case tunnel.WorkUpsert:
			r.upsert(c, m)
		case tunnel.WorkDelete:
			c.log.V(1).Info("The hub deleted a Work", "work", m.Name)
			r.enqueue(m.Name, opRemove, nil, "")
		case tunnel.WorkSyncDone:
			c.log.Info("In sync with the hub")
			r.reportAll()
			if r.opts.Upsync != nil {
				r.opts.Upsync.Resync()
			}
		default:
			c.log.V(1).Info("Ignoring a work message", "type", m.FrameType().String())
		}
	}
}

// inventory lists the Works the member holds, retrying until it can (the
// member's API server may be down; heartbeats go on meanwhile and say so).
// Each Work is listed with the hash of the spec this agent last applied, or,
// for Works it has not applied since it started, the hash of its record when
// the record can be resumed (see inventoryOf).
func (r *Runner) inventory(ctx context.Context, c *conn) (tunnel.WorkInventory, error) {
	delay := 500 * time.Millisecond
	for {
		records, err := r.opts.Applier.Inventory(ctx)
		if err == nil {
			inv, resumed := r.inventoryOf(records)
			for _, name := range resumed {
				r.queue.Add(name)
			}
			if len(resumed) > 0 {
				c.log.Info("Resuming the Works applied before the agent started", "works", len(resumed))
			}
			return inv, nil
		}
		c.log.Error(err, "Failed to list the Works on the member; retrying", "delay", delay)
		select {
		case <-ctx.Done():
			return tunnel.WorkInventory{}, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}

// inventoryOf states the Works the records name, and returns the names of the
// Works it resumes. The rules:
//   - A Work whose spec this process holds and has applied is listed with that
//     spec's hash.
//   - A Work this process knows nothing of (it just started) whose record is
//     resumable (apply.Record.Resumable: applied in full, and the record keeps
//     the Work of that hash) is listed with the record's hash, so the hub does
//     not send it again, and resumed: queued to be applied from the record's
//     Work, which, unchanged, is only re-evaluated (watches, drift, status).
//   - Any other Work (an apply that did not finish, a record that keeps no
//     Work, a Work fenced from its record while the agent had no session
//     since it started) is listed without a hash: the hub sends it again.
//
// Both sides hash the same thing: the hub's WorkUpsert hash and the record's
// are workhash.Of the Work's spec.
func (r *Runner) inventoryOf(records []apply.Record) (tunnel.WorkInventory, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = make(map[string]apply.Record, len(records))
	inv := tunnel.WorkInventory{Items: make([]tunnel.WorkRef, 0, len(records))}
	var resumed []string
	restored := r.restored
	// From now on the hub decides about every Work (fence.go).
	r.restored, r.restoreDone = nil, true
	for _, rec := range records {
		ref := tunnel.WorkRef{Name: rec.WorkName}
		st := r.works[rec.WorkName]
		switch {
		case restored[rec.WorkName] != nil && restored[rec.WorkName].fenced:
			// Fenced from its record: listed without a hash, so that the hub
			// sends it again if it still places it there, and not resumed,
			// which would undo the fencing before the hub decided.
		case st != nil && st.appliedHash != "" && st.work != nil && !st.fenced:
			ref.Hash = st.appliedHash
			ref.Namespace = st.work.Namespace
		case st == nil && rec.Resumable():
			ref.Hash = rec.Hash
			ref.Namespace = rec.Work.Namespace
			r.works[rec.WorkName] = &workState{name: rec.WorkName, work: rec.Work, hash: rec.Hash, next: opApply}
			resumed = append(resumed, rec.WorkName)
		}
		// The session keeps the Work in workState; the record's copy is not needed.
		rec.Work = nil
		r.records[rec.WorkName] = rec
		inv.Items = append(inv.Items, ref)
	}
	return inv, resumed
}

// upsert decodes a Work the hub sent and queues it to be applied.
func (r *Runner) upsert(c *conn, m tunnel.WorkUpsert) {
	work := &placementv1beta1.Work{}
	if err := json.Unmarshal(m.Work, work); err != nil {
		c.log.Error(err, "Ignoring a Work that does not decode", "work", m.Name, "hash", m.Hash)
		return
	}
	if work.Name != m.Name {
		if work.Name != "" {
			c.log.Info("The Work's name differs from the name it was sent under; using the latter", "work", m.Name, "workName", work.Name)
		}
		work.Name = m.Name
	}
	hash := workhash.Of(&work.Spec)
	if hash != m.Hash {
		c.log.Info("The hub's hash of a Work differs from the hash of its spec; using the spec's", "work", m.Name, "hubHash", m.Hash, "hash", hash)
	}
	c.log.V(1).Info("The hub sent a Work", "work", m.Name, "hash", hash)
	r.enqueue(m.Name, opApply, work, hash)
}

// enqueue records what is to be done next for a Work and queues its name.
func (r *Runner) enqueue(name string, next op, work *placementv1beta1.Work, hash string) {
	r.mu.Lock()
	st := r.works[name]
	if st == nil {
		st = &workState{name: name}
		r.works[name] = st
	}
	switch next {
	case opApply:
		st.work, st.hash = work, hash
		st.hubSent = true
	case opRemove:
		st.work, st.hash = nil, ""
	case opRecheck:
		if st.next != opNone {
			r.mu.Unlock()
			return
		}
	}
	st.next = next
	r.mu.Unlock()
	r.queue.Add(name)
}

// processNext does what is next for one Work. It returns false when the
// queue shuts down.
func (r *Runner) processNext(ctx context.Context) bool {
	name, shutdown := r.queue.Get()
	if shutdown {
		return false
	}
	defer r.queue.Done(name)
	if ctx.Err() != nil {
		return true // stopping: what is left is done after a restart
	}
	r.mu.Lock()
	st := r.works[name]
	if st == nil || st.next == opNone {
		r.mu.Unlock()
		return true
	}
	next, work, hash := st.next, st.work, st.hash
	st.next = opNone
	fenced, hubSent, cutOff := st.fenced, st.hubSent, st.fenceCutOff
	st.hubSent = false
	r.mu.Unlock()
	if fenced && (next == opRecheck || next == opFence || (next == opApply && !hubSent)) {
		// Its objects are stopped on purpose: nothing to re-evaluate or
		// apply again (a retry, a change on the member) until the hub sends
		// the Work.
		return true
	}

	switch next {
	case opApply:
		r.apply(ctx, st, work, hash)
	case opRemove:
		r.remove(ctx, st)
	case opRecheck:
		r.recheck(ctx, st, work, hash)
	case opFence:
		if work != nil && work.Spec.Fencing != nil {
			r.fence(ctx, name, work.Spec.Fencing, cutOff, time.Now())
		}
	}
	return true
}

// apply applies a spec and reports its status. A spec the member already
// holds in full is not applied again; its status is re-evaluated and
// reported.
func (r *Runner) apply(ctx context.Context, st *workState, work *placementv1beta1.Work, hash string) {
	log := r.log.WithValues("work", st.name, "hash", hash)
	r.mu.Lock()
	rec, recorded := r.records[st.name]
	unchanged := !st.fenced && ((st.appliedHash == hash && st.complete) ||
		(st.appliedHash == "" && recorded && rec.Hash == hash && rec.AllApplied))
	r.mu.Unlock()

	var status placementv1beta1.WorkStatus
	var err error
	if unchanged {
		log.V(1).Info("The Work is unchanged; re-evaluating its status without applying it")
		status, err = r.opts.Applier.Status(ctx, work)
	} else {
		status, err = r.opts.Applier.Apply(ctx, work)
	}
	if ctx.Err() != nil {
		return
	}
	complete := err == nil && settled(status)
	switch {
	case err != nil && unchanged:
		log.Error(err, "Failed to re-evaluate the Work's status; applying it again later")
	case err != nil:
		log.Error(err, "Failed to apply the Work; retrying later")
	case !complete:
		log.Info("Not every manifest of the Work was applied; retrying later")
	case unchanged:
		log.V(1).Info("Re-evaluated the status of the unchanged Work")
	default:
		log.V(1).Info("Applied the Work")
	}

	r.mu.Lock()
	if st.fenced && err == nil && !unchanged {
		log.Info("Applied the hub's Work again after fencing: its workloads are restored")
		st.fenced = false
	}
	st.appliedHash = hash
	st.complete = complete
	if err == nil || !unchanged {
		st.status = &status
	}
	r.mu.Unlock()

	// An unchanged spec the hub sent again is reported even if its status
	// did not change: the hub may have lost it.
	r.report(st.name, unchanged)
	if r.opts.Upsync != nil && err == nil {
		r.opts.Upsync.Set(work)
	}
	if complete {
		r.queue.Forget(st.name)
	} else {
		r.retryLater(st.name, opApply)
	}
}

// remove removes what a Work applied.
func (r *Runner) remove(ctx context.Context, st *workState) {
	released, err := r.opts.Applier.RemoveWork(ctx, st.name)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		r.log.Error(err, "Failed to remove the Work; retrying later", "work", st.name)
		r.retryLater(st.name, opRemove)
		return
	}
	r.log.V(1).Info("Removed the Work", "work", st.name)
	if r.opts.Upsync != nil {
		r.opts.Upsync.Remove(st.name)
	}
	r.confirmRemoved(st.name, released)
	r.queue.Forget(st.name)
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.records, st.name)
	st.appliedHash, st.complete, st.status, st.sent = "", false, nil, ""
	if st.next == opNone && st.work == nil && r.works[st.name] == st {
		delete(r.works, st.name)
	}
}

// recheck re-evaluates the status of an applied spec and reports it if it
// changed. A spec found no longer applied (someone deleted an object) is
// applied again.
func (r *Runner) recheck(ctx context.Context, st *workState, work *placementv1beta1.Work, hash string) {
	r.mu.Lock()
	ok := work != nil && st.appliedHash == hash && st.complete
	r.mu.Unlock()
	if !ok {
		return
	}
	status, err := r.opts.Applier.Status(ctx, work)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		r.log.V(1).Info("Failed to re-evaluate the Work's status", "work", st.name, "err", err)
		return
	}
	complete := settled(status)
	r.mu.Lock()
	if st.hash != hash {
		r.mu.Unlock()
		return // superseded while we looked
	}
	st.status = &status
	st.complete = complete
	r.mu.Unlock()
	r.report(st.name, false)
	if !complete {
		r.log.Info("The Work's objects are no longer all applied; applying it again", "work", st.name)
		r.retryLater(st.name, opApply)
	}
}

// retryLater queues next for a Work after its backoff, unless something
// newer is already queued.
func (r *Runner) retryLater(name string, next op) {
	r.mu.Lock()
	st := r.works[name]
	if st == nil || st.next != opNone || (next == opApply && st.work == nil) || (next == opRemove && st.work != nil) {
		r.mu.Unlock()
		return
	}
	st.next = next
	r.mu.Unlock()
	r.queue.AddRateLimited(name)
}

// Changed is called when an object a Work applied, or one that keeps a manifest
// of it from being applied, changed on the member (the Applier watches them; see
// Options.ChangesWatched). A Work applied in full gets its status rechecked; one
// that waits for a retry is applied again at once, with its backoff reset, since
// what held it may be gone. It does not block.
func (r *Runner) Changed(workName string) {
	if !r.running.Load() {
		return
	}
	r.mu.Lock()
	st := r.works[workName]
	if st != nil && st.work != nil && !st.complete && !st.fenced && st.appliedHash == st.hash && (st.next == opNone || st.next == opApply) {
		st.next = opApply
		r.mu.Unlock()
		r.queue.Forget(workName)
		r.queue.Add(workName)
		return
	}
	r.mu.Unlock()
	r.enqueue(workName, opRecheck, nil, "")
}

// settled reports whether a status leaves nothing to retry: every manifest is
// applied, or the only ones not applied are left drifted on purpose
// (IfNotDrifted), or, under ReportDiff, every manifest was compared.
func settled(status placementv1beta1.WorkStatus) bool {
	if c := conditionOf(status.Conditions, placementv1beta1.ConditionDiffReported); c != nil {
		return c.Status == metav1.ConditionTrue
	}
	c := conditionOf(status.Conditions, placementv1beta1.ConditionApplied)
	return c != nil && (c.Status == metav1.ConditionTrue || c.Reason == placementv1beta1.ReasonFoundDrifts)
}

func conditionOf(conditions []metav1.Condition, t string) *metav1.Condition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

// recheckLoop queues, every RecheckInterval, the Works that are applied but
// not available, to re-evaluate their status.
func (r *Runner) recheckLoop(ctx context.Context) {
	t := time.NewTicker(r.opts.RecheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var names []string
		r.mu.Lock()
		for name, st := range r.works {
			if st.work != nil && st.next == opNone && st.complete && st.appliedHash == st.hash &&
				st.status != nil && !conditionTrue(st.status.Conditions, placementv1beta1.ConditionAvailable) {
				names = append(names, name)
			}
		}
		r.mu.Unlock()
		for _, name := range names {
			r.enqueue(name, opRecheck, nil, "")
		}
	}
}

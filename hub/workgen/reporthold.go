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

package workgen

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// A Work the generator has just written is usually applied and reported by its
// agent within a fraction of a second. Writing the binding's status at once
// ("the Work is written, the agent has not reported") and again for the report
// is two writes for every cluster of every change; holding the first until the
// report comes, for a bounded time, makes them one. The binding's status says
// nothing new meanwhile (its conditions keep the generation they were written
// for, which the placement reports as not reported yet), never something false.

var reportHolds = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "flotilla_workgen_report_holds_total",
	Help: "Binding status writes the work generator held for the agent's report on a Work it wrote, by how the hold ended: reported (one write said both), expired (--work-report-wait passed first) or cut (the Work or the agent's connection failed meanwhile).",
}, []string{"outcome"})

func init() { metrics.Registry.MustRegister(reportHolds) }

// reportHold is what holdForReport decides from, beside the status input.
type reportHold struct {
	// wait is how long a binding's status may wait for the report
	// (Reconciler.ReportWait); 0 never waits.
	wait time.Duration
	// wrote says this reconcile created the Work or changed it.
	wrote bool
	// held is the hold of this binding that began earlier, if any.
	held *heldFor
	now  time.Time
}

// heldFor is a hold of one binding's status write: for which generation of the
// binding, and until when.
type heldFor struct {
	generation int64
	until      time.Time
	// ended says the status was written after the hold.
	ended bool
}

// holdDecision is holdForReport's answer: write the status now (wait 0), or
// wait up to wait for the agent's report, starting a hold when start is set.
type holdDecision struct {
	wait  time.Duration
	start bool
}

// holdForReport decides whether the binding's status write waits for the
// agent's report on its Work:
//
//   - Never when the Work could not be written (the failure is the status's
//     news), when the Work already carries a report of its generation (the
//     write has it), or when the member's agent is not connected (no report is
//     coming; the status says the agent is away).
//   - A hold begins when this reconcile wrote the Work and no hold of the
//     binding's generation began before: the write waits up to wait.
//   - A hold of the binding's generation that began before lasts until its
//     end, through the reconciles the Work's own write events bring, and then
//     the status is written, reported or not; once written, it holds no more.
//     So a binding's generation is held once, for at most wait, whatever
//     writes the Work again.
func holdForReport(in statusInput, h reportHold) holdDecision {
	if h.wait <= 0 || in.err != nil || in.work == nil || reported(in.work) ||
		in.connected == nil || in.connected.Status != metav1.ConditionTrue {
		return holdDecision{}
	}
	gen := in.binding.GetGeneration()
	switch {
	case h.held != nil && h.held.generation == gen:
		if left := h.held.until.Sub(h.now); left > 0 && !h.held.ended {
			return holdDecision{wait: left}
		}
		return holdDecision{}
	case h.wrote:
		return holdDecision{wait: h.wait, start: true}
	}
	return holdDecision{}
}

// Outcomes of a hold (flotilla_workgen_report_holds_total{outcome}).
const (
	// holdReported: the agent's report came within the wait; one write said
	// both.
	holdReported = "reported"
	// holdExpired: the wait ended without the report; the status was written
	// without it, and the report costs a write of its own.
	holdExpired = "expired"
	// holdCut: something else ended the wait (the Work could not be written
	// any more, or the agent went away).
	holdCut = "cut"
)

// holdEnds returns the outcome of the binding's hold when the status write
// that d allows ends it, "" when there is no hold to end: one of this
// generation, not ended yet, and d writes now.
func holdEnds(in statusInput, h reportHold, d holdDecision) string {
	if d.wait > 0 || h.held == nil || h.held.ended || h.held.generation != in.binding.GetGeneration() {
		return ""
	}
	switch {
	case in.work != nil && in.err == nil && reported(in.work):
		return holdReported
	case !h.now.Before(h.held.until):
		return holdExpired
	}
	return holdCut
}

// reported says whether a Work's agent has reported on its current generation
// (applied it, or compared it for ReportDiff).
func reported(work *placementv1beta1.Work) bool {
	for _, t := range []string{placementv1beta1.ConditionApplied, placementv1beta1.ConditionDiffReported} {
		if c := conditions.Get(work.Status.Conditions, t); c != nil && c.ObservedGeneration == work.Generation {
			return true
		}
	}
	return false
}

// holds remembers the holds begun, one per binding, until the binding is gone.
type holds struct {
	mu sync.Mutex
	m  map[types.NamespacedName]heldFor
}

func (h *holds) get(key types.NamespacedName) *heldFor {
	h.mu.Lock()
	defer h.mu.Unlock()
	if v, ok := h.m[key]; ok {
		return &v
	}
	return nil
}

func (h *holds) set(key types.NamespacedName, v heldFor) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[types.NamespacedName]heldFor{}
	}
	h.m[key] = v
}

func (h *holds) forget(key types.NamespacedName) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, key)
}

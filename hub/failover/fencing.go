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
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// DefaultFencingMargin is how long the hub waits past a fencing lease before it
// counts a cut-off copy as stopped (hub --fencing-margin). It covers the
// agent's clock running slower than the hub's over the lease, the agent's
// check interval, and the pods' termination grace period (30 s by default)
// after the agent scaled them to zero or deleted them.
const DefaultFencingMargin = 45 * time.Second

// LeavingCopy is a copy of a fenced placement on a cluster the placement is
// leaving: a binding that is Unscheduled or being deleted.
type LeavingCopy struct {
	// Cluster is the member cluster.
	Cluster string
	// Works are the copy's Works on the hub (none once the agent confirmed
	// their removal, or they were let go).
	Works []LeavingWork
	// Connected is true while the cluster's agent is connected
	// (AgentConnected=True): the hub hears from it now.
	Connected bool
	// LastHeard is when the hub last heard from the agent while it is not
	// connected; zero when the hub never did (no agent ever ran the copy).
	LastHeard time.Time
}

// LeavingWork is one Work of a LeavingCopy.
type LeavingWork struct {
	// Name is the Work's name (in the cluster's namespace).
	Name string
	// Deleting is true once the Work is deleted on the hub and waits for the
	// agent's confirmation (its cleanup finalizer).
	Deleting bool
}

// FencingInput is what DecideFencing decides from.
type FencingInput struct {
	Now time.Time
	// Lease is the placement's fencing lease (policy.fencing.leaseSeconds).
	Lease time.Duration
	// Margin is the hub's --fencing-margin.
	Margin time.Duration
	// Leaving are the copies the placement is leaving.
	Leaving []LeavingCopy
}

// FencingWait is a copy the placement waits for.
type FencingWait struct {
	Cluster string
	// Until is when the copy counts as stopped unless its agent confirms the
	// removal first; zero while the agent is connected (then only its
	// confirmation ends the wait).
	Until time.Time
}

// FencingPlan is DecideFencing's answer.
type FencingPlan struct {
	// Waiting are the copies not known stopped, by cluster. While there is
	// one, no other cluster gets the placement (the scheduler creates no
	// binding while one it leaves exists: hub/scheduler fencedCreates).
	Waiting []FencingWait
	// Release are the deleted Works, by cluster, whose copies count as
	// stopped because the lease ran out: their cleanup finalizer is removed,
	// so that the Works, then their bindings, go.
	Release map[string][]string
	// Condition is the placement's Fencing condition (type set by the caller).
	Condition metav1.Condition
	// RecheckAfter is when to decide again (0: only on a change).
	RecheckAfter time.Duration
}

// DecideFencing decides, for a fenced placement, whether the copies it is
// leaving are known stopped. The rules, per copy:
//
//   - A copy with no Work left is stopped: its agent confirmed the removal
//     (the Work went when the agent acknowledged it), or its Works were let go
//     below earlier.
//   - A copy whose agent is connected waits for the agent's confirmation,
//     without a deadline: the hub hears from the agent now, so the lease does
//     not run, and an agent that answers removes the copy.
//   - A copy whose agent is not connected and that the hub never heard from
//     (zero LastHeard) is stopped: no agent ever ran it. Its deleted Works
//     are let go.
//   - Otherwise the copy counts as stopped at LastHeard + Lease + Margin: the
//     agent stops the workloads by LastHeard + Lease on its own clock (it
//     counts from a heartbeat it sent before the hub received the last one),
//     and Margin covers clock rate skew and the pods' termination. Before
//     then it waits until that time; from then on its deleted Works are let
//     go. A Work not deleted yet is never let go (the agent would apply it
//     again on reconnecting): the copy waits for the hub to delete it.
//
// The condition is True (FencingWaiting) while a copy waits, naming the
// copies and until when, and False (FencingClear) otherwise.
func DecideFencing(in FencingInput) FencingPlan {
	plan := FencingPlan{Release: map[string][]string{}}
	leaving := append([]LeavingCopy(nil), in.Leaving...)
	sort.Slice(leaving, func(i, j int) bool { return leaving[i].Cluster < leaving[j].Cluster })
	var why []string
	for _, c := range leaving {
		if len(c.Works) == 0 {
			continue
		}
		deleting, pending := deletingWorks(c.Works)
		switch {
		case c.Connected:
			plan.Waiting = append(plan.Waiting, FencingWait{Cluster: c.Cluster})
			why = append(why, fmt.Sprintf("%s: its agent is connected and has not confirmed removing the copy yet", c.Cluster))
			continue
		case c.LastHeard.IsZero():
			if len(deleting) > 0 {
				plan.Release[c.Cluster] = deleting
			}
			if pending {
				plan.Waiting = append(plan.Waiting, FencingWait{Cluster: c.Cluster})
				why = append(why, fmt.Sprintf("%s: its Work is not deleted yet", c.Cluster))
			}
			continue
		}
		until := c.LastHeard.Add(in.Lease + in.Margin)
		if in.Now.Before(until) {
			plan.Waiting = append(plan.Waiting, FencingWait{Cluster: c.Cluster, Until: until})
			why = append(why, fmt.Sprintf("%s: its agent is cut off; the copy counts as stopped at %s (lease %s + margin %s after the hub last heard from it at %s) unless the agent confirms its removal first",
				c.Cluster, until.UTC().Format(time.RFC3339), in.Lease, in.Margin, c.LastHeard.UTC().Format(time.RFC3339)))
			plan.RecheckAfter = pipeline.Sooner(plan.RecheckAfter, until.Sub(in.Now))
			continue
		}
		if len(deleting) > 0 {
			plan.Release[c.Cluster] = deleting
		}
		if pending {
			plan.Waiting = append(plan.Waiting, FencingWait{Cluster: c.Cluster})
			why = append(why, fmt.Sprintf("%s: the lease ran out at %s but its Work is not deleted yet", c.Cluster, until.UTC().Format(time.RFC3339)))
		}
	}
	if len(plan.Release) == 0 {
		plan.Release = nil
	}
	if len(plan.Waiting) > 0 {
		plan.Condition = metav1.Condition{Status: metav1.ConditionTrue, Reason: placementv1beta1.ReasonFencingWaiting,
			Message: "no other cluster gets the placement until the copy it leaves is known stopped: " + strings.Join(why, "; ")}
		return plan
	}
	plan.Condition = metav1.Condition{Status: metav1.ConditionFalse, Reason: placementv1beta1.ReasonFencingClear,
		Message: "no copy the placement left is waiting to stop"}
	return plan
}

// deletingWorks returns the names of the deleted Works among ws, sorted, and
// whether any is not deleted yet.
func deletingWorks(ws []LeavingWork) (deleting []string, pending bool) {
	for _, w := range ws {
		if w.Deleting {
			deleting = append(deleting, w.Name)
		} else {
			pending = true
		}
	}
	sort.Strings(deleting)
	return deleting, pending
}

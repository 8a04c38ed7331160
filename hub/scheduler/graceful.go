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

package scheduler

import (
	"fmt"
	"sort"
	"strings"
	"time"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// release is an evicted binding let go because its replacement is available.
type release struct {
	cluster     string
	requestedAt time.Time
}

// gracefulHolds returns, among the clusters the cycle unschedules because the
// failover controller asked for it (hub/failover), those whose binding stays for
// now — one for each selected cluster not available yet, until the graceful
// timeout after the request passes — each with the message for its Scheduled
// condition. It also returns the evictions released because replacements are
// available, and when the first held one times out.
//
// Holding more evicted bindings than replacements wait would deadlock with the
// rollout: a held binding counts against maxSurge, so with two clusters lost
// the second replacement could not start until the first held binding went,
// which waited for every replacement.
func gracefulHolds(now time.Time, timeout time.Duration, active map[string]placementv1beta1.BindingObj, res framework.CycleResult) (map[string]string, []release, time.Duration) {
	var waiting []string
	for _, c := range res.Selected {
		b := active[c]
		if b == nil || !conditions.IsCurrentTrue(b.GetBindingStatus().Conditions, placementv1beta1.ConditionAvailable, b.GetGeneration()) {
			waiting = append(waiting, c)
		}
	}
	sort.Strings(waiting)
	type holdable struct {
		release
		message  string
		deadline time.Time
	}
	var candidates []holdable
	for _, c := range res.Unschedule {
		b := active[c]
		if b == nil {
			continue
		}
		req := pipeline.EvictionRequested(b)
		if req == nil {
			continue
		}
		candidates = append(candidates, holdable{release: release{cluster: c, requestedAt: req.LastTransitionTime.Time},
			message: req.Message, deadline: req.LastTransitionTime.Add(timeout)})
	}
	// The evictions requested last are held: the earlier ones have waited longest.
	sort.Slice(candidates, func(i, j int) bool {
		a, b := candidates[i], candidates[j]
		if !a.requestedAt.Equal(b.requestedAt) {
			return a.requestedAt.After(b.requestedAt)
		}
		return a.cluster < b.cluster
	})
	held := map[string]string{}
	var released []release
	var recheck time.Duration
	for _, h := range candidates {
		inTime := now.Before(h.deadline)
		switch {
		case inTime && len(held) < len(waiting):
			held[h.cluster] = fmt.Sprintf("evicting: %s; kept until the replacement on %s is available (at most until %s)",
				h.message, strings.Join(waiting, ", "), h.deadline.UTC().Format(time.RFC3339))
			recheck = pipeline.Sooner(recheck, h.deadline.Sub(now))
		case len(res.Selected) > 0 && (inTime || len(waiting) == 0):
			// Replacements enough are available (a binding timed out while
			// some still wait is let go by the timeout, not released).
			released = append(released, h.release)
		}
	}
	return held, released, recheck
}

// failbackHolds returns, among the clusters the cycle unschedules because the
// failback controller moves the placement off them (a True FailbackRequested
// and no eviction request), those whose binding stays, each with the message
// for its Scheduled condition: all of them while a selected cluster's copy is
// not Available yet or fewer clusters are selected than the policy asks for
// (want). A failback has no timeout: the old copy goes only once the new one
// is Available, so moving back never leaves a gap.
func failbackHolds(active map[string]placementv1beta1.BindingObj, res framework.CycleResult, want int) map[string]string {
	var waiting []string
	for _, c := range res.Selected {
		b := active[c]
		if b == nil || !conditions.IsCurrentTrue(b.GetBindingStatus().Conditions, placementv1beta1.ConditionAvailable, b.GetGeneration()) {
			waiting = append(waiting, c)
		}
	}
	sort.Strings(waiting)
	held := map[string]string{}
	for _, c := range res.Unschedule {
		b := active[c]
		if b == nil || pipeline.FailbackRequested(b) == nil || pipeline.EvictionRequested(b) != nil {
			continue
		}
		switch {
		case len(waiting) > 0:
			held[c] = fmt.Sprintf("failing back to %s; kept until the copy on %s is available", pipeline.FailbackTarget(b), strings.Join(waiting, ", "))
		case len(res.Selected) < want:
			held[c] = fmt.Sprintf("failing back to %s; kept while %d of %d clusters are selected", pipeline.FailbackTarget(b), len(res.Selected), want)
		}
	}
	return held
}

// taintedAt is when the outage behind an eviction began: the earliest NoExecute
// taint of the cluster, or the eviction request when there is none.
func taintedAt(clusters *framework.Fleet, cluster string, requestedAt time.Time) time.Time {
	at := requestedAt
	mc, ok := clusters.Member(cluster)
	if !ok {
		return at
	}
	for _, t := range mc.Spec.Taints {
		if t.Effect == clusterv1beta1.TaintEffectNoExecute && t.TimeAdded != nil && t.TimeAdded.Time.Before(at) {
			at = t.TimeAdded.Time
		}
	}
	return at
}

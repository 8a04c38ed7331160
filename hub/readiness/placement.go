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

package readiness

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Placement decides a ClusterResourcePlacement's or ResourcePlacement's verdict
// from its placement-level conditions, which the placement controller computed
// just before. The first rule that holds decides:
//
//  1. Scheduled is missing: Unknown, reconciling (the scheduler has not run).
//  2. Scheduled is False (no cluster fits, fewer than asked, selectors that
//     cannot be answered): stalled, with its reason. The scheduler tries again
//     when clusters change, and the verdict follows.
//  3. Conflicted is True (objects left out for an earlier placement): stalled.
//  4. There are no per-cluster stages (no cluster has a binding yet): Ready
//     when the policy asks for no cluster (PickN with numberOfClusters 0),
//     otherwise Unknown, reconciling (waiting for the bindings).
//  5. A stage that only a change can fix is False (Overridden,
//     WorkSynchronized, Applied, DiffReported, or Available for an
//     availability rule that does not compile): stalled, with its reason.
//  6. The first stage, in pipeline order, that is not True decides, reconciling:
//     Unknown while it is pending or an agent is disconnected, False while the
//     rollout holds a cluster back (RolloutStarted) or resources are not
//     available yet (Available).
//  7. Every stage is True: Ready, with the reason of the last (Available, or
//     DiffReported for a ReportDiff placement).
func Placement(p placementv1beta1.PlacementObj) Verdict {
	conds := p.GetPlacementStatus().Conditions
	get := func(perCluster string) *metav1.Condition {
		return conditions.Get(conds, p.PlacementConditionType(perCluster))
	}
	sched := get(placementv1beta1.ConditionScheduled)
	switch {
	case sched == nil:
		return Verdict{Ready: metav1.ConditionUnknown, Reason: placementv1beta1.ReasonSchedulePending, Message: "waiting for the scheduler"}
	case sched.Status == metav1.ConditionFalse:
		return from(sched, true)
	}
	if c := get(placementv1beta1.ConditionConflicted); c != nil && c.Status == metav1.ConditionTrue {
		return from(c, true)
	}
	var stages []*metav1.Condition
	for _, t := range []string{
		placementv1beta1.ConditionRolloutStarted,
		placementv1beta1.ConditionOverridden,
		placementv1beta1.ConditionWorkSynchronized,
		placementv1beta1.ConditionApplied,
		placementv1beta1.ConditionAvailable,
		placementv1beta1.ConditionDiffReported,
	} {
		if c := get(t); c != nil {
			stages = append(stages, c)
		}
	}
	if len(stages) == 0 {
		if pol := p.GetPlacementSpec().Policy; pol != nil && pol.PlacementType == placementv1beta1.PickN && pol.NumberOfClusters != nil && *pol.NumberOfClusters == 0 {
			return ready(sched)
		}
		return Verdict{Ready: metav1.ConditionUnknown, Reason: placementv1beta1.ReasonRolloutPending, Message: "waiting for the bindings of the scheduled clusters"}
	}
	for _, c := range stages {
		if c.Status == metav1.ConditionFalse && fixedOnlyByAChange(p, c) {
			return from(c, true)
		}
	}
	for _, c := range stages {
		if c.Status != metav1.ConditionTrue {
			return from(c, false)
		}
	}
	return ready(stages[len(stages)-1])
}

// fixedOnlyByAChange reports whether a False placement-level condition waits
// for someone to change something (an override, the resources, the apply
// strategy, an availability rule) rather than for time: all but a rollout
// holding clusters back and resources not available yet.
func fixedOnlyByAChange(p placementv1beta1.PlacementObj, c *metav1.Condition) bool {
	switch c.Type {
	case p.PlacementConditionType(placementv1beta1.ConditionRolloutStarted):
		return false
	case p.PlacementConditionType(placementv1beta1.ConditionAvailable):
		return c.Reason == placementv1beta1.ReasonAvailabilityRuleInvalid
	}
	return true
}

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
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Verdict is what Ready, Reconciling and Stalled say about an object.
type Verdict struct {
	// Ready is the status of the Ready condition: True when the object is where
	// its spec asks, Unknown when what decides it is unknown, False otherwise.
	Ready metav1.ConditionStatus
	// Stalled is whether the object cannot go on without a change. When Ready
	// is not True and Stalled is false, the object is reconciling.
	Stalled bool
	// Reason and Message are those of the condition that decided the verdict;
	// the message names that condition.
	Reason  string
	Message string
}

// Set writes v as the Ready condition (the types are the same in the cluster
// and placement API groups), and as Reconciling or Stalled (True) when
// Ready is not True, into conds at generation; the one of Reconciling and Stalled
// that does not hold is removed, as kstatus conventions ask of conditions that are
// only ever True. It reports whether anything changed.
func Set(conds *[]metav1.Condition, v Verdict, generation int64) bool {
	changed := conditions.Set(conds, placementv1beta1.ConditionReady, v.Ready, v.Reason, v.Message, generation)
	var keep, drop []string
	switch {
	case v.Ready == metav1.ConditionTrue:
		drop = []string{placementv1beta1.ConditionReconciling, placementv1beta1.ConditionStalled}
	case v.Stalled:
		keep, drop = []string{placementv1beta1.ConditionStalled}, []string{placementv1beta1.ConditionReconciling}
	default:
		keep, drop = []string{placementv1beta1.ConditionReconciling}, []string{placementv1beta1.ConditionStalled}
	}
	for _, t := range keep {
		if conditions.Set(conds, t, metav1.ConditionTrue, v.Reason, v.Message, generation) {
			changed = true
		}
	}
	for _, t := range drop {
		if conditions.Remove(conds, t) {
			changed = true
		}
	}
	return changed
}

// IsType reports whether t is one of the types Set writes, so that callers can
// leave them out of what they summarise or announce.
func IsType(t string) bool {
	return t == placementv1beta1.ConditionReady || t == placementv1beta1.ConditionReconciling || t == placementv1beta1.ConditionStalled
}

// from is the verdict a condition decides: Ready takes its status (False when
// it is True but stands for a failure), its reason, and a message naming it.
func from(c *metav1.Condition, stalled bool) Verdict {
	ready := c.Status
	if ready == metav1.ConditionTrue || stalled {
		ready = metav1.ConditionFalse
	}
	return Verdict{Ready: ready, Stalled: stalled, Reason: c.Reason, Message: fmt.Sprintf("%s is %s: %s", c.Type, c.Status, c.Message)}
}

// ready is the verdict of an object where its spec asks, for the reason of c.
func ready(c *metav1.Condition) Verdict {
	return Verdict{Ready: metav1.ConditionTrue, Reason: c.Reason, Message: fmt.Sprintf("%s is %s: %s", c.Type, c.Status, c.Message)}
}

// SetPlacement writes a placement's verdict and status.observedGeneration; its
// writer calls it after computing the other conditions.
func SetPlacement(p placementv1beta1.PlacementObj) {
	st := p.GetPlacementStatus()
	st.ObservedGeneration = p.GetGeneration()
	Set(&st.Conditions, Placement(p), p.GetGeneration())
}

// SetUpdateRun writes a staged update run's verdict and
// status.observedGeneration; its writer calls it before every write.
func SetUpdateRun(run *placementv1beta1.ClusterStagedUpdateRun) {
	run.Status.ObservedGeneration = run.Generation
	Set(&run.Status.Conditions, UpdateRun(run), run.Generation)
}

// SetMemberCluster writes a MemberCluster's verdict and
// status.observedGeneration; every writer of a MemberCluster's status calls it
// after changing the other conditions.
func SetMemberCluster(mc *clusterv1beta1.MemberCluster) {
	mc.Status.ObservedGeneration = mc.Generation
	Set(&mc.Status.Conditions, MemberCluster(mc), mc.Generation)
}

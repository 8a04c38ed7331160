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
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"slices"
	"sort"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/hub/schedulinggroup"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// planBindings decides what the scheduler writes so that one scheduling group's
// bindings match a cycle's result. It writes nothing itself (Reconciler.write
// carries the plan out). The rules, per cluster:
//
//  1. A selected cluster without a binding gets one, Scheduled, with the cycle's
//     decision and the policy snapshot's name — unless its previous binding is
//     still being deleted: nothing then (waiting), the deletion wakes the
//     placement again.
//  2. A selected cluster's binding gets the snapshot name and the decision, and
//     Unscheduled becomes Scheduled again; a spec that already says so is not
//     written. A plain "kept" decision (framework.ReasonKept) does not replace
//     the "picked" decision a binding has under the same snapshot: that one says
//     why the cluster was picked, and rewriting it on the pass after the create
//     would write every new binding twice. Any other decision it has (kept
//     despite a taint, say) is replaced, so it never outlives its cause.
//  3. Every selected cluster's binding gets its Scheduled condition: False
//     Evicting while a graceful eviction holds it (held), False Misplaced when
//     the cluster no longer matches (Kratix: flagged, not moved), True
//     otherwise — except that a binding without the condition keeps none
//     while it is True (sameVerdict).
//  4. A cluster the cycle unschedules whose binding is active: kept with Scheduled
//     False Evicting while held; otherwise Unscheduled with the decision (the
//     rollout then removes it within maxUnavailable).
//
// Bindings being deleted are never written. The bindings of other groups are
// not this plan's (planStaleGroups handles groups that went away).
func planBindings(existing []placementv1beta1.BindingObj, res framework.CycleResult, held map[string]string, snapshot string) bindingPlan {
	byCluster := map[string]placementv1beta1.BindingObj{}
	removing := map[string]bool{}
	for _, b := range existing {
		if b.GetDeletionTimestamp().IsZero() {
			byCluster[b.GetBindingSpec().TargetCluster] = b
		} else {
			removing[b.GetBindingSpec().TargetCluster] = true
		}
	}
	decisions := map[string]placementv1beta1.ClusterDecision{}
	for _, d := range res.Decisions {
		decisions[d.ClusterName] = d
	}
	var plan bindingPlan
	for _, cluster := range res.Selected {
		b, ok := byCluster[cluster]
		switch {
		case !ok && removing[cluster]:
			plan.waiting = append(plan.waiting, cluster)
			continue
		case !ok:
			plan.create = append(plan.create, bindingCreate{cluster: cluster, spec: placementv1beta1.ResourceBindingSpec{
				State:                        placementv1beta1.BindingStateScheduled,
				TargetCluster:                cluster,
				SchedulingPolicySnapshotName: snapshot,
				ClusterDecision:              decisions[cluster],
			}})
		default:
			want := b.GetBindingSpec().DeepCopy()
			if !continues(want, decisions[cluster], snapshot) {
				want.ClusterDecision = decisions[cluster]
			}
			want.SchedulingPolicySnapshotName = snapshot
			if want.State == placementv1beta1.BindingStateUnscheduled {
				want.State = placementv1beta1.BindingStateScheduled
			}
			plan.addSpec(b, *want)
		}
		plan.scheduled = append(plan.scheduled, scheduledWrite{cluster: cluster, binding: b,
			misplaced: res.Misplaced[cluster], evicting: held[cluster]})
	}
	for _, cluster := range res.Unschedule {
		b, ok := byCluster[cluster]
		if !ok || b.GetBindingSpec().State == placementv1beta1.BindingStateUnscheduled {
			continue
		}
		if msg, ok := held[cluster]; ok {
			plan.scheduled = append(plan.scheduled, scheduledWrite{cluster: cluster, binding: b, evicting: msg})
			continue
		}
		want := b.GetBindingSpec().DeepCopy()
		want.State = placementv1beta1.BindingStateUnscheduled
		want.ClusterDecision = decisions[cluster]
		plan.addSpec(b, *want)
	}
	return plan
}

// continues reports whether d only says that a binding selected under snapshot
// stays where it is (rule 2).
func continues(have *placementv1beta1.ResourceBindingSpec, d placementv1beta1.ClusterDecision, snapshot string) bool {
	return d.Selected && d.Reason == framework.ReasonKept && have.ClusterDecision.Selected && framework.Picked(have.ClusterDecision.Reason) &&
		have.SchedulingPolicySnapshotName == snapshot && have.State != placementv1beta1.BindingStateUnscheduled
}

// planStaleGroups unschedules the active bindings of scheduling groups that no
// longer have selectors of their own (groups lists those that do, "" first):
// their objects now go with the placement's.
func planStaleGroups(bindings []placementv1beta1.BindingObj, groups []string) bindingPlan {
	current := map[string]bool{}
	for _, g := range groups {
		current[g] = true
	}
	var plan bindingPlan
	for _, b := range pipeline.ActiveBindings(bindings) {
		if current[schedulinggroup.Of(b.GetLabels())] {
			continue
		}
		want := b.GetBindingSpec().DeepCopy()
		want.State = placementv1beta1.BindingStateUnscheduled
		plan.addSpec(b, *want)
	}
	return plan
}

// bindingPlan is what the scheduler writes to a placement's bindings.
type bindingPlan struct {
	// create are the bindings to create, in the order of the selected clusters.
	create []bindingCreate
	// spec are the spec changes of existing bindings.
	spec []specWrite
	// scheduled are the Scheduled conditions to write; for a binding to create,
	// binding is nil and the write follows the create.
	scheduled []scheduledWrite
	// waiting are selected clusters whose previous binding is still being deleted.
	waiting []string
}

// bindingCreate is a binding to create for a cluster.
type bindingCreate struct {
	cluster string
	spec    placementv1beta1.ResourceBindingSpec
}

// specWrite changes the scheduler's fields of a binding's spec: the policy
// snapshot's name, the decision and, only when it changes, the state.
type specWrite struct {
	binding placementv1beta1.BindingObj
	want    placementv1beta1.ResourceBindingSpec
}

// scheduledWrite is the Scheduled condition of a cluster's binding.
type scheduledWrite struct {
	cluster   string
	binding   placementv1beta1.BindingObj
	misplaced string
	evicting  string
}

func (p *bindingPlan) addSpec(b placementv1beta1.BindingObj, want placementv1beta1.ResourceBindingSpec) {
	if equality.Semantic.DeepEqual(want, *b.GetBindingSpec()) {
		return
	}
	p.spec = append(p.spec, specWrite{binding: b, want: want})
}

// specFields are the JSON fields a specWrite sets, and the state the binding
// must still have for the patch to apply ("" when the state does not change:
// the other fields are the scheduler's alone, no precondition is needed).
func (w specWrite) specFields() (ifState placementv1beta1.BindingState, set map[string]any) {
	have := w.binding.GetBindingSpec()
	set = map[string]any{"schedulingPolicySnapshotName": w.want.SchedulingPolicySnapshotName, "clusterDecision": w.want.ClusterDecision}
	if w.want.State != have.State {
		ifState = have.State
		set["state"] = w.want.State
	}
	return ifState, set
}

// scheduledCondition is the Scheduled condition of a binding whose spec is spec
// (rule 3 of planBindings).
func scheduledCondition(spec *placementv1beta1.ResourceBindingSpec, misplaced, evicting string) (metav1.ConditionStatus, string, string) {
	switch {
	case evicting != "":
		return metav1.ConditionFalse, placementv1beta1.ReasonEvicting, evicting
	case misplaced != "":
		return metav1.ConditionFalse, placementv1beta1.ReasonMisplaced, misplaced
	}
	msg := spec.ClusterDecision.Reason
	if msg == "" {
		msg = "picked by the scheduler"
	}
	return metav1.ConditionTrue, placementv1beta1.ReasonScheduled, msg
}

// sameVerdict reports whether a binding already says status, reason and
// message: its Scheduled condition says them, or it has none and the verdict
// is the plain one (True, Scheduled). The scheduler writes the condition only
// when its verdict changes, so
//   - a binding it has just created carries no condition: being there says the
//     cluster was picked, and spec.clusterDecision says why (the placement's
//     per-cluster Scheduled is read from it), which spares a status write for
//     every cluster picked;
//   - the condition's observedGeneration is the binding's generation when the
//     scheduler last changed it; a newer generation it did not change it for
//     (the rollout binding the binding to another snapshot) leaves it as it is.
func sameVerdict(was *metav1.Condition, status metav1.ConditionStatus, reason, msg string) bool {
	if was == nil {
		return status == metav1.ConditionTrue && reason == placementv1beta1.ReasonScheduled
	}
	return was.Status == status && was.Reason == reason && was.Message == msg
}

// misplacedTransition says which Event a Scheduled condition write announces:
// ReasonMisplaced when the cluster stopped matching, ReasonScheduled when it
// matches again, "" for none. was is the binding's Scheduled condition before.
func misplacedTransition(was *metav1.Condition, misplaced, evicting string) string {
	wasMisplaced := was != nil && was.Reason == placementv1beta1.ReasonMisplaced
	switch {
	case misplaced != "" && !wasMisplaced:
		return placementv1beta1.ReasonMisplaced
	case misplaced == "" && evicting == "" && wasMisplaced:
		return placementv1beta1.ReasonScheduled
	}
	return ""
}

// scheduledOf returns a binding's Scheduled condition, nil for none.
func scheduledOf(b placementv1beta1.BindingObj) *metav1.Condition {
	if b == nil {
		return nil
	}
	return conditions.Get(b.GetBindingStatus().Conditions, placementv1beta1.ConditionScheduled)
}

// fencedCreates returns the creates of plan a placement with policy.fencing
// may make now: none while it has a binding — in any state, deleted or not —
// on a cluster the cycle did not select. Such a binding is a copy the
// placement is leaving that is not known stopped yet: it goes only once its
// Work is gone, which the agent's confirmation or the fencing controller
// (hub/failover DecideFencing, after the lease) brings about, and its deletion
// wakes the scheduler to create the new binding. It also returns the clusters
// waited for, sorted. Without fencing the creates are returned as they are.
func fencedCreates(policy *placementv1beta1.PlacementPolicy, creates []bindingCreate, existing []placementv1beta1.BindingObj, selected []string) ([]bindingCreate, []string) {
	if policy == nil || policy.Fencing == nil || len(creates) == 0 {
		return creates, nil
	}
	chosen := map[string]bool{}
	for _, c := range selected {
		chosen[c] = true
	}
	var leaving []string
	for _, b := range existing {
		if c := b.GetBindingSpec().TargetCluster; !chosen[c] && !slices.Contains(leaving, c) {
			leaving = append(leaving, c)
		}
	}
	if len(leaving) == 0 {
		return creates, nil
	}
	sort.Strings(leaving)
	return nil, leaving
}

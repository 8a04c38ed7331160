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
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/hub/schedulinggroup"
)

// planned is a binding plan written as sentences, to compare in tests.
type planned struct {
	Create    []string
	Spec      []string
	Scheduled []string
	Waiting   []string
}

func describe(p bindingPlan) planned {
	var out planned
	for _, c := range p.create {
		out.Create = append(out.Create, fmt.Sprintf("%s %s snapshot=%s decision=%q", c.cluster, c.spec.State, c.spec.SchedulingPolicySnapshotName, c.spec.ClusterDecision.Reason))
	}
	for _, w := range p.spec {
		ifState, set := w.specFields()
		keys := make([]string, 0, len(set))
		for k := range set {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out.Spec = append(out.Spec, fmt.Sprintf("%s %s→%s if=%q fields=%v", w.binding.GetBindingSpec().TargetCluster,
			w.binding.GetBindingSpec().State, w.want.State, ifState, keys))
	}
	for _, w := range p.scheduled {
		status, reason, _ := scheduledCondition(&placementv1beta1.ResourceBindingSpec{}, w.misplaced, w.evicting)
		out.Scheduled = append(out.Scheduled, fmt.Sprintf("%s %s/%s new=%v", w.cluster, status, reason, w.binding == nil))
	}
	out.Waiting = p.waiting
	return out
}

// pickedReason is a reason the framework gives a cluster it picks.
const pickedReason = "picked: matches"

func bindingAt(cluster string, state placementv1beta1.BindingState, snapshot string) *placementv1beta1.ClusterResourceBinding {
	return &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "p-" + cluster, Generation: 1},
		Spec: placementv1beta1.ResourceBindingSpec{State: state, TargetCluster: cluster, SchedulingPolicySnapshotName: snapshot,
			ClusterDecision: placementv1beta1.ClusterDecision{ClusterName: cluster, Selected: state != placementv1beta1.BindingStateUnscheduled, Reason: pickedReason}},
	}
}

func deleting(b *placementv1beta1.ClusterResourceBinding) *placementv1beta1.ClusterResourceBinding {
	now := metav1.Now()
	b.DeletionTimestamp = &now
	return b
}

func picked(clusters ...string) []placementv1beta1.ClusterDecision {
	var out []placementv1beta1.ClusterDecision
	for _, c := range clusters {
		out = append(out, placementv1beta1.ClusterDecision{ClusterName: c, Selected: true, Reason: pickedReason})
	}
	return out
}

func TestPlanBindings(t *testing.T) {
	const snap = "p-1"
	for _, tc := range []struct {
		name     string
		existing []*placementv1beta1.ClusterResourceBinding
		res      framework.CycleResult
		held     map[string]string
		want     planned
	}{{
		name: "a selected cluster without a binding gets one, Scheduled, then its condition",
		res:  framework.CycleResult{Selected: []string{"m1", "m2"}, Decisions: picked("m1", "m2")},
		want: planned{
			Create:    []string{`m1 Scheduled snapshot=p-1 decision="picked: matches"`, `m2 Scheduled snapshot=p-1 decision="picked: matches"`},
			Scheduled: []string{"m1 True/Scheduled new=true", "m2 True/Scheduled new=true"},
		},
	}, {
		name:     "a binding that already says what the cycle decided has only its condition written",
		existing: []*placementv1beta1.ClusterResourceBinding{bindingAt("m1", placementv1beta1.BindingStateBound, snap)},
		res:      framework.CycleResult{Selected: []string{"m1"}, Decisions: picked("m1")},
		want:     planned{Scheduled: []string{"m1 True/Scheduled new=false"}},
	}, {
		name:     "a binding picked under this snapshot keeps why it was picked when the cycle only says kept",
		existing: []*placementv1beta1.ClusterResourceBinding{bindingAt("m1", placementv1beta1.BindingStateBound, snap)},
		res: framework.CycleResult{Selected: []string{"m1"},
			Decisions: []placementv1beta1.ClusterDecision{{ClusterName: "m1", Selected: true, Reason: framework.ReasonKept}}},
		want: planned{Scheduled: []string{"m1 True/Scheduled new=false"}},
	}, {
		name: "a binding kept for another reason (despite a taint) gets the plain kept decision once the reason is gone",
		existing: []*placementv1beta1.ClusterResourceBinding{func() *placementv1beta1.ClusterResourceBinding {
			b := bindingAt("m1", placementv1beta1.BindingStateBound, snap)
			b.Spec.ClusterDecision.Reason = "kept: the taint unreachable is not tolerated, but PickAll has nowhere else to go"
			return b
		}()},
		res: framework.CycleResult{Selected: []string{"m1"},
			Decisions: []placementv1beta1.ClusterDecision{{ClusterName: "m1", Selected: true, Reason: framework.ReasonKept}}},
		want: planned{
			Spec:      []string{`m1 Bound→Bound if="" fields=[clusterDecision schedulingPolicySnapshotName]`},
			Scheduled: []string{"m1 True/Scheduled new=false"},
		},
	}, {
		name:     "a kept binding of an older policy snapshot gets the new decision",
		existing: []*placementv1beta1.ClusterResourceBinding{bindingAt("m1", placementv1beta1.BindingStateBound, "p-0")},
		res: framework.CycleResult{Selected: []string{"m1"},
			Decisions: []placementv1beta1.ClusterDecision{{ClusterName: "m1", Selected: true, Reason: framework.ReasonKept}}},
		want: planned{
			Spec:      []string{`m1 Bound→Bound if="" fields=[clusterDecision schedulingPolicySnapshotName]`},
			Scheduled: []string{"m1 True/Scheduled new=false"},
		},
	}, {
		name:     "a binding of an older policy snapshot gets the new name, with no state precondition",
		existing: []*placementv1beta1.ClusterResourceBinding{bindingAt("m1", placementv1beta1.BindingStateBound, "p-0")},
		res:      framework.CycleResult{Selected: []string{"m1"}, Decisions: picked("m1")},
		want: planned{
			Spec:      []string{`m1 Bound→Bound if="" fields=[clusterDecision schedulingPolicySnapshotName]`},
			Scheduled: []string{"m1 True/Scheduled new=false"},
		},
	}, {
		name:     "an unscheduled binding selected again becomes Scheduled, only while still Unscheduled",
		existing: []*placementv1beta1.ClusterResourceBinding{bindingAt("m1", placementv1beta1.BindingStateUnscheduled, snap)},
		res:      framework.CycleResult{Selected: []string{"m1"}, Decisions: picked("m1")},
		want: planned{
			Spec:      []string{`m1 Unscheduled→Scheduled if="Unscheduled" fields=[clusterDecision schedulingPolicySnapshotName state]`},
			Scheduled: []string{"m1 True/Scheduled new=false"},
		},
	}, {
		name:     "a selected cluster whose binding is still being deleted waits; nothing is created",
		existing: []*placementv1beta1.ClusterResourceBinding{deleting(bindingAt("m1", placementv1beta1.BindingStateUnscheduled, snap))},
		res:      framework.CycleResult{Selected: []string{"m1"}, Decisions: picked("m1")},
		want:     planned{Waiting: []string{"m1"}},
	}, {
		name: "an unscheduled cluster's active binding becomes Unscheduled, only while still Bound",
		existing: []*placementv1beta1.ClusterResourceBinding{
			bindingAt("m1", placementv1beta1.BindingStateBound, snap), bindingAt("m2", placementv1beta1.BindingStateBound, snap),
		},
		res: framework.CycleResult{Selected: []string{"m1"}, Unschedule: []string{"m2"}, Decisions: picked("m1")},
		want: planned{
			Spec:      []string{`m2 Bound→Unscheduled if="Bound" fields=[clusterDecision schedulingPolicySnapshotName state]`},
			Scheduled: []string{"m1 True/Scheduled new=false"},
		},
	}, {
		name:     "an evicted binding held for its replacement stays, Scheduled False Evicting",
		existing: []*placementv1beta1.ClusterResourceBinding{bindingAt("m2", placementv1beta1.BindingStateBound, snap)},
		res:      framework.CycleResult{Selected: []string{"m1"}, Unschedule: []string{"m2"}, Decisions: picked("m1")},
		held:     map[string]string{"m2": "evicting: taint"},
		want: planned{
			Create:    []string{`m1 Scheduled snapshot=p-1 decision="picked: matches"`},
			Scheduled: []string{"m1 True/Scheduled new=true", "m2 False/Evicting new=false"},
		},
	}, {
		name:     "a misplaced cluster is flagged, not moved",
		existing: []*placementv1beta1.ClusterResourceBinding{bindingAt("m1", placementv1beta1.BindingStateBound, snap)},
		res:      framework.CycleResult{Selected: []string{"m1"}, Decisions: picked("m1"), Misplaced: map[string]string{"m1": "labels no longer match"}},
		want:     planned{Scheduled: []string{"m1 False/Misplaced new=false"}},
	}, {
		name: "an already unscheduled or deleted binding of an unscheduled cluster is not written",
		existing: []*placementv1beta1.ClusterResourceBinding{
			bindingAt("m1", placementv1beta1.BindingStateUnscheduled, snap), deleting(bindingAt("m2", placementv1beta1.BindingStateBound, snap)),
		},
		res: framework.CycleResult{Unschedule: []string{"m1", "m2"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var existing []placementv1beta1.BindingObj
			for _, b := range tc.existing {
				existing = append(existing, b)
			}
			got := describe(planBindings(existing, tc.res, tc.held, snap))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("planBindings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanStaleGroupsUnschedulesOnlyTheGroupsThatWentAway(t *testing.T) {
	inGroup := func(b *placementv1beta1.ClusterResourceBinding, group string) *placementv1beta1.ClusterResourceBinding {
		if group != "" {
			b.Labels = map[string]string{schedulinggroup.LabelGroup: group}
		}
		b.Name += "-" + group
		return b
	}
	bindings := []placementv1beta1.BindingObj{
		inGroup(bindingAt("m1", placementv1beta1.BindingStateBound, "s"), ""),
		inGroup(bindingAt("m2", placementv1beta1.BindingStateBound, "s"), "db"),
		inGroup(bindingAt("m3", placementv1beta1.BindingStateScheduled, "s"), "gone"),
		inGroup(bindingAt("m4", placementv1beta1.BindingStateUnscheduled, "s"), "gone"),
	}
	got := describe(planStaleGroups(bindings, []string{"", "db"}))
	want := planned{Spec: []string{`m3 Scheduled→Unscheduled if="Scheduled" fields=[clusterDecision schedulingPolicySnapshotName state]`}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("planStaleGroups (-want +got):\n%s", diff)
	}
}

func TestMisplacedTransition(t *testing.T) {
	misplaced := &metav1.Condition{Reason: placementv1beta1.ReasonMisplaced}
	scheduled := &metav1.Condition{Reason: placementv1beta1.ReasonScheduled}
	for _, tc := range []struct {
		name                string
		was                 *metav1.Condition
		misplaced, evicting string
		want                string
	}{
		{"a cluster that stops matching is announced", scheduled, "labels", "", placementv1beta1.ReasonMisplaced},
		{"a new binding already misplaced is announced", nil, "labels", "", placementv1beta1.ReasonMisplaced},
		{"a cluster still misplaced is not announced again", misplaced, "labels", "", ""},
		{"a cluster that matches again is announced", misplaced, "", "", placementv1beta1.ReasonScheduled},
		{"a misplaced cluster now being evicted is not announced as matching", misplaced, "", "evicting", ""},
		{"nothing changes, nothing is announced", scheduled, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := misplacedTransition(tc.was, tc.misplaced, tc.evicting); got != tc.want {
				t.Errorf("misplacedTransition = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSameVerdict(t *testing.T) {
	was := &metav1.Condition{Type: placementv1beta1.ConditionScheduled, Status: metav1.ConditionTrue, Reason: placementv1beta1.ReasonScheduled,
		Message: "picked", ObservedGeneration: 1}
	for _, tc := range []struct {
		name    string
		was     *metav1.Condition
		status  metav1.ConditionStatus
		reason  string
		message string
		want    bool
	}{
		{"the same verdict at a newer generation is not written again", was, metav1.ConditionTrue, placementv1beta1.ReasonScheduled, "picked", true},
		{"a new binding, picked, needs no condition", nil, metav1.ConditionTrue, placementv1beta1.ReasonScheduled, "picked", true},
		{"a new binding already misplaced gets the condition", nil, metav1.ConditionFalse, placementv1beta1.ReasonMisplaced, "labels", false},
		{"a new binding being evicted gets the condition", nil, metav1.ConditionFalse, placementv1beta1.ReasonEvicting, "tainted", false},
		{"another status is written", was, metav1.ConditionFalse, placementv1beta1.ReasonScheduled, "picked", false},
		{"another reason is written", was, metav1.ConditionTrue, placementv1beta1.ReasonMisplaced, "picked", false},
		{"another message (new scores) is written", was, metav1.ConditionTrue, placementv1beta1.ReasonScheduled, "picked again", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameVerdict(tc.was, tc.status, tc.reason, tc.message); got != tc.want {
				t.Errorf("sameVerdict = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFencedCreates(t *testing.T) {
	fenced := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, Fencing: &placementv1beta1.FencingPolicy{}}
	unfenced := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN}
	createOn := func(cluster string) []bindingCreate { return []bindingCreate{{cluster: cluster}} }
	tests := []struct {
		name        string
		policy      *placementv1beta1.PlacementPolicy
		existing    []placementv1beta1.BindingObj
		selected    []string
		wantCreate  []string
		wantLeaving []string
	}{
		{
			name:       "a fenced placement on no cluster yet starts at once",
			policy:     fenced,
			selected:   []string{"member-2"},
			wantCreate: []string{"member-2"},
		},
		{
			name:        "a fenced placement does not start elsewhere while the binding it leaves is unscheduled",
			policy:      fenced,
			existing:    []placementv1beta1.BindingObj{bindingAt("member-1", placementv1beta1.BindingStateUnscheduled, "s")},
			selected:    []string{"member-2"},
			wantLeaving: []string{"member-1"},
		},
		{
			name:        "a fenced placement does not start elsewhere while the binding it leaves is being deleted",
			policy:      fenced,
			existing:    []placementv1beta1.BindingObj{deleting(bindingAt("member-1", placementv1beta1.BindingStateUnscheduled, "s"))},
			selected:    []string{"member-2"},
			wantLeaving: []string{"member-1"},
		},
		{
			name:        "a fenced placement does not start elsewhere in the cycle that unschedules its bound binding",
			policy:      fenced,
			existing:    []placementv1beta1.BindingObj{bindingAt("member-1", placementv1beta1.BindingStateBound, "s")},
			selected:    []string{"member-2"},
			wantLeaving: []string{"member-1"},
		},
		{
			name:       "a fenced placement starts once the binding it left is gone",
			policy:     fenced,
			selected:   []string{"member-2"},
			wantCreate: []string{"member-2"},
		},
		{
			name:       "a placement without fencing starts elsewhere while the binding it leaves is still there",
			policy:     unfenced,
			existing:   []placementv1beta1.BindingObj{bindingAt("member-1", placementv1beta1.BindingStateBound, "s")},
			selected:   []string{"member-2"},
			wantCreate: []string{"member-2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var creates []bindingCreate
			for _, c := range tt.selected {
				creates = append(creates, createOn(c)...)
			}
			got, leaving := fencedCreates(tt.policy, creates, tt.existing, tt.selected)
			var gotClusters []string
			for _, c := range got {
				gotClusters = append(gotClusters, c.cluster)
			}
			if diff := cmp.Diff(tt.wantCreate, gotClusters); diff != "" {
				t.Errorf("created (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLeaving, leaving); diff != "" {
				t.Errorf("leaving (-want +got):\n%s", diff)
			}
		})
	}
}

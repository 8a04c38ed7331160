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

package placement

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

func placementAt(gen int64, policy *placementv1beta1.PlacementPolicy) *placementv1beta1.ClusterResourcePlacement {
	return &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: gen},
		Spec:       placementv1beta1.PlacementSpec{Policy: policy},
	}
}

// external makes a placement External: only staged update runs move its bindings.
func external(crp *placementv1beta1.ClusterResourcePlacement) *placementv1beta1.ClusterResourcePlacement {
	crp.Spec.Strategy.Type = placementv1beta1.ExternalRolloutStrategyType
	return crp
}

// heldBy is a binding on snapshot whose rollout the rolling update holds, with
// the rollout controller's message.
func heldBy(cluster, snapshot, why string) placementv1beta1.ClusterResourceBinding {
	b := bindingWith(cluster, snapshot, 5, "")
	conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionRolloutStarted, metav1.ConditionFalse, placementv1beta1.ReasonRolloutNotStartedYet, why, 2)
	return b
}

// unscheduled is b after the scheduler dropped its cluster.
func unscheduled(b placementv1beta1.ClusterResourceBinding) placementv1beta1.ClusterResourceBinding {
	b.Spec.State = placementv1beta1.BindingStateUnscheduled
	return b
}

// laterConditions are the placement conditions after Scheduled.
func laterConditions() []string {
	var out []string
	for _, stage := range stages {
		out = append(out, placementv1beta1.ClusterResourcePlacementConditionType(stage.condType))
	}
	return out
}

// want is one expected condition: its status and a part of its message.
type want struct {
	status metav1.ConditionStatus
	msg    string
}

func scheduledSnapshot(status metav1.ConditionStatus, reason, msg string) *placementv1beta1.ClusterSchedulingPolicySnapshot {
	s := &placementv1beta1.ClusterSchedulingPolicySnapshot{}
	conditions.Set(&s.Status.Conditions, placementv1beta1.ConditionScheduled, status, reason, msg, 1)
	return s
}

func resourceSnapshot(name, index string) *placementv1beta1.ClusterResourceSnapshot {
	return &placementv1beta1.ClusterResourceSnapshot{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{placementv1beta1.LabelResourceIndex: index}}}
}

// bindingWith is a binding to cluster on snapshot whose stages up to and
// including the last of trueStages are True, then one False stage if failed.
func bindingWith(cluster, snapshot string, trueStages int, failed string) placementv1beta1.ClusterResourceBinding {
	b := placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "p-" + cluster, Generation: 2},
		Spec: placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateBound, TargetCluster: cluster,
			ResourceSnapshotName: snapshot},
	}
	for i, stage := range stages {
		switch {
		case i < trueStages:
			conditions.Set(&b.Status.Conditions, stage.condType, metav1.ConditionTrue, stage.condType, "ok", 2)
		case i == trueStages && failed != "":
			conditions.Set(&b.Status.Conditions, stage.condType, metav1.ConditionFalse, "Failed", failed, 2)
		}
	}
	return b
}

func TestComputeStatus(t *testing.T) {
	avail := placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionAvailable)
	applied := placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionApplied)
	sched := placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionScheduled)
	for _, tc := range []struct {
		name      string
		scope     *scope
		bindings  []placementv1beta1.ClusterResourceBinding
		want      map[string]metav1.ConditionStatus
		wantMsg   map[string]string
		wantSlots int
		// wantAbsent are condition types the placement must not have.
		wantAbsent []string
		// wantCluster are per-cluster conditions, by cluster and type.
		wantCluster map[string]map[string]want
		// wantNoWaitingFor are clusters no condition may say it waits for.
		wantNoWaitingFor []string
	}{
		{
			name: "every cluster available makes the placement available",
			scope: &scope{placement: placementAt(3, nil), policySnapshot: scheduledSnapshot(metav1.ConditionTrue, "Scheduled", "2 clusters"),
				resourceSnapshot: resourceSnapshot("p-0-snapshot", "0")},
			bindings:  []placementv1beta1.ClusterResourceBinding{bindingWith("a", "p-0-snapshot", 5, ""), bindingWith("b", "p-0-snapshot", 5, "")},
			want:      map[string]metav1.ConditionStatus{sched: metav1.ConditionTrue, applied: metav1.ConditionTrue, avail: metav1.ConditionTrue},
			wantSlots: 2,
		},
		{
			name: "one cluster failing to apply makes the placement not applied, naming it",
			scope: &scope{placement: placementAt(3, nil), policySnapshot: scheduledSnapshot(metav1.ConditionTrue, "Scheduled", ""),
				resourceSnapshot: resourceSnapshot("p-0-snapshot", "0")},
			bindings:  []placementv1beta1.ClusterResourceBinding{bindingWith("a", "p-0-snapshot", 5, ""), bindingWith("b", "p-0-snapshot", 3, "no matches for kind Widget")},
			want:      map[string]metav1.ConditionStatus{applied: metav1.ConditionFalse, avail: metav1.ConditionUnknown},
			wantMsg:   map[string]string{applied: "b: no matches for kind Widget"},
			wantSlots: 2,
		},
		{
			name: "a binding still on an older snapshot is not available for the new one",
			scope: &scope{placement: placementAt(3, nil), policySnapshot: scheduledSnapshot(metav1.ConditionTrue, "Scheduled", ""),
				resourceSnapshot: resourceSnapshot("p-1-snapshot", "1")},
			bindings:  []placementv1beta1.ClusterResourceBinding{bindingWith("a", "p-0-snapshot", 5, "")},
			want:      map[string]metav1.ConditionStatus{avail: metav1.ConditionUnknown},
			wantSlots: 1,
		},
		{
			name: "an unfilled PickN slot is listed as not scheduled, saying why",
			scope: &scope{placement: placementAt(1, &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](3)}),
				policySnapshot:   scheduledSnapshot(metav1.ConditionFalse, placementv1beta1.ReasonSchedulingPolicyUnfulfilled, "2 of 3 clusters selected"),
				resourceSnapshot: resourceSnapshot("p-0-snapshot", "0")},
			bindings: []placementv1beta1.ClusterResourceBinding{bindingWith("a", "p-0-snapshot", 5, ""), bindingWith("b", "p-0-snapshot", 5, "")},
			want:     map[string]metav1.ConditionStatus{sched: metav1.ConditionFalse, avail: metav1.ConditionTrue},
			wantCluster: map[string]map[string]want{
				"": {placementv1beta1.ConditionScheduled: {metav1.ConditionFalse, "1 of 3 clusters could not be selected: no cluster fits: 2 of 3 clusters selected"}},
			},
			wantSlots: 3,
		},
		{
			name: "a PickN placement asking for more clusters than exist gets one entry for all it lacks, not one each",
			scope: &scope{placement: placementAt(1, &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](math.MaxInt32)}),
				policySnapshot:   scheduledSnapshot(metav1.ConditionFalse, placementv1beta1.ReasonSchedulingPolicyUnfulfilled, "2 of 2147483647 clusters selected"),
				resourceSnapshot: resourceSnapshot("p-0-snapshot", "0")},
			bindings: []placementv1beta1.ClusterResourceBinding{bindingWith("a", "p-0-snapshot", 5, ""), bindingWith("b", "p-0-snapshot", 5, "")},
			want:     map[string]metav1.ConditionStatus{sched: metav1.ConditionFalse, avail: metav1.ConditionTrue},
			wantCluster: map[string]map[string]want{
				"": {placementv1beta1.ConditionScheduled: {metav1.ConditionFalse, "2147483645 of 2147483647 clusters could not be selected"}},
			},
			wantSlots: 3,
		},
		{
			name:    "an unknown kind in the selectors is a scheduling failure with the reason",
			scope:   &scope{placement: placementAt(1, nil), selectErr: errors.New("the hub serves no selectable kind v1/Nope")},
			want:    map[string]metav1.ConditionStatus{sched: metav1.ConditionFalse},
			wantMsg: map[string]string{sched: "no selectable kind"},
		},
		{
			name: "a selector naming a reserved namespace is a scheduling failure, InvalidResourceSelectors, naming the namespace",
			scope: &scope{placement: placementAt(1, nil),
				selectErr: reservedSelectors(pipeline.PlacementKey{Name: "p"}, []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "kube-system"}})},
			want:    map[string]metav1.ConditionStatus{sched: metav1.ConditionFalse},
			wantMsg: map[string]string{sched: "names namespace kube-system, which is reserved"},
		},
		{
			name: "reserved namespaces a label selector matches are named in the Scheduled message",
			scope: &scope{placement: placementAt(1, nil), policySnapshot: scheduledSnapshot(metav1.ConditionTrue, "Scheduled", "3 clusters"),
				reservedLeftOut: []string{"kube-system"}},
			want:    map[string]metav1.ConditionStatus{sched: metav1.ConditionTrue},
			wantMsg: map[string]string{sched: "3 clusters; reserved namespace(s) kube-system match a Namespace selector and are left out"},
		},
		{
			name: "an unknown kind leaves no later condition waiting on clusters, even where bindings exist",
			scope: &scope{placement: placementAt(1, nil), selectErr: errors.New("the hub serves no selectable kind v1/Nope"),
				policySnapshot: scheduledSnapshot(metav1.ConditionTrue, "Scheduled", "3 clusters")},
			bindings:   []placementv1beta1.ClusterResourceBinding{bindingWith("a", "", 0, ""), bindingWith("b", "", 0, "")},
			want:       map[string]metav1.ConditionStatus{sched: metav1.ConditionFalse},
			wantAbsent: []string{placementv1beta1.ConditionClusterResourcePlacementRolloutStarted, avail},
		},
		{
			name: "a placement nothing fits has no later conditions and waits for no cluster, even with bindings being unscheduled",
			scope: &scope{placement: placementAt(2, nil), policySnapshot: scheduledSnapshot(metav1.ConditionFalse, placementv1beta1.ReasonScheduleFailed,
				"0 clusters selected; member-2: the cluster does not match the required affinity; member-3: the cluster is tainted"),
				resourceSnapshot: resourceSnapshot("p-0-snapshot", "0")},
			bindings:         []placementv1beta1.ClusterResourceBinding{unscheduled(bindingWith("member-2", "p-0-snapshot", 5, "")), unscheduled(bindingWith("member-3", "", 0, ""))},
			want:             map[string]metav1.ConditionStatus{sched: metav1.ConditionFalse},
			wantMsg:          map[string]string{sched: "member-2: the cluster does not match"},
			wantAbsent:       laterConditions(),
			wantNoWaitingFor: []string{"member-2", "member-3"},
		},
		{
			name: "a PickN placement nothing fits lists its slots in one entry as not scheduled, saying why, and nothing later",
			scope: &scope{placement: placementAt(1, &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](2)}),
				policySnapshot:   scheduledSnapshot(metav1.ConditionFalse, placementv1beta1.ReasonScheduleFailed, "0 of 2 clusters selected; member-2: the cluster is tainted"),
				resourceSnapshot: resourceSnapshot("p-0-snapshot", "0")},
			bindings:         []placementv1beta1.ClusterResourceBinding{unscheduled(bindingWith("member-2", "p-0-snapshot", 5, ""))},
			want:             map[string]metav1.ConditionStatus{sched: metav1.ConditionFalse},
			wantAbsent:       laterConditions(),
			wantNoWaitingFor: []string{"member-2"},
			wantCluster: map[string]map[string]want{
				"": {placementv1beta1.ConditionScheduled: {metav1.ConditionFalse, "2 of 2 clusters could not be selected: no cluster fits: 0 of 2 clusters selected; member-2: the cluster is tainted"}},
			},
			wantSlots: 1,
		},
		{
			name: "an unfilled PickN slot before the scheduler decides is pending, not failed",
			scope: &scope{placement: placementAt(1, &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1)}),
				resourceSnapshot: resourceSnapshot("p-0-snapshot", "0")},
			want:       map[string]metav1.ConditionStatus{sched: metav1.ConditionUnknown},
			wantAbsent: laterConditions(),
			wantCluster: map[string]map[string]want{
				"": {placementv1beta1.ConditionScheduled: {metav1.ConditionUnknown, "1 of 1 clusters: waiting for the scheduler"}},
			},
			wantSlots: 1,
		},
		{
			name: "an External placement's cluster held on an older index by the runs is available, saying which index it runs",
			scope: &scope{placement: external(placementAt(2, nil)), policySnapshot: scheduledSnapshot(metav1.ConditionTrue, "Scheduled", ""),
				resourceSnapshot: resourceSnapshot("p-1-snapshot", "1")},
			bindings: []placementv1beta1.ClusterResourceBinding{bindingWith("a", "p-0-snapshot", 5, ""), bindingWith("b", "p-1-snapshot", 5, "")},
			want:     map[string]metav1.ConditionStatus{applied: metav1.ConditionTrue, avail: metav1.ConditionTrue},
			wantMsg:  map[string]string{avail: "a runs resource snapshot index 0; the latest is 1"},
			wantCluster: map[string]map[string]want{
				"a": {
					placementv1beta1.ConditionWorkSynchronized: {metav1.ConditionTrue, "runs resource snapshot index 0; the latest is 1"},
					placementv1beta1.ConditionApplied:          {metav1.ConditionTrue, "runs resource snapshot index 0; the latest is 1"},
					placementv1beta1.ConditionAvailable:        {metav1.ConditionTrue, "runs resource snapshot index 0; the latest is 1"},
				},
				"b": {placementv1beta1.ConditionAvailable: {metav1.ConditionTrue, "ok"}},
			},
			wantSlots: 2,
		},
		{
			name: "an External placement rolled back to an older index everywhere is available",
			scope: &scope{placement: external(placementAt(2, nil)), policySnapshot: scheduledSnapshot(metav1.ConditionTrue, "Scheduled", ""),
				resourceSnapshot: resourceSnapshot("p-1-snapshot", "1")},
			bindings: []placementv1beta1.ClusterResourceBinding{bindingWith("a", "p-0-snapshot", 5, ""), bindingWith("b", "p-0-snapshot", 5, "")},
			want:     map[string]metav1.ConditionStatus{avail: metav1.ConditionTrue},
			wantMsg:  map[string]string{avail: "a, b run resource snapshot index 0; the latest is 1"},
			wantCluster: map[string]map[string]want{
				"b": {placementv1beta1.ConditionAvailable: {metav1.ConditionTrue, "runs resource snapshot index 0"}},
			},
			wantSlots: 2,
		},
		{
			name: "an External placement's cluster failing on an older index is judged on that index",
			scope: &scope{placement: external(placementAt(2, nil)), policySnapshot: scheduledSnapshot(metav1.ConditionTrue, "Scheduled", ""),
				resourceSnapshot: resourceSnapshot("p-1-snapshot", "1")},
			bindings: []placementv1beta1.ClusterResourceBinding{bindingWith("a", "p-0-snapshot", 3, "no matches for kind Widget")},
			want:     map[string]metav1.ConditionStatus{applied: metav1.ConditionFalse},
			wantMsg:  map[string]string{applied: "a: runs resource snapshot index 0; the latest is 1: no matches for kind Widget"},
			wantCluster: map[string]map[string]want{
				"a": {placementv1beta1.ConditionAvailable: {metav1.ConditionUnknown, "waiting for Applied"}},
			},
			wantSlots: 1,
		},
		{
			name: "an External placement's cluster on a snapshot that is gone names it",
			scope: &scope{placement: external(placementAt(2, nil)), policySnapshot: scheduledSnapshot(metav1.ConditionTrue, "Scheduled", ""),
				resourceSnapshot: resourceSnapshot("p-1-snapshot", "1")},
			bindings: []placementv1beta1.ClusterResourceBinding{bindingWith("a", "p-gone-snapshot", 5, "")},
			want:     map[string]metav1.ConditionStatus{avail: metav1.ConditionTrue},
			wantCluster: map[string]map[string]want{
				"a": {placementv1beta1.ConditionAvailable: {metav1.ConditionTrue, "runs resource snapshot p-gone-snapshot, which no longer exists; the latest is 1"}},
			},
			wantSlots: 1,
		},
		{
			name: "a rolling update held by a failed cluster says which cluster holds it",
			scope: &scope{placement: placementAt(2, nil), policySnapshot: scheduledSnapshot(metav1.ConditionTrue, "Scheduled", ""),
				resourceSnapshot: resourceSnapshot("p-1-snapshot", "1")},
			bindings: []placementv1beta1.ClusterResourceBinding{
				bindingWith("a", "p-1-snapshot", 5, ""),
				bindingWith("b", "p-1-snapshot", 4, "deployment web has 0 of 2 replicas ready"),
				heldBy("c", "p-0-snapshot", "resource snapshot p-1-snapshot (index 1) waits: maxUnavailable 1 of 3 clusters is used up: waiting for b"),
			},
			want: map[string]metav1.ConditionStatus{
				placementv1beta1.ConditionClusterResourcePlacementRolloutStarted: metav1.ConditionFalse,
				avail: metav1.ConditionFalse,
			},
			wantMsg: map[string]string{
				placementv1beta1.ConditionClusterResourcePlacementRolloutStarted: "1 of 3 clusters: c; c: resource snapshot p-1-snapshot (index 1) waits: maxUnavailable 1 of 3 clusters is used up: waiting for b",
				avail: "1 of 3 clusters: b; b: deployment web has 0 of 2 replicas ready",
			},
			wantCluster: map[string]map[string]want{
				"c": {
					placementv1beta1.ConditionRolloutStarted: {metav1.ConditionFalse, "waiting for b"},
					placementv1beta1.ConditionAvailable:      {metav1.ConditionUnknown, "waiting for RolloutStarted"},
				},
			},
			wantSlots: 3,
		},
		{
			name: "a rolling update's cluster still on an older index is not yet available for the latest, saying which index it runs",
			scope: &scope{placement: placementAt(2, nil), policySnapshot: scheduledSnapshot(metav1.ConditionTrue, "Scheduled", ""),
				resourceSnapshot: resourceSnapshot("p-1-snapshot", "1")},
			bindings: []placementv1beta1.ClusterResourceBinding{bindingWith("a", "p-0-snapshot", 5, "")},
			want:     map[string]metav1.ConditionStatus{avail: metav1.ConditionUnknown},
			wantCluster: map[string]map[string]want{
				"a": {
					placementv1beta1.ConditionWorkSynchronized: {metav1.ConditionUnknown, "runs resource snapshot index 0; the latest is 1: rolling out the latest resources"},
					placementv1beta1.ConditionAvailable:        {metav1.ConditionUnknown, "waiting for WorkSynchronized"},
				},
			},
			wantSlots: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bindings := make([]placementv1beta1.BindingObj, 0, len(tc.bindings))
			for i := range tc.bindings {
				bindings = append(bindings, &tc.bindings[i])
			}
			computeStatus(tc.scope, bindings, map[string]string{"p-0-snapshot": "0", "p-1-snapshot": "1"})
			st := tc.scope.placement.GetPlacementStatus()
			for typ, want := range tc.want {
				c := conditions.Get(st.Conditions, typ)
				if c == nil || c.Status != want {
					t.Errorf("%s = %+v, want %s", typ, c, want)
					continue
				}
				if c.ObservedGeneration != tc.scope.placement.GetGeneration() {
					t.Errorf("%s observedGeneration = %d, want %d", typ, c.ObservedGeneration, tc.scope.placement.GetGeneration())
				}
				if m := tc.wantMsg[typ]; m != "" && !strings.Contains(c.Message, m) {
					t.Errorf("%s message %q does not contain %q", typ, c.Message, m)
				}
			}
			for _, typ := range tc.wantAbsent {
				if c := conditions.Get(st.Conditions, typ); c != nil {
					t.Errorf("%s = %+v, want no such condition", typ, c)
				}
			}
			for cluster, conds := range tc.wantCluster {
				var pcs *placementv1beta1.PerClusterPlacementStatus
				for i := range st.PlacementStatuses {
					if st.PlacementStatuses[i].ClusterName == cluster {
						pcs = &st.PlacementStatuses[i]
					}
				}
				if pcs == nil {
					t.Errorf("no per-cluster status for %s", cluster)
					continue
				}
				for typ, w := range conds {
					c := conditions.Get(pcs.Conditions, typ)
					if c == nil || c.Status != w.status || !strings.Contains(c.Message, w.msg) {
						t.Errorf("%s on %s = %+v, want %s with a message containing %q", typ, cluster, c, w.status, w.msg)
					}
				}
			}
			for _, cluster := range tc.wantNoWaitingFor {
				all := append([]metav1.Condition(nil), st.Conditions...)
				for _, pcs := range st.PlacementStatuses {
					all = append(all, pcs.Conditions...)
				}
				for _, c := range all {
					if strings.Contains(c.Message, "waiting for") && strings.Contains(c.Message, cluster) {
						t.Errorf("%s says it waits for %s, which is not a target: %q", c.Type, cluster, c.Message)
					}
				}
			}
			if got := len(st.PlacementStatuses); got != tc.wantSlots {
				t.Errorf("%d per-cluster statuses, want %d", got, tc.wantSlots)
			}
		})
	}
}

// Each cluster's status lists the override snapshots its binding applies.
func TestPerClusterStatusListsTheOverrides(t *testing.T) {
	b := bindingWith("member-1", "s-1", len(stages), "")
	b.Spec.ClusterResourceOverrideSnapshots = []string{"cro-0"}
	b.Spec.ResourceOverrideSnapshots = []placementv1beta1.NamespacedName{{Namespace: "app", Name: "ro-2"}}
	got := perClusterStatus(&b, "s-1", map[string]string{"s-1": "1"}, false, 1)
	if diff := cmp.Diff([]string{"cro-0"}, got.ApplicableClusterResourceOverrides); diff != "" {
		t.Errorf("applicableClusterResourceOverrides (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]placementv1beta1.NamespacedName{{Namespace: "app", Name: "ro-2"}}, got.ApplicableResourceOverrides); diff != "" {
		t.Errorf("applicableResourceOverrides (-want +got):\n%s", diff)
	}
	none := perClusterStatus(new(bindingWith("member-2", "s-1", len(stages), "")), "s-1", nil, false, 1)
	if none.ApplicableClusterResourceOverrides != nil || none.ApplicableResourceOverrides != nil {
		t.Errorf("a binding without overrides lists %v %v", none.ApplicableClusterResourceOverrides, none.ApplicableResourceOverrides)
	}
}

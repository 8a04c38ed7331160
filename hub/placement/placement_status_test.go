package placement

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

func placementAt(gen int64, policy *placementv1beta1.PlacementPolicy) *placementv1beta1.ClusterResourcePlacement {
	return &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: gen},
		Spec:       placementv1beta1.PlacementSpec{Policy: policy},
	}
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
			name: "an unfilled PickN slot is listed as not scheduled",
			scope: &scope{placement: placementAt(1, &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](3)}),
				policySnapshot:   scheduledSnapshot(metav1.ConditionFalse, placementv1beta1.ReasonSchedulingPolicyUnfulfilled, "2 of 3 clusters selected"),
				resourceSnapshot: resourceSnapshot("p-0-snapshot", "0")},
			bindings:  []placementv1beta1.ClusterResourceBinding{bindingWith("a", "p-0-snapshot", 5, ""), bindingWith("b", "p-0-snapshot", 5, "")},
			want:      map[string]metav1.ConditionStatus{sched: metav1.ConditionFalse, avail: metav1.ConditionTrue},
			wantSlots: 3,
		},
		{
			name:    "an unknown kind in the selectors is a scheduling failure with the reason",
			scope:   &scope{placement: placementAt(1, nil), selectErr: errors.New("the hub serves no selectable kind v1/Nope")},
			want:    map[string]metav1.ConditionStatus{sched: metav1.ConditionFalse},
			wantMsg: map[string]string{sched: "no selectable kind"},
		},
		{
			name: "an unknown kind leaves no later condition waiting on clusters, even where bindings exist",
			scope: &scope{placement: placementAt(1, nil), selectErr: errors.New("the hub serves no selectable kind v1/Nope"),
				policySnapshot: scheduledSnapshot(metav1.ConditionTrue, "Scheduled", "3 clusters")},
			bindings:   []placementv1beta1.ClusterResourceBinding{bindingWith("a", "", 0, ""), bindingWith("b", "", 0, "")},
			want:       map[string]metav1.ConditionStatus{sched: metav1.ConditionFalse},
			wantAbsent: []string{placementv1beta1.ConditionClusterResourcePlacementRolloutStarted, avail},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			computeStatus(tc.scope, tc.bindings, map[string]string{"p-0-snapshot": "0", "p-1-snapshot": "1"})
			st := tc.scope.placement.Status
			for typ, want := range tc.want {
				c := conditions.Get(st.Conditions, typ)
				if c == nil || c.Status != want {
					t.Errorf("%s = %+v, want %s", typ, c, want)
					continue
				}
				if c.ObservedGeneration != tc.scope.placement.Generation {
					t.Errorf("%s observedGeneration = %d, want %d", typ, c.ObservedGeneration, tc.scope.placement.Generation)
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
			if got := len(st.PlacementStatuses); got != tc.wantSlots {
				t.Errorf("%d per-cluster statuses, want %d", got, tc.wantSlots)
			}
		})
	}
}

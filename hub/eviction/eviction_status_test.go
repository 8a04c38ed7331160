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

package eviction

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func placementOfType(typ placementv1beta1.PlacementType) *placementv1beta1.ClusterResourcePlacement {
	return &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec:       placementv1beta1.PlacementSpec{Policy: &placementv1beta1.PlacementPolicy{PlacementType: typ}},
	}
}

func deleting(crp *placementv1beta1.ClusterResourcePlacement) *placementv1beta1.ClusterResourcePlacement {
	crp.DeletionTimestamp = ptr.To(metav1.Now())
	return crp
}

func TestValidCondition(t *testing.T) {
	tests := []struct {
		name      string
		placement *placementv1beta1.ClusterResourcePlacement
		onCluster bool
		want      condition
	}{
		{
			name:      "a placement on the cluster can be evicted",
			placement: placementOfType(placementv1beta1.PickN),
			onCluster: true,
			want:      condition{metav1.ConditionTrue, placementv1beta1.ReasonEvictionValid, "ClusterResourcePlacement app is on member cluster member-2"},
		},
		{
			name:      "a placement without a policy (PickAll) can be evicted",
			placement: &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "app"}},
			onCluster: true,
			want:      condition{metav1.ConditionTrue, placementv1beta1.ReasonEvictionValid, "ClusterResourcePlacement app is on member cluster member-2"},
		},
		{
			name: "a missing placement is not found",
			want: condition{metav1.ConditionFalse, placementv1beta1.ReasonPlacementNotFound, "ClusterResourcePlacement app does not exist"},
		},
		{
			name:      "a placement being deleted cannot be evicted",
			placement: deleting(placementOfType(placementv1beta1.PickAll)),
			onCluster: true,
			want:      condition{metav1.ConditionFalse, placementv1beta1.ReasonPlacementDeleting, "ClusterResourcePlacement app is being deleted"},
		},
		{
			name:      "a PickFixed placement is never evicted",
			placement: placementOfType(placementv1beta1.PickFixed),
			onCluster: true,
			want:      condition{metav1.ConditionFalse, placementv1beta1.ReasonPickFixedNotEvictable, "PickFixed placements are never moved; change clusterNames instead"},
		},
		{
			name:      "a placement that is not on the cluster has no binding to evict",
			placement: placementOfType(placementv1beta1.PickAll),
			want:      condition{metav1.ConditionFalse, placementv1beta1.ReasonBindingNotFound, "ClusterResourcePlacement app is not on member cluster member-2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := validCondition("app", "member-2", tt.placement, tt.onCluster)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(condition{})); diff != "" {
				t.Errorf("validCondition() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExecutedCondition(t *testing.T) {
	tests := []struct {
		name     string
		budget   string
		decision Decision
		err      error
		want     condition
	}{
		{
			name:     "without a budget the eviction executes",
			decision: Decision{Allowed: true},
			want: condition{metav1.ConditionTrue, placementv1beta1.ReasonEvicted, "no disruption budget applies: " +
				"ClusterResourcePlacement app leaves member cluster member-2 and is not placed there again until this eviction is deleted"},
		},
		{
			name:     "a budget that allows it is quoted",
			budget:   "app",
			decision: Decision{Allowed: true, Message: "evicting member-2 leaves 2 of 3 clusters available; the budget requires minAvailable 2"},
			want: condition{metav1.ConditionTrue, placementv1beta1.ReasonEvicted, "evicting member-2 leaves 2 of 3 clusters available; the budget requires minAvailable 2: " +
				"ClusterResourcePlacement app leaves member cluster member-2 and is not placed there again until this eviction is deleted"},
		},
		{
			name:     "a budget that refuses it blocks it with the numbers",
			budget:   "app",
			decision: Decision{Message: "evicting member-2 would leave 1 of 3 clusters available; the budget requires minAvailable 2"},
			want: condition{metav1.ConditionFalse, placementv1beta1.ReasonBlockedByDisruptionBudget,
				"evicting member-2 would leave 1 of 3 clusters available; the budget requires minAvailable 2"},
		},
		{
			name:   "a budget that cannot be evaluated blocks it",
			budget: "app",
			err:    errors.New("both minAvailable and maxUnavailable are set; set exactly one"),
			want: condition{metav1.ConditionFalse, placementv1beta1.ReasonBlockedByDisruptionBudget,
				"ClusterResourcePlacementDisruptionBudget app cannot be evaluated: both minAvailable and maxUnavailable are set; set exactly one"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := executedCondition("app", "member-2", tt.budget, tt.decision, tt.err)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(condition{})); diff != "" {
				t.Errorf("executedCondition() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsFinal(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status}
	}
	valid, invalid := cond(placementv1beta1.ConditionEvictionValid, metav1.ConditionTrue), cond(placementv1beta1.ConditionEvictionValid, metav1.ConditionFalse)
	executed, blocked := cond(placementv1beta1.ConditionEvictionExecuted, metav1.ConditionTrue), cond(placementv1beta1.ConditionEvictionExecuted, metav1.ConditionFalse)
	tests := []struct {
		name  string
		conds []metav1.Condition
		want  bool
	}{
		{name: "a new eviction is not decided"},
		{name: "an invalid eviction is final", conds: []metav1.Condition{invalid}, want: true},
		{name: "an executed eviction is final", conds: []metav1.Condition{valid, executed}, want: true},
		{name: "a blocked eviction is tried again", conds: []metav1.Condition{valid, blocked}},
		{name: "an eviction that became invalid while blocked is final", conds: []metav1.Condition{invalid, blocked}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &placementv1beta1.ClusterResourcePlacementEviction{Status: placementv1beta1.PlacementEvictionStatus{Conditions: tt.conds}}
			if got := isFinal(ev); got != tt.want {
				t.Errorf("isFinal() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStandingOf(t *testing.T) {
	binding := func(cluster string, available bool) placementv1beta1.ClusterResourceBinding {
		b := placementv1beta1.ClusterResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Generation: 1},
			Spec:       placementv1beta1.ResourceBindingSpec{TargetCluster: cluster, State: placementv1beta1.BindingStateBound},
		}
		if available {
			b.Status.Conditions = []metav1.Condition{{Type: placementv1beta1.ConditionAvailable, Status: metav1.ConditionTrue, ObservedGeneration: 1}}
		}
		return b
	}
	three := []placementv1beta1.ClusterResourceBinding{binding("m1", true), binding("m2", true), binding("m3", false)}
	pickN := func(n int32) *placementv1beta1.PlacementPolicy {
		return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: &n}
	}
	tests := []struct {
		name     string
		policy   *placementv1beta1.PlacementPolicy
		cluster  string
		evicting map[string]bool
		want     Standing
	}{
		{name: "PickAll counts its bindings and the available ones", cluster: "m1", want: Standing{Target: 3, Available: 2, EvicteeAvailable: true}},
		{name: "an unavailable evictee is not among the available", cluster: "m3", want: Standing{Target: 3, Available: 2}},
		{name: "PickN targets numberOfClusters", policy: pickN(4), cluster: "m1", want: Standing{Target: 4, Available: 2, EvicteeAvailable: true}},
		{
			name: "a cluster already being evicted counts as unavailable", cluster: "m2", evicting: map[string]bool{"m1": true},
			want: Standing{Target: 3, Available: 1, EvicteeAvailable: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, standingOf(tt.policy, three, tt.cluster, tt.evicting)); diff != "" {
				t.Errorf("standingOf() (-want +got):\n%s", diff)
			}
		})
	}
}

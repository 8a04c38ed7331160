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

package v1beta1_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

func eviction(placement, cluster string) *placementv1beta1.ClusterResourcePlacementEviction {
	return &placementv1beta1.ClusterResourcePlacementEviction{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "evict-"},
		Spec:       placementv1beta1.PlacementEvictionSpec{PlacementName: placement, ClusterName: cluster},
	}
}

func TestEvictionValidation(t *testing.T) {
	tests := []struct {
		name        string
		eviction    *placementv1beta1.ClusterResourcePlacementEviction
		wantRefusal string
	}{
		{
			name:     "an eviction naming a placement and a cluster is accepted",
			eviction: eviction("crp-1", "member-1"),
		},
		{
			name:        "an eviction without a cluster is refused",
			eviction:    eviction("crp-1", ""),
			wantRefusal: "spec.clusterName in body should be at least 1 chars long",
		},
		{
			name:        "an eviction without a placement is refused",
			eviction:    eviction("", "member-1"),
			wantRefusal: "spec.placementName in body should be at least 1 chars long",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := env.Client.Create(context.Background(), tc.eviction)
			testenv.CheckValidation(t, err, tc.wantRefusal)
		})
	}
}

func TestEvictionSpecIsImmutable(t *testing.T) {
	ctx := context.Background()
	e := eviction("crp-1", "member-1")
	if err := env.Client.Create(ctx, e); err != nil {
		t.Fatalf("failed to create the eviction: %v", err)
	}

	t.Run("the outcome is kept in the status and printed", func(t *testing.T) {
		now := metav1.Now().Rfc3339Copy()
		status := placementv1beta1.PlacementEvictionStatus{Conditions: []metav1.Condition{
			{Type: placementv1beta1.ConditionEvictionValid, Status: metav1.ConditionTrue, Reason: placementv1beta1.ReasonEvictionValid, LastTransitionTime: now},
			{Type: placementv1beta1.ConditionEvictionExecuted, Status: metav1.ConditionFalse, Reason: placementv1beta1.ReasonBlockedByDisruptionBudget, LastTransitionTime: now},
		}}
		e.Status = status
		if err := env.Client.Status().Update(ctx, e); err != nil {
			t.Fatalf("failed to update the status: %v", err)
		}
		if diff := cmp.Diff(status, e.Status); diff != "" {
			t.Errorf("status after the update (-want +got):\n%s", diff)
		}
		table, err := env.Table(ctx, placementv1beta1.GroupVersion.WithResource("clusterresourceplacementevictions"), "", e.Name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := testenv.FirstRow(table)
		if err != nil {
			t.Fatal(err)
		}
		want := []testenv.TableColumn{
			{Name: "Name", Value: e.Name},
			{Name: "VALID", Value: "True"},
			{Name: "EXECUTED", Value: "False"},
			{Name: "AGE", Value: testenv.AgeValue},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("print columns (-want +got):\n%s", diff)
		}
	})

	t.Run("a change of cluster is refused", func(t *testing.T) {
		e.Spec.ClusterName = "member-2"
		err := env.Client.Update(ctx, e)
		testenv.CheckValidation(t, err, "spec is immutable")
	})
}

func TestDisruptionBudgetValidation(t *testing.T) {
	budget := func(maxUnavailable, minAvailable *intstr.IntOrString) *placementv1beta1.ClusterResourcePlacementDisruptionBudget {
		return &placementv1beta1.ClusterResourcePlacementDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "crp-"},
			Spec:       placementv1beta1.PlacementDisruptionBudgetSpec{MaxUnavailable: maxUnavailable, MinAvailable: minAvailable},
		}
	}
	tests := []struct {
		name        string
		budget      *placementv1beta1.ClusterResourcePlacementDisruptionBudget
		wantRefusal string
	}{
		{
			name:   "a budget of one unavailable cluster is accepted",
			budget: budget(ptr.To(intstr.FromInt32(1)), nil),
		},
		{
			name:   "a budget of half the clusters available is accepted",
			budget: budget(nil, ptr.To(intstr.FromString("50%"))),
		},
		{
			name:        "a budget with both maxUnavailable and minAvailable is refused",
			budget:      budget(ptr.To(intstr.FromInt32(1)), ptr.To(intstr.FromInt32(1))),
			wantRefusal: "exactly one of maxUnavailable and minAvailable must be set",
		},
		{
			name:        "a budget with neither maxUnavailable nor minAvailable is refused",
			budget:      budget(nil, nil),
			wantRefusal: "exactly one of maxUnavailable and minAvailable must be set",
		},
		{
			name:        "a percentage over 100% is refused",
			budget:      budget(nil, ptr.To(intstr.FromString("101%"))),
			wantRefusal: "spec.minAvailable: Invalid value: \"101%\": must be a non-negative integer or a percentage from 0% to 100%",
		},
		{
			name:        "a negative number is refused",
			budget:      budget(ptr.To(intstr.FromInt32(-1)), nil),
			wantRefusal: "must be a non-negative integer or a percentage from 0% to 100%",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := env.Client.Create(context.Background(), tc.budget)
			testenv.CheckValidation(t, err, tc.wantRefusal)
		})
	}
}

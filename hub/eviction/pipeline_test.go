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

package eviction_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/workgen"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// activeClusters returns the clusters of the placement's active bindings.
func activeClusters(placement string) ([]string, error) {
	list := &placementv1beta1.ClusterResourceBindingList{}
	if err := env.Client.List(context.Background(), list, client.MatchingLabels{placementv1beta1.LabelPlacementName: placement}); err != nil {
		return nil, err
	}
	var out []string
	for _, b := range list.Items {
		if b.DeletionTimestamp.IsZero() && b.Spec.State != placementv1beta1.BindingStateUnscheduled {
			out = append(out, b.Spec.TargetCluster)
		}
	}
	return out, nil
}

// The whole story of a PickN placement on one cluster: its budget keeps the only
// available cluster from being evicted; once the budget allows it, the eviction
// executes, the binding there goes, and the placement moves to another eligible
// cluster, never back while the eviction exists.
func TestEvictionMovesAPickNPlacement(t *testing.T) {
	ctx := context.Background()
	group := map[string]string{"group": "eviction-pickn"}
	testenv.ReadyMember(t, env.Client, "move-1", group)
	testenv.ReadyMember(t, env.Client, "move-2", group)
	startControllers(t, true)
	testenv.Create(t, env.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "move-app"}})
	policy := pickN(1)
	policy.Affinity = &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
			{LabelSelector: &metav1.LabelSelector{MatchLabels: group}},
		}},
	}}
	testenv.Create(t, env.Client, newPlacement("move-app", policy))

	// Without a Rand the scheduler picks the first by name.
	testenv.Eventually(t, 30*time.Second, func() error {
		got, err := activeClusters("move-app")
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0] != "move-1" {
			return fmt.Errorf("placement is on %v, want [move-1]", got)
		}
		return nil
	})
	// The member reports the Work available.
	work := &placementv1beta1.Work{}
	testenv.Eventually(t, 30*time.Second, func() error {
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace("move-1"), Name: workgen.WorkName("move-app")}, work); err != nil {
			return err
		}
		conditions.Set(&work.Status.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, "test", work.Generation)
		conditions.Set(&work.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, placementv1beta1.ReasonAvailable, "test", work.Generation)
		return env.Client.Status().Update(ctx, work)
	})
	testenv.Eventually(t, 30*time.Second, func() error {
		b := &placementv1beta1.ClusterResourceBinding{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: bindingName("move-app", "move-1")}, b); err != nil {
			return err
		}
		if !conditions.IsCurrentTrue(b.Status.Conditions, placementv1beta1.ConditionAvailable, b.Generation) {
			return fmt.Errorf("binding is not available yet: %+v", conditions.Get(b.Status.Conditions, placementv1beta1.ConditionAvailable))
		}
		return nil
	})

	minOne := intstr.FromInt32(1)
	budget := &placementv1beta1.ClusterResourcePlacementDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "move-app"},
		Spec:       placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: &minOne},
	}
	testenv.Create(t, env.Client, budget)
	testenv.Create(t, env.Client, newEviction("move-evict", "move-app", "move-1"))
	blocked := waitForCondition(t, "move-evict", placementv1beta1.ConditionEvictionExecuted, metav1.ConditionFalse, placementv1beta1.ReasonBlockedByDisruptionBudget)
	if want := "evicting move-1 would leave 0 of 1 cluster available; the budget requires minAvailable 1"; blocked.Message != want {
		t.Errorf("Executed message = %q, want %q", blocked.Message, want)
	}
	if got, err := activeClusters("move-app"); err != nil || len(got) != 1 || got[0] != "move-1" {
		t.Fatalf("a blocked eviction moved the placement: %v %v", got, err)
	}

	// Without the budget the eviction executes and the placement moves.
	if err := env.Client.Delete(ctx, budget); err != nil {
		t.Fatal(err)
	}
	waitForCondition(t, "move-evict", placementv1beta1.ConditionEvictionExecuted, metav1.ConditionTrue, placementv1beta1.ReasonEvicted)
	testenv.Eventually(t, 30*time.Second, func() error {
		got, err := activeClusters("move-app")
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0] != "move-2" {
			return fmt.Errorf("placement is on %v, want [move-2]", got)
		}
		return nil
	})
	// The binding to move-1 was unscheduled, and with its Work it goes.
	testenv.Eventually(t, 30*time.Second, func() error {
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace("move-1"), Name: workgen.WorkName("move-app")}, &placementv1beta1.Work{}); err == nil {
			return fmt.Errorf("the Work on move-1 still exists")
		}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: bindingName("move-app", "move-1")}, &placementv1beta1.ClusterResourceBinding{}); err == nil {
			return fmt.Errorf("the binding to move-1 still exists")
		}
		return nil
	})
	// The policy snapshot says why move-1 was left.
	testenv.Eventually(t, 30*time.Second, func() error {
		list := &placementv1beta1.ClusterSchedulingPolicySnapshotList{}
		if err := env.Client.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: "move-app", placementv1beta1.LabelIsLatestSnapshot: "true"}); err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("%d latest policy snapshots", len(list.Items))
		}
		for _, d := range list.Items[0].Status.TargetClusters {
			if d.ClusterName == "move-1" {
				if d.Selected || d.FilteredBy != "Evicted" || d.Reason != "evicted by ClusterResourcePlacementEviction move-evict" {
					return fmt.Errorf("decision about move-1: %+v", d)
				}
				return nil
			}
		}
		return fmt.Errorf("no decision about move-1: %+v", list.Items[0].Status.TargetClusters)
	})
}

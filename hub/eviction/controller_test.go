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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// Evictions that make no sense are refused for good, with the reason.
func TestInvalidEvictions(t *testing.T) {
	ctx := context.Background()
	startControllers(t, false)

	testenv.Create(t, env.Client, newPlacement("inv-fixed", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"inv-1"}}))
	bind(t, "inv-fixed", "inv-1", true)
	testenv.Create(t, env.Client, newPlacement("inv-n", pickN(1)))
	bind(t, "inv-n", "inv-1", true)
	// A binding that is already Unscheduled does not hold the placement there.
	testenv.Create(t, env.Client, newPlacement("inv-leaving", pickN(1)))
	bind(t, "inv-leaving", "inv-2", true)
	b := &placementv1beta1.ClusterResourceBinding{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: bindingName("inv-leaving", "inv-2")}, b); err != nil {
		t.Fatal(err)
	}
	b.Spec.State = placementv1beta1.BindingStateUnscheduled
	if err := env.Client.Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	// A placement being deleted: a finalizer holds it.
	deleting := newPlacement("inv-deleting", pickN(1))
	controllerutil.AddFinalizer(deleting, "test.flotilla.io/hold")
	testenv.Create(t, env.Client, deleting)
	bind(t, "inv-deleting", "inv-1", true)
	if err := env.Client.Delete(ctx, deleting); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "inv-deleting"}, deleting); err == nil {
			controllerutil.RemoveFinalizer(deleting, "test.flotilla.io/hold")
			_ = env.Client.Update(ctx, deleting)
		}
	})

	tests := []struct {
		name, eviction, placement, cluster string
		reason, message                    string
	}{
		{
			name: "a placement that does not exist", eviction: "inv-missing", placement: "no-such-placement", cluster: "inv-1",
			reason: placementv1beta1.ReasonPlacementNotFound, message: "ClusterResourcePlacement no-such-placement does not exist",
		},
		{
			name: "a PickFixed placement", eviction: "inv-fixed", placement: "inv-fixed", cluster: "inv-1",
			reason: placementv1beta1.ReasonPickFixedNotEvictable, message: "PickFixed placements are never moved; change clusterNames instead",
		},
		{
			name: "a cluster the placement is not on", eviction: "inv-elsewhere", placement: "inv-n", cluster: "inv-2",
			reason: placementv1beta1.ReasonBindingNotFound, message: "ClusterResourcePlacement inv-n is not on member cluster inv-2",
		},
		{
			name: "a cluster the placement is leaving already", eviction: "inv-leaving", placement: "inv-leaving", cluster: "inv-2",
			reason: placementv1beta1.ReasonBindingNotFound, message: "ClusterResourcePlacement inv-leaving is not on member cluster inv-2",
		},
		{
			name: "a placement being deleted", eviction: "inv-deleting", placement: "inv-deleting", cluster: "inv-1",
			reason: placementv1beta1.ReasonPlacementDeleting, message: "ClusterResourcePlacement inv-deleting is being deleted",
		},
	}
	for _, tt := range tests {
		testenv.Create(t, env.Client, newEviction(tt.eviction, tt.placement, tt.cluster))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := waitForCondition(t, tt.eviction, placementv1beta1.ConditionEvictionValid, metav1.ConditionFalse, tt.reason)
			if c.Message != tt.message {
				t.Errorf("Valid message = %q, want %q", c.Message, tt.message)
			}
			if _, err := conditionOf(tt.eviction, placementv1beta1.ConditionEvictionExecuted); err == nil {
				t.Errorf("an invalid eviction has an Executed condition")
			}
		})
	}
}

// A disruption budget blocks an eviction that would break it, with the numbers;
// the eviction executes once the budget allows it.
func TestBudgetBlocksAnEvictionUntilItAllows(t *testing.T) {
	ctx := context.Background()
	startControllers(t, false)
	testenv.Create(t, env.Client, newPlacement("bud-app", pickN(1)))
	bind(t, "bud-app", "bud-1", true)
	minOne := intstr.FromInt32(1)
	budget := &placementv1beta1.ClusterResourcePlacementDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "bud-app"},
		Spec:       placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: &minOne},
	}
	testenv.Create(t, env.Client, budget)
	counted := evictionsCounted(t)

	testenv.Create(t, env.Client, newEviction("bud-evict", "bud-app", "bud-1"))
	waitForCondition(t, "bud-evict", placementv1beta1.ConditionEvictionValid, metav1.ConditionTrue, placementv1beta1.ReasonEvictionValid)
	blocked := waitForCondition(t, "bud-evict", placementv1beta1.ConditionEvictionExecuted, metav1.ConditionFalse, placementv1beta1.ReasonBlockedByDisruptionBudget)
	if want := "evicting bud-1 would leave 0 of 1 cluster available; the budget requires minAvailable 1"; blocked.Message != want {
		t.Errorf("Executed message = %q, want %q", blocked.Message, want)
	}
	if got := evictionsCounted(t); got != counted {
		t.Errorf("a blocked eviction was counted: %v, want %v", got, counted)
	}

	// Relaxing the budget lets it through.
	zero := intstr.FromInt32(0)
	budget.Spec.MinAvailable = &zero
	if err := env.Client.Update(ctx, budget); err != nil {
		t.Fatal(err)
	}
	executed := waitForCondition(t, "bud-evict", placementv1beta1.ConditionEvictionExecuted, metav1.ConditionTrue, placementv1beta1.ReasonEvicted)
	if want := "evicting bud-1 leaves 0 of 1 cluster available; the budget requires minAvailable 0: " +
		"ClusterResourcePlacement bud-app leaves member cluster bud-1 and is not placed there again until this eviction is deleted"; executed.Message != want {
		t.Errorf("Executed message = %q, want %q", executed.Message, want)
	}
	testenv.Eventually(t, 10*time.Second, func() error { return evictedEvent("bud-app") })
	if got := evictionsCounted(t); got != counted+1 {
		t.Errorf("flotilla_evictions_total{reason=manual} = %v, want %v", got, counted+1)
	}

	// An executed eviction is final: a stricter budget does not undo it.
	budget.Spec.MinAvailable = &minOne
	if err := env.Client.Update(ctx, budget); err != nil {
		t.Fatal(err)
	}
	// A second eviction, decided after the update, is blocked: the cluster the first
	// one is taking the placement off already counts as unavailable.
	testenv.Create(t, env.Client, newEviction("bud-probe", "bud-app", "bud-1"))
	waitForCondition(t, "bud-probe", placementv1beta1.ConditionEvictionExecuted, metav1.ConditionFalse, placementv1beta1.ReasonBlockedByDisruptionBudget)
	if c, err := conditionOf("bud-evict", placementv1beta1.ConditionEvictionExecuted); err != nil || c.Status != metav1.ConditionTrue {
		t.Errorf("the executed eviction changed: %v %v", c, err)
	}
}

// Two evictions at once do not both spend the one disruption the budget allows.
func TestConcurrentEvictionsShareTheBudget(t *testing.T) {
	ctx := context.Background()
	startControllers(t, false)
	testenv.Create(t, env.Client, newPlacement("pair-app", nil))
	for _, c := range []string{"pair-1", "pair-2", "pair-3"} {
		bind(t, "pair-app", c, true)
	}
	minTwo := intstr.FromInt32(2)
	testenv.Create(t, env.Client, &placementv1beta1.ClusterResourcePlacementDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "pair-app"},
		Spec:       placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: &minTwo},
	})
	testenv.Create(t, env.Client, newEviction("pair-evict-1", "pair-app", "pair-1"))
	testenv.Create(t, env.Client, newEviction("pair-evict-2", "pair-app", "pair-2"))

	testenv.Eventually(t, 30*time.Second, func() error {
		executed, blocked := 0, ""
		for _, name := range []string{"pair-evict-1", "pair-evict-2"} {
			ev := &placementv1beta1.ClusterResourcePlacementEviction{}
			if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, ev); err != nil {
				return err
			}
			c := conditions.Get(ev.Status.Conditions, placementv1beta1.ConditionEvictionExecuted)
			switch {
			case c == nil:
				return fmt.Errorf("%s is not decided yet", name)
			case c.Status == metav1.ConditionTrue:
				executed++
			case c.Reason == placementv1beta1.ReasonBlockedByDisruptionBudget:
				blocked = c.Message
			}
		}
		if executed != 1 || blocked == "" {
			return fmt.Errorf("%d executed, blocked: %q; want one of each", executed, blocked)
		}
		if want := "would leave 1 of 3 clusters available; the budget requires minAvailable 2"; !strings.Contains(blocked, want) {
			return fmt.Errorf("blocked message %q does not say %q", blocked, want)
		}
		return nil
	})
}

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

package failover_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/failover"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

func startFailback(t *testing.T) {
	env.StartManager(t, func(mgr ctrl.Manager) error {
		if err := pipeline.SetupIndexes(mgr); err != nil {
			return err
		}
		return (&failover.FailbackReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})
}

// tieredMember creates a joined, connected, healthy MemberCluster with the
// label tier=tier, eligible since now.
func tieredMember(t *testing.T, name, tier string) {
	t.Helper()
	ctx := context.Background()
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": tier}}}
	if err := env.Client.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{clusterv1beta1.ConditionJoined, clusterv1beta1.ConditionAgentConnected, clusterv1beta1.ConditionHealthy} {
		conditions.Set(&mc.Status.Conditions, typ, metav1.ConditionTrue, typ, "test", mc.Generation)
	}
	if err := env.Client.Status().Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
}

// failbackPlacement creates a PickN placement of one cluster preferring
// tier=<prefix>primary to tier=<prefix>secondary, with failback, bound to
// cluster and Available there; annotations are the placement's.
func failbackPlacement(t *testing.T, name, prefix, cluster string, stabilizationSeconds int32, annotations map[string]string) {
	t.Helper()
	ctx := context.Background()
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: name}},
			Policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1),
				ClusterPreferences: []placementv1beta1.ClusterPreference{
					{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": prefix + "primary"}}},
					{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": prefix + "secondary"}}},
				},
				Failback: &placementv1beta1.FailbackPolicy{StabilizationSeconds: ptr.To(stabilizationSeconds)},
			},
		},
	}
	if err := env.Client.Create(ctx, crp); err != nil {
		t.Fatal(err)
	}
	b := &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + cluster, Labels: map[string]string{placementv1beta1.LabelPlacementName: name}},
		Spec:       placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateBound, TargetCluster: cluster},
	}
	if err := env.Client.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, placementv1beta1.ReasonAvailable, "test", b.Generation)
	if err := env.Client.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
}

func failbackCondition(name string, want metav1.ConditionStatus, reason, message string) func() error {
	return func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, crp); err != nil {
			return err
		}
		c := conditions.Get(crp.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionFailback))
		if c == nil || c.Status != want || c.Reason != reason || !strings.Contains(c.Message, message) {
			return fmt.Errorf("Failback = %+v, want %s %s containing %q", c, want, reason, message)
		}
		return nil
	}
}

func failbackRequested(binding, to string) func() error {
	return func() error {
		b := &placementv1beta1.ClusterResourceBinding{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Name: binding}, b); err != nil {
			return err
		}
		if got := pipeline.FailbackTarget(b); got != to {
			return fmt.Errorf("failback target of %s = %q, want %q (conditions %+v)", binding, got, to, b.Status.Conditions)
		}
		return nil
	}
}

// A placement on its secondary cluster waits out the stabilization window of
// its returned primary, then asks, on the secondary's binding, to move there,
// and says so on the placement.
func TestAPlacementMovesBackToItsPreferredClusterAfterTheWindow(t *testing.T) {
	tieredMember(t, "fb-primary", "fb-primary")
	tieredMember(t, "fb-secondary", "fb-secondary")
	startFailback(t)
	failbackPlacement(t, "fb-back", "fb-", "fb-secondary", 3, nil)
	testenv.Eventually(t, 20*time.Second, failbackCondition("fb-back", metav1.ConditionFalse, placementv1beta1.ReasonFailbackWaiting, "fb-primary is preferred to fb-secondary"))
	if err := failbackRequested("fb-back-fb-secondary", "")(); err != nil {
		t.Errorf("asked to move back within the stabilization window: %v", err)
	}
	testenv.Eventually(t, 20*time.Second, failbackRequested("fb-back-fb-secondary", "fb-primary"))
	testenv.Eventually(t, 20*time.Second, failbackCondition("fb-back", metav1.ConditionTrue, placementv1beta1.ReasonFailbackInProgress, "moving back from fb-secondary to fb-primary"))
}

// A preferred cluster the placement was evicted from twice in the last hour —
// recorded on the placement, so a restarted hub knows too — is held back.
func TestAClusterThatFailedTwiceIsHeldBack(t *testing.T) {
	tieredMember(t, "hb-primary", "hb-primary")
	tieredMember(t, "hb-secondary", "hb-secondary")
	startFailback(t)
	now := time.Now().UTC()
	failures := fmt.Sprintf(`{"hb-primary":[%q,%q]}`, now.Add(-10*time.Minute).Format(time.RFC3339), now.Add(-time.Minute).Format(time.RFC3339))
	failbackPlacement(t, "hb-held", "hb-", "hb-secondary", 1, map[string]string{placementv1beta1.AnnotationFailbackFailures: failures})
	testenv.Eventually(t, 20*time.Second, failbackCondition("hb-held", metav1.ConditionFalse, placementv1beta1.ReasonFailbackHeldBack, "failed 2 times in the last 1h0m0s"))
	if err := failbackRequested("hb-held-hb-secondary", "")(); err != nil {
		t.Errorf("asked to move back to a cluster in back-off: %v", err)
	}
}

// A placement on its most preferred cluster says that no failback is needed.
func TestAPlacementOnItsPreferredClusterStays(t *testing.T) {
	tieredMember(t, "nb-primary", "nb-primary")
	tieredMember(t, "nb-secondary", "nb-secondary")
	startFailback(t)
	failbackPlacement(t, "nb-stay", "nb-", "nb-primary", 1, nil)
	testenv.Eventually(t, 20*time.Second, failbackCondition("nb-stay", metav1.ConditionFalse, placementv1beta1.ReasonFailbackNotNeeded, "most preferred"))
}

// Once the binding given up is unscheduled, its FailbackRequested condition is
// removed, so that a later reuse of the binding does not move the placement.
func TestAFinishedFailbackRequestIsCleared(t *testing.T) {
	tieredMember(t, "cl-primary", "cl-primary")
	tieredMember(t, "cl-secondary", "cl-secondary")
	startFailback(t)
	failbackPlacement(t, "cl-done", "cl-", "cl-primary", 1, nil)
	ctx := context.Background()
	old := &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "cl-done-cl-secondary", Labels: map[string]string{placementv1beta1.LabelPlacementName: "cl-done"}},
		Spec:       placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateUnscheduled, TargetCluster: "cl-secondary"},
	}
	if err := env.Client.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	// Another writer's condition, as on every binding the hub schedules.
	conditions.Set(&old.Status.Conditions, placementv1beta1.ConditionScheduled, metav1.ConditionTrue, placementv1beta1.ReasonScheduled, "test", old.Generation)
	if err := env.Client.Status().Update(ctx, old); err != nil {
		t.Fatal(err)
	}
	var own []metav1.Condition
	conditions.Set(&own, placementv1beta1.ConditionFailbackRequested, metav1.ConditionTrue, placementv1beta1.ReasonFailingBack,
		pipeline.FailbackMessage("cl-primary", "test"), old.Generation)
	// As the failback controller wrote it, before the binding was unscheduled.
	if err := pipeline.ApplyBindingStatus(ctx, env.Client, old, pipeline.ManagerFailback, []string{placementv1beta1.ConditionFailbackRequested}, pipeline.BindingStatus{Conditions: own}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, func() error {
		b := &placementv1beta1.ClusterResourceBinding{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: old.Name}, b); err != nil {
			return err
		}
		if c := conditions.Get(b.Status.Conditions, placementv1beta1.ConditionFailbackRequested); c != nil {
			return fmt.Errorf("FailbackRequested is still %+v", c)
		}
		return nil
	})
}

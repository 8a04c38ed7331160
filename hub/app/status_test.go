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

package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// fixedPlacement places namespace ns on the named clusters.
func fixedPlacement(name, ns string, clusters ...string) *placementv1beta1.ClusterResourcePlacement {
	return &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: ns}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: clusters},
		},
	}
}

// bindingOn returns a poll that succeeds once placement has a binding to cluster.
func bindingOn(c client.Client, placement, cluster string) func() error {
	return func() error {
		list := &placementv1beta1.ClusterResourceBindingList{}
		if err := c.List(context.Background(), list, client.MatchingLabels{placementv1beta1.LabelPlacementName: placement}); err != nil {
			return err
		}
		for _, b := range list.Items {
			if b.Spec.TargetCluster == cluster && b.DeletionTimestamp.IsZero() {
				return nil
			}
		}
		return fmt.Errorf("placement %s has no binding to %s among %d bindings", placement, cluster, len(list.Items))
	}
}

// Placement nm-ncx on cluster 1 and placement nm on cluster ncx-1 had the same
// binding name, nm-ncx-1, under the old <placement>-<cluster> scheme. A binding
// an older hub named so must not keep the other placement off its cluster.
func TestPlacementsWhoseOldBindingNamesCollideBothGetBindings(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	testenv.ReadyMember(t, c, "ncx-1", nil)
	testenv.ReadyMember(t, c, "1", nil)
	testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "names-app"}})
	older := fixedPlacement("nm-ncx", "names-app", "1")
	testenv.Create(t, c, older)
	// The binding an older hub wrote for nm-ncx on cluster 1.
	old := &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "nm-ncx-1", Labels: map[string]string{placementv1beta1.LabelPlacementName: "nm-ncx"}},
		Spec: placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateScheduled, TargetCluster: "1",
			ClusterDecision: placementv1beta1.ClusterDecision{ClusterName: "1", Selected: true, Reason: "picked by an older hub"}},
	}
	testenv.Create(t, c, old)
	startHub(t)
	testenv.Create(t, c, fixedPlacement("nm", "names-app", "ncx-1"))

	testenv.Eventually(t, 30*time.Second, bindingOn(c, "nm", "ncx-1"))
	testenv.Eventually(t, 30*time.Second, bindingOn(c, "nm-ncx", "1"))
	// The older placement kept its binding of the old name.
	got := &placementv1beta1.ClusterResourceBinding{}
	if err := c.Get(ctx, types.NamespacedName{Name: "nm-ncx-1"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Labels[placementv1beta1.LabelPlacementName] != "nm-ncx" || !got.DeletionTimestamp.IsZero() {
		t.Errorf("binding nm-ncx-1 is now %v (deleting: %v), want nm-ncx's", got.Labels, !got.DeletionTimestamp.IsZero())
	}
}

// While a member's agent is disconnected, what runs there is unknown: Applied
// and Available turn Unknown (AgentDisconnected) for it, and in the summary;
// they come back once it reconnects.
func TestAppliedAndAvailableAreUnknownWhileTheAgentIsDisconnected(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	testenv.ReadyMember(t, c, "dis-1", map[string]string{"suite": "disconnected"})
	testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dis-app"}})
	startHub(t)
	// PickAll, which keeps a placement on a disconnected member.
	crp := fixedPlacement("dis-app", "dis-app")
	crp.Spec.Policy = &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll,
		Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
				{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"suite": "disconnected"}}},
			}},
		}}}
	testenv.Create(t, c, crp)

	work := &placementv1beta1.Work{}
	workKey := types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace("dis-1"), Name: "dis-app-work"}
	testenv.Eventually(t, 30*time.Second, func() error { return c.Get(ctx, workKey, work) })
	conditions.Set(&work.Status.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, "all applied", work.Generation)
	conditions.Set(&work.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, placementv1beta1.ReasonAvailable, "all available", work.Generation)
	if err := c.Status().Update(ctx, work); err != nil {
		t.Fatal(err)
	}
	want := func(status metav1.ConditionStatus, reason string) func() error {
		return func() error {
			got := &placementv1beta1.ClusterResourcePlacement{}
			if err := c.Get(ctx, types.NamespacedName{Name: "dis-app"}, got); err != nil {
				return err
			}
			if len(got.Status.PlacementStatuses) != 1 {
				return fmt.Errorf("placement statuses: %+v", got.Status.PlacementStatuses)
			}
			for _, typ := range []string{placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable} {
				reason := reason
				if reason == "" {
					// True: each condition's own reason (Applied, Available).
					reason = map[string]string{placementv1beta1.ConditionApplied: placementv1beta1.ReasonApplied, placementv1beta1.ConditionAvailable: placementv1beta1.ReasonAvailable}[typ]
				}
				pc := conditions.Get(got.Status.PlacementStatuses[0].Conditions, typ)
				if pc == nil || pc.Status != status || pc.Reason != reason {
					return fmt.Errorf("per-cluster %s is %+v, want %s %s", typ, pc, status, reason)
				}
				summary := conditions.Get(got.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(typ))
				if summary == nil || summary.Status != status || summary.ObservedGeneration != got.Generation {
					return fmt.Errorf("summary %s is %+v, want %s", typ, summary, status)
				}
				if reason == placementv1beta1.ReasonAgentDisconnected && (summary.Reason != reason || !strings.Contains(summary.Message, "dis-1")) {
					return fmt.Errorf("summary %s is %+v, want reason %s naming dis-1", typ, summary, reason)
				}
			}
			return nil
		}
	}
	testenv.Eventually(t, 30*time.Second, want(metav1.ConditionTrue, ""))

	setConnected := func(status metav1.ConditionStatus, reason string) {
		t.Helper()
		mc := &clusterv1beta1.MemberCluster{}
		if err := c.Get(ctx, types.NamespacedName{Name: "dis-1"}, mc); err != nil {
			t.Fatal(err)
		}
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, status, reason, "test", mc.Generation)
		if err := c.Status().Update(ctx, mc); err != nil {
			t.Fatal(err)
		}
	}
	setConnected(metav1.ConditionFalse, clusterv1beta1.ReasonHeartbeatTimeout)
	testenv.Eventually(t, 30*time.Second, want(metav1.ConditionUnknown, placementv1beta1.ReasonAgentDisconnected))
	setConnected(metav1.ConditionTrue, clusterv1beta1.ReasonAgentConnected)
	testenv.Eventually(t, 30*time.Second, func() error {
		// Available's True reason is Available; Applied's is Applied.
		got := &placementv1beta1.ClusterResourcePlacement{}
		if err := c.Get(ctx, types.NamespacedName{Name: "dis-app"}, got); err != nil {
			return err
		}
		for _, typ := range []string{placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable} {
			if !conditions.IsCurrentTrue(got.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(typ), got.Generation) {
				return fmt.Errorf("summary %s: %+v", typ, conditions.Get(got.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(typ)))
			}
		}
		return nil
	})
}

// A placement for another scheduler waits for it, and is Scheduled once that
// scheduler has written bindings.
func TestExternalSchedulerWaitEndsWithItsBindings(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	testenv.ReadyMember(t, c, "ext-1", nil)
	testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ext-app"}})
	startHub(t)
	crp := fixedPlacement("ext-app", "ext-app", "ext-1")
	crp.Spec.SchedulerName = "my-own-scheduler"
	testenv.Create(t, c, crp)
	scheduled := func(status metav1.ConditionStatus, reason string) func() error {
		return func() error {
			got := &placementv1beta1.ClusterResourcePlacement{}
			if err := c.Get(ctx, types.NamespacedName{Name: "ext-app"}, got); err != nil {
				return err
			}
			cond := conditions.Get(got.Status.Conditions, placementv1beta1.ConditionClusterResourcePlacementScheduled)
			if cond == nil || cond.Status != status || cond.Reason != reason {
				return fmt.Errorf("Scheduled is %+v, want %s %s", cond, status, reason)
			}
			return nil
		}
	}
	testenv.Eventually(t, 30*time.Second, scheduled(metav1.ConditionUnknown, placementv1beta1.ReasonWaitingForExternalScheduler))
	testenv.Create(t, c, &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "ext-app-ext-1", Labels: map[string]string{placementv1beta1.LabelPlacementName: "ext-app"}},
		Spec:       placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateScheduled, TargetCluster: "ext-1"},
	})
	testenv.Eventually(t, 30*time.Second, scheduled(metav1.ConditionTrue, placementv1beta1.ReasonScheduled))
}

//go:build skew

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

package skew

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/tools/localfleet/fleet"
)

// The placements that are in progress across the hub upgrade, and the one
// the failover step moves.
const (
	// rollingName is a rolling update (one cluster at a time) of a Deployment
	// that the hub upgrade finds half done.
	rollingName = "skew-rolling"
	// stagedName is an External placement whose staged run waits for the
	// approval of its canary stage across the hub upgrade.
	stagedName     = "skew-staged"
	stagedStrategy = "skew-canary-then-prod"
	stagedRun      = "skew-run"
	// pickNName is a PickN placement of one cluster.
	pickNName = "skew-pickn"

	oldImage, newImage = "nginx:1.27", "nginx:1.28"
	// rollingMinReady is the updated Deployment's minReadySeconds: how long the
	// rolling update waits on the first member, longer than the hub upgrade's
	// measurement, so that the update is in progress throughout it.
	rollingMinReady = 35
)

func createAll(t *testing.T, hub client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := hub.Create(t.Context(), o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

func namespaceWithSettings(ns, color string) []client.Object {
	return []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"color": color}},
	}
}

// staysOnLostClusters is the policy of the PickAll placements: they tolerate
// a member that is unreachable or not ready (the hub's taints while an agent
// is away), so that only the PickN placement moves in the failover step.
func staysOnLostClusters() *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{
		PlacementType: placementv1beta1.PickAll,
		Tolerations: []placementv1beta1.Toleration{
			{Key: clusterv1beta1.TaintUnreachable, Operator: placementv1beta1.TolerationOpExists},
			{Key: clusterv1beta1.TaintNotReady, Operator: placementv1beta1.TolerationOpExists},
		},
	}
}

func namespacePlacement(name string, policy *placementv1beta1.PlacementPolicy, strategy placementv1beta1.RolloutStrategy) *placementv1beta1.ClusterResourcePlacement {
	return &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: name}},
			Policy:            policy,
			Strategy:          strategy,
		},
	}
}

// placeRolling places a Deployment on every member, one cluster at a time.
func placeRolling(t *testing.T, hub client.Client) {
	objs := namespaceWithSettings(rollingName, "blue")
	objs = append(objs, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: rollingName, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: oldImage}}},
			},
		},
	})
	createAll(t, hub, objs...)
	createAll(t, hub, namespacePlacement(rollingName, staysOnLostClusters(), placementv1beta1.RolloutStrategy{
		Type: placementv1beta1.RollingUpdateRolloutStrategyType,
		RollingUpdate: &placementv1beta1.RollingUpdateConfig{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxSurge: ptr.To(intstr.FromInt32(0)),
		},
	}))
	framework.Eventually(t, settle, framework.PlacementConditionsTrue(t.Context(), hub, rollingName, members...))
}

// imageOn is the Deployment's image on a member.
func imageOn(t *testing.T, member string) (string, error) {
	d := &appsv1.Deployment{}
	if err := memberClient(t, member).Get(t.Context(), types.NamespacedName{Namespace: rollingName, Name: "web"}, d); err != nil {
		return "", err
	}
	return d.Spec.Template.Spec.Containers[0].Image, nil
}

// startRollingUpdate updates the Deployment on the hub and returns once the
// first member has it and the second does not.
func startRollingUpdate(t *testing.T, hub client.Client) {
	d := &appsv1.Deployment{}
	if err := hub.Get(t.Context(), types.NamespacedName{Namespace: rollingName, Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Image = newImage
	d.Spec.MinReadySeconds = rollingMinReady
	if err := hub.Update(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, settle, func() error {
		if img, err := imageOn(t, members[0]); err != nil || img != newImage {
			return fmt.Errorf("%s runs %q (%v), want %q", members[0], img, err, newImage)
		}
		return nil
	})
	if img, err := imageOn(t, members[1]); err != nil || img != oldImage {
		t.Fatalf("the rolling update is not in progress: %s runs %q (%v), want still %q", members[1], img, err, oldImage)
	}
	framework.Logf("rolling update in progress: %s runs %s, %s still %s", members[0], newImage, members[1], oldImage)
}

// startStagedRun places a namespace with strategy External and starts a
// staged run whose canary stage (member-1) waits for approval before the prod
// stage (member-2).
func startStagedRun(t *testing.T, hub client.Client) {
	ctx := t.Context()
	for m, stage := range map[string]string{members[0]: "canary", members[1]: "prod"} {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{"stage": stage}}})
		if err := hub.Patch(ctx, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: m}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatalf("label member %s: %v", m, err)
		}
	}
	createAll(t, hub, namespaceWithSettings(stagedName, "blue")...)
	createAll(t, hub,
		&placementv1beta1.ClusterStagedUpdateStrategy{
			ObjectMeta: metav1.ObjectMeta{Name: stagedStrategy},
			Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
				{
					Name:            "canary",
					LabelSelector:   &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "canary"}},
					AfterStageTasks: []placementv1beta1.AfterStageTask{{Type: placementv1beta1.AfterStageTaskTypeApproval}},
				},
				{Name: "prod", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "prod"}}},
			}},
		},
		namespacePlacement(stagedName, staysOnLostClusters(), placementv1beta1.RolloutStrategy{Type: placementv1beta1.ExternalRolloutStrategyType}),
	)
	// The run takes the clusters scheduled when it starts.
	framework.Eventually(t, settle, func() error {
		list := &placementv1beta1.ClusterResourceBindingList{}
		if err := hub.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: stagedName}); err != nil {
			return err
		}
		n := 0
		for _, b := range list.Items {
			if b.DeletionTimestamp.IsZero() && b.Spec.State != placementv1beta1.BindingStateUnscheduled {
				n++
			}
		}
		if n != len(members) {
			return fmt.Errorf("placement %s has %d scheduled bindings, want %d", stagedName, n, len(members))
		}
		return nil
	})
	createAll(t, hub,
		&placementv1beta1.ClusterStagedUpdateRun{
			ObjectMeta: metav1.ObjectMeta{Name: stagedRun},
			Spec:       placementv1beta1.StagedUpdateRunSpec{PlacementName: stagedName, ResourceSnapshotIndex: "0", StagedUpdateStrategyName: stagedStrategy},
		},
	)
	framework.Eventually(t, settle, stagedColorOn(t, members[0], "blue"))
	framework.Eventually(t, settle, func() error { _, err := approvalRequest(t, hub); return err })
	if err := stagedColorOn(t, members[1], "")(); err != nil {
		t.Fatalf("the prod stage ran before its approval: %v", err)
	}
	framework.Logf("staged run %s: canary %s holds the placement, waiting for approval", stagedRun, members[0])
}

// stagedColorOn checks the staged placement's ConfigMap on a member: color,
// or none for "".
func stagedColorOn(t *testing.T, member, color string) func() error {
	return func() error {
		cm := &corev1.ConfigMap{}
		err := memberClient(t, member).Get(t.Context(), types.NamespacedName{Namespace: stagedName, Name: "settings"}, cm)
		switch {
		case color == "" && apierrors.IsNotFound(err):
			return nil
		case color == "" && err == nil:
			return fmt.Errorf("%s holds the staged placement's ConfigMap", member)
		case err != nil:
			return fmt.Errorf("%s: %w", member, err)
		case cm.Data["color"] != color:
			return fmt.Errorf("%s: staged color %q, want %q", member, cm.Data["color"], color)
		}
		return nil
	}
}

// approvalRequest is the pending approval request of the run's canary stage.
func approvalRequest(t *testing.T, hub client.Client) (*placementv1beta1.ClusterApprovalRequest, error) {
	list := &placementv1beta1.ClusterApprovalRequestList{}
	if err := hub.List(t.Context(), list, client.MatchingLabels{placementv1beta1.LabelUpdateRun: stagedRun, placementv1beta1.LabelStage: "canary"}); err != nil {
		return nil, err
	}
	if len(list.Items) != 1 {
		return nil, fmt.Errorf("run %s has %d approval requests for its canary stage, want 1", stagedRun, len(list.Items))
	}
	return &list.Items[0], nil
}

// rolloutAndRunContinue checks that hub N finishes what hub N-1 started: the
// rolling update reaches the second member, and the staged run, once
// approved, its prod stage.
func rolloutAndRunContinue(t *testing.T, hub client.Client) {
	ctx := t.Context()
	framework.Eventually(t, settle, func() error {
		if img, err := imageOn(t, members[1]); err != nil || img != newImage {
			return fmt.Errorf("%s runs %q (%v), want %q", members[1], img, err, newImage)
		}
		return nil
	})
	framework.Eventually(t, settle, framework.PlacementConditionsTrue(ctx, hub, rollingName, members...))
	framework.Logf("rolling update finished on hub %s", currentVersion)

	req, err := approvalRequest(t, hub)
	if err != nil {
		t.Fatal(err)
	}
	conditions.Set(&req.Status.Conditions, placementv1beta1.ConditionApprovalRequestApprovedByUser, metav1.ConditionTrue, "ApprovedByUser", "the canary looks good", req.Generation)
	if err := hub.Status().Update(ctx, req); err != nil {
		t.Fatalf("approve %s: %v", req.Name, err)
	}
	framework.Eventually(t, settle, stagedColorOn(t, members[1], "blue"))
	framework.Eventually(t, settle, func() error {
		run := &placementv1beta1.ClusterStagedUpdateRun{}
		if err := hub.Get(ctx, types.NamespacedName{Name: stagedRun}, run); err != nil {
			return err
		}
		if !conditions.IsTrue(run.Status.Conditions, placementv1beta1.ConditionUpdateRunSucceeded) {
			return fmt.Errorf("run %s: Succeeded is %v", stagedRun, conditions.Get(run.Status.Conditions, placementv1beta1.ConditionUpdateRunSucceeded))
		}
		return nil
	})
	framework.Logf("staged run %s approved and finished on hub %s", stagedRun, currentVersion)
}

// joinAndLeave joins the hub cluster as a member with agent N-1 against hub
// N (a token and join command printed by N, run by N-1), checks it connects,
// and has it leave again.
func joinAndLeave(t *testing.T, hub client.Client) {
	ctx := t.Context()
	if err := provider.JoinHubAsMember(ctx); err != nil {
		t.Fatalf("agent %s joining hub %s: %v", baseVersion, currentVersion, err)
	}
	framework.Eventually(t, settle, framework.MemberCondition(ctx, hub, fleet.HubMemberName, clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue))
	framework.Eventually(t, settle, agentVersionIs(ctx, hub, fleet.HubMemberName, baseVersion))
	if err := provider.LeaveHubAsMember(ctx); err != nil {
		t.Fatalf("agent %s leaving hub %s: %v", baseVersion, currentVersion, err)
	}
	framework.Eventually(t, settle, func() error {
		err := hub.Get(ctx, types.NamespacedName{Name: fleet.HubMemberName}, &clusterv1beta1.MemberCluster{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("MemberCluster %s still exists (err %v)", fleet.HubMemberName, err)
		}
		return nil
	})
}

// pickNCluster is the cluster the PickN placement is on.
func pickNCluster(t *testing.T, hub client.Client) (string, error) {
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := hub.Get(t.Context(), types.NamespacedName{Name: pickNName}, crp); err != nil {
		return "", err
	}
	if len(crp.Status.PlacementStatuses) != 1 {
		return "", fmt.Errorf("placement %s is on %d clusters, want 1", pickNName, len(crp.Status.PlacementStatuses))
	}
	return crp.Status.PlacementStatuses[0].ClusterName, nil
}

// failover places a namespace on one cluster (PickN), stops that member's
// agent (N-1) and checks the placement moves to the other member; then the
// agent comes back.
func failover(t *testing.T, hub client.Client) {
	ctx := t.Context()
	createAll(t, hub, namespaceWithSettings(pickNName, "blue")...)
	createAll(t, hub, namespacePlacement(pickNName,
		&placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1)},
		placementv1beta1.RolloutStrategy{}))
	var from string
	framework.Eventually(t, settle, func() error {
		var err error
		if from, err = pickNCluster(t, hub); err != nil {
			return err
		}
		return framework.PlacementConditionsTrue(ctx, hub, pickNName, from)()
	})
	to := members[0]
	if from == to {
		to = members[1]
	}
	stopped := time.Now()
	if err := provider.StopAgent(ctx, from); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, settle, framework.PlacementConditionsTrue(ctx, hub, pickNName, to))
	framework.Logf("failover: %s moved from %s (agent %s stopped) to %s in %s", pickNName, from, baseVersion, to, time.Since(stopped).Round(100*time.Millisecond))
	if err := provider.StartAgent(ctx, from); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, settle, agentsConnected(ctx, hub))
	// The agent back on the lost member removes what the placement left there.
	framework.Eventually(t, settle, func() error {
		err := memberClient(t, from).Get(ctx, types.NamespacedName{Name: pickNName}, &corev1.Namespace{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s is still on %s (err %v)", pickNName, from, err)
		}
		return nil
	})
	// The PickAll placements stayed (they tolerate the lost member's taints).
	for _, p := range []string{placementName, rollingName} {
		framework.Eventually(t, settle, framework.PlacementConditionsTrue(ctx, hub, p, members...))
	}
	for _, m := range members {
		framework.Eventually(t, settle, stagedColorOn(t, m, "blue"))
	}
}

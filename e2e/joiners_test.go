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

package e2e

import (
	"context"
	"encoding/json"
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
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// A staged run survives its placement's clusters changing under it. The
// placement picks the members labelled joinrun=in (member-1, the canary, and
// member-2, prod). While the run waits for the canary's approval, member-3
// (prod) is labelled in and member-2 labelled out: the scheduler adds the one
// to the placement and drops the other. The run takes member-3 into its prod
// stage, which gives it the run's snapshot once the canary is approved, and
// leaves member-2 with a note; the run succeeds.
func TestStagedUpdateRunTakesInAJoinerAndDropsALeaver(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const (
		ns        = "joiners-app"
		placement = "joiners-app"
		strategy  = "joiners-canary-then-prod"
		run       = "joiners-run-0"
	)
	labelMembers(t, hub, "stage", map[string]string{"member-1": "canary", "member-2": "prod", "member-3": "prod"})
	labelMembers(t, hub, "joinrun", map[string]string{"member-1": "in", "member-2": "in"})

	createApp(t, hub, ns, map[string]string{"color": "blue"})
	createOnHub(t, hub, canaryThenProd(strategy, nil, placementv1beta1.AfterStageTask{Type: placementv1beta1.AfterStageTaskTypeApproval}))
	crp := appPlacement(ns, placementv1beta1.ExternalRolloutStrategyType)
	crp.Spec.Policy = &placementv1beta1.PlacementPolicy{
		PlacementType: placementv1beta1.PickAll,
		Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{
				ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"joinrun": "in"}}}},
			},
		}},
	}
	createPlacement(t, hub, crp)
	framework.Eventually(t, time.Minute, scheduledBindings(ctx, hub, placement, "member-1", "member-2"))
	framework.Eventually(t, time.Minute, resourceIndexExists(ctx, hub, placement, "0"))

	start := time.Now()
	createOnHub(t, hub, &placementv1beta1.ClusterStagedUpdateRun{
		ObjectMeta: metav1.ObjectMeta{Name: run},
		Spec:       placementv1beta1.StagedUpdateRunSpec{PlacementName: placement, ResourceSnapshotIndex: "0", StagedUpdateStrategyName: strategy},
	})
	framework.Eventually(t, 2*time.Minute, colorIn(t, ns, "blue", "member-1"))
	var request string
	framework.Eventually(t, time.Minute, func() error {
		var err error
		request, err = approvalRequestOf(ctx, hub, run, "canary")
		return err
	})
	framework.Logf("run %s: the canary holds index 0 after %s and waits for approval %s", run, time.Since(start).Round(time.Millisecond), request)

	getRun := func() (*placementv1beta1.ClusterStagedUpdateRun, error) {
		r := &placementv1beta1.ClusterStagedUpdateRun{}
		return r, hub.Get(ctx, types.NamespacedName{Name: run}, r)
	}
	clusterIn := func(r *placementv1beta1.ClusterStagedUpdateRun, cluster string) (string, *placementv1beta1.ClusterUpdatingStatus) {
		for _, st := range r.Status.StagesStatus {
			for i, c := range st.Clusters {
				if c.ClusterName == cluster {
					return st.StageName, &st.Clusters[i]
				}
			}
		}
		return "", nil
	}

	// member-3 joins the placement, member-2 leaves it.
	joined := time.Now()
	setMemberLabel(t, hub, "member-3", "joinrun", "in")
	setMemberLabel(t, hub, "member-2", "joinrun", nil)
	framework.Eventually(t, time.Minute, scheduledBindings(ctx, hub, placement, "member-1", "member-3"))
	framework.Eventually(t, time.Minute, func() error {
		r, err := getRun()
		if err != nil {
			return err
		}
		stage, c := clusterIn(r, "member-3")
		if c == nil {
			return fmt.Errorf("run %s does not list member-3 yet", run)
		}
		if stage != "prod" || c.Joined == nil || c.Joined.MatchedStage != "" {
			t.Fatalf("run %s lists member-3 in stage %s with joined %+v; want it in prod, joined, matching prod", run, stage, c.Joined)
		}
		return nil
	})
	framework.Logf("run %s took member-3 into stage prod %s after it was labelled into the placement", run, time.Since(joined).Round(time.Millisecond))

	// Nothing reaches prod before the approval: not the joiner, not the leaver.
	framework.Consistently(t, 5*time.Second, colorIn(t, ns, "", "member-2", "member-3"))

	approved := time.Now()
	approveWithKubectlPatch(t, request)
	framework.Eventually(t, 2*time.Minute, colorIn(t, ns, "blue", "member-3"))
	framework.Logf("member-3 holds the run's snapshot %s after the approval", time.Since(approved).Round(time.Millisecond))
	framework.Eventually(t, time.Minute, func() error {
		r, err := getRun()
		if err != nil {
			return err
		}
		c := conditions.Get(r.Status.Conditions, placementv1beta1.ConditionUpdateRunSucceeded)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("run %s: Succeeded is %+v", run, c)
		}
		if !strings.Contains(c.Message, "1 cluster left the placement during the run") {
			t.Errorf("run %s succeeded saying %q; want it to say that 1 cluster left", run, c.Message)
		}
		return nil
	})
	r, err := getRun()
	if err != nil {
		t.Fatal(err)
	}
	if _, c := clusterIn(r, "member-3"); c == nil || !conditions.IsTrue(c.Conditions, placementv1beta1.ConditionUpdateRunSucceeded) {
		t.Errorf("member-3 did not succeed in run %s: %+v", run, c)
	}
	_, left := clusterIn(r, "member-2")
	if left == nil {
		t.Fatalf("run %s no longer lists member-2, which left during it", run)
	}
	if c := conditions.Get(left.Conditions, placementv1beta1.ConditionUpdateRunSucceeded); c == nil || c.Status != metav1.ConditionFalse || c.Reason != placementv1beta1.ReasonClusterUnscheduled {
		t.Errorf("member-2 in run %s: Succeeded is %+v, want False %s", run, c, placementv1beta1.ReasonClusterUnscheduled)
	}
	if err := colorIn(t, ns, "", "member-2")(); err != nil {
		t.Errorf("the leaver: %v", err)
	}
	framework.Eventually(t, 30*time.Second, runEvent(ctx, hub, run, placementv1beta1.EventClusterJoinedRun, "member-3"))
	framework.Eventually(t, 30*time.Second, runEvent(ctx, hub, run, placementv1beta1.ReasonClusterUnscheduled, "member-2"))
	framework.Logf("run %s succeeded %s after it started: member-3 joined and got index 0 in prod, member-2 left with a note", run, time.Since(start).Round(time.Millisecond))
}

// setMemberLabel sets (value a string) or removes (nil) one label of a member.
func setMemberLabel(t *testing.T, hub client.Client, member, key string, value any) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: value}}})
	if err != nil {
		t.Fatal(err)
	}
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: member}}
	if err := hub.Patch(context.Background(), mc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("label member %s %s=%v: %v", member, key, value, err)
	}
	t.Cleanup(func() {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: nil}}})
		_ = hub.Patch(context.Background(), mc, client.RawPatch(types.MergePatchType, patch))
	})
}

// runEvent checks that the run recorded an Event of the reason whose message
// names the cluster.
func runEvent(ctx context.Context, hub client.Client, run, reason, cluster string) func() error {
	return func() error {
		list := &corev1.EventList{}
		if err := hub.List(ctx, list); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == "ClusterStagedUpdateRun" && e.InvolvedObject.Name == run && e.Reason == reason && strings.Contains(e.Message, cluster) {
				return nil
			}
		}
		return fmt.Errorf("run %s has no %s Event naming %s", run, reason, cluster)
	}
}

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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

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
	"github.com/flotilla-io/flotilla/hub/cli"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// A placement with strategy type External reaches members only through staged
// update runs: the first rollout goes canary (member-1) → approval → prod
// (member-2, member-3), a hub edit waits for the next run, and a run of an older
// resource index rolls the members back to it.
func TestStagedUpdateRunCanaryApprovalProdAndRollback(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const (
		ns        = "staged-app"
		placement = "staged-app"
		strategy  = "staged-canary-then-prod"
	)
	canary, prod := labelStages(t, hub)
	createApp(t, hub, ns, map[string]string{"color": "blue"})
	createOnHub(t, hub, canaryThenProd(strategy, ptr.To(intstr.FromInt32(1)),
		placementv1beta1.AfterStageTask{Type: placementv1beta1.AfterStageTaskTypeApproval}))
	createPlacement(t, hub, appPlacement(ns, placementv1beta1.ExternalRolloutStrategyType))

	// Scheduled on all three, and nothing reaches them: no run yet.
	framework.Eventually(t, time.Minute, scheduledBindings(ctx, hub, placement, allMembers...))
	framework.Eventually(t, time.Minute, resourceIndexExists(ctx, hub, placement, "0"))
	framework.Consistently(t, 5*time.Second, settingsOn(t, "", allMembers...))
	framework.Logf("External placement %s is scheduled on %v and nothing reached them", placement, allMembers)

	// Run 1: the first rollout, index 0 (blue).
	runStaged(t, hub, "staged-run-0", placement, "0", strategy, canary, prod, "blue", approveWithKubectlPatch)
	checkOneAtATime(t, hub, "staged-run-0", "prod")

	// A hub edit makes index 1, which reaches no member by itself.
	cm := &corev1.ConfigMap{}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: ns, Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["color"] = "green"
	if err := hub.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, resourceIndexExists(ctx, hub, placement, "1"))
	framework.Consistently(t, 5*time.Second, settingsOn(t, "blue", allMembers...))
	framework.Logf("index 1 exists and the members still hold index 0")

	// Run 2: index 1 (green).
	runStaged(t, hub, "staged-run-1", placement, "1", strategy, canary, prod, "green", approveWithPlugin)

	// Run 3: rollback to index 0 (blue), while index 1 stays the latest.
	runStaged(t, hub, "staged-run-rollback", placement, "0", strategy, canary, prod, "blue", approveWithKubectlPatch)
	run := &placementv1beta1.ClusterStagedUpdateRun{}
	if err := hub.Get(ctx, types.NamespacedName{Name: "staged-run-rollback"}, run); err != nil {
		t.Fatal(err)
	}
	if got, want := clustersByIndex(run), map[string]string{"member-1": "0", "member-2": "0", "member-3": "0"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the rollback run's status shows the clusters on indexes %v, want %v", got, want)
	}
}

// runStaged creates a run and checks it goes canary → approval → prod: the canary
// members get the ConfigMap's color, the prod members keep what they had until
// approve approves the canary stage, and then get it too; the run succeeds.
func runStaged(t *testing.T, hub client.Client, name, placement, index, strategy string, canary, prod []string, color string, approve func(t *testing.T, request string)) {
	t.Helper()
	ctx := context.Background()
	before := map[string]string{}
	for _, m := range prod {
		before[m] = settingsColor(t, m)
	}
	createOnHub(t, hub, &placementv1beta1.ClusterStagedUpdateRun{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.StagedUpdateRunSpec{
			PlacementName: placement, ResourceSnapshotIndex: index, StagedUpdateStrategyName: strategy,
		},
	})
	start := time.Now()
	framework.Eventually(t, 2*time.Minute, settingsOn(t, color, canary...))
	var request string
	framework.Eventually(t, time.Minute, func() error {
		var err error
		request, err = approvalRequestOf(ctx, hub, name, "canary")
		return err
	})
	framework.Logf("run %s: canary %v holds %q after %s; waiting for approval of %s", name, canary, color, time.Since(start).Round(time.Millisecond), request)

	// The prod members hold what they had while the approval is pending.
	framework.Consistently(t, 5*time.Second, func() error {
		for _, m := range prod {
			if got := settingsColor(t, m); got != before[m] {
				return fmt.Errorf("prod member %s holds %q before the canary stage was approved (had %q)", m, got, before[m])
			}
		}
		return nil
	})

	approve(t, request)
	framework.Eventually(t, 2*time.Minute, settingsOn(t, color, prod...))
	framework.Eventually(t, time.Minute, func() error {
		run := &placementv1beta1.ClusterStagedUpdateRun{}
		if err := hub.Get(ctx, types.NamespacedName{Name: name}, run); err != nil {
			return err
		}
		c := conditions.Get(run.Status.Conditions, placementv1beta1.ConditionUpdateRunSucceeded)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("run %s: Succeeded is %v", name, c)
		}
		return nil
	})
	framework.Eventually(t, 30*time.Second, func() error {
		req := &placementv1beta1.ClusterApprovalRequest{}
		if err := hub.Get(ctx, types.NamespacedName{Name: request}, req); err != nil {
			return err
		}
		if c := conditions.Get(req.Status.Conditions, placementv1beta1.ConditionApprovalAccepted); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("approval request %s: ApprovalAccepted is %v", request, c)
		}
		return nil
	})
	framework.Logf("run %s of index %s succeeded after %s: every member holds %q", name, index, time.Since(start).Round(time.Millisecond), color)
}

// approveWithKubectlPatch approves with kubectl patch of the status
// subresource, as README shows.
func approveWithKubectlPatch(t *testing.T, request string) {
	t.Helper()
	approved := fmt.Sprintf(`{"status":{"conditions":[{"type":"Approved","status":"True","reason":"ApprovedByUser","message":"canary looks good","lastTransitionTime":%q}]}}`,
		time.Now().UTC().Format(time.RFC3339))
	if out, err := framework.Kubectl(context.Background(), provider.HubKubeconfig(), "", "patch", "clusterapprovalrequest", request,
		"--subresource=status", "--type=merge", "-p", approved); err != nil {
		t.Fatalf("kubectl patch clusterapprovalrequest %s: %v\n%s", request, err, out)
	}
}

// approveWithPlugin approves with kubectl flotilla approve (the plugin's
// command, run in process).
func approveWithPlugin(t *testing.T, request string) {
	t.Helper()
	cmd := cli.NewCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"approve", request, "--kubeconfig", provider.HubKubeconfig()})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("kubectl flotilla approve %s: %v\n%s", request, err, out.String())
	}
	if !strings.Contains(out.String(), "approved: update run") {
		t.Errorf("kubectl flotilla approve %s said %q", request, out.String())
	}
}

// checkOneAtATime checks from the run's status that the stage's clusters
// updated one after another (maxConcurrency 1): each started no earlier than
// the one before it ended.
func checkOneAtATime(t *testing.T, hub client.Client, name, stage string) {
	t.Helper()
	run := &placementv1beta1.ClusterStagedUpdateRun{}
	if err := hub.Get(context.Background(), types.NamespacedName{Name: name}, run); err != nil {
		t.Fatal(err)
	}
	for _, st := range run.Status.StagesStatus {
		if st.StageName != stage {
			continue
		}
		if len(st.Clusters) < 2 {
			t.Fatalf("run %s: stage %s has %d clusters, want at least 2", name, stage, len(st.Clusters))
		}
		for i, c := range st.Clusters {
			if c.StartTime == nil || c.EndTime == nil {
				t.Fatalf("run %s: cluster %s has start %v and end %v", name, c.ClusterName, c.StartTime, c.EndTime)
			}
			if i > 0 && c.StartTime.Before(st.Clusters[i-1].EndTime) {
				t.Errorf("run %s: %s started at %s, before %s ended at %s", name, c.ClusterName, c.StartTime, st.Clusters[i-1].ClusterName, st.Clusters[i-1].EndTime)
			}
		}
		return
	}
	t.Fatalf("run %s has no stage %s", name, stage)
}

// labelMembers sets the label key on the members (value by member) and removes it
// when the test ends.
func labelMembers(t *testing.T, hub client.Client, key string, values map[string]string) {
	t.Helper()
	ctx := context.Background()
	set := func(member string, value any) error {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: value}}})
		if err != nil {
			return err
		}
		mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: member}}
		return hub.Patch(ctx, mc, client.RawPatch(types.MergePatchType, patch))
	}
	for m, v := range values {
		if err := set(m, v); err != nil {
			t.Fatalf("label member %s %s=%s: %v", m, key, v, err)
		}
		t.Cleanup(func() {
			if err := set(m, nil); err != nil {
				t.Errorf("remove label %s of member %s: %v", key, m, err)
			}
		})
	}
}

// create creates obj on the hub and deletes it when the test ends.
func createOnHub(t *testing.T, hub client.Client, obj client.Object) {
	t.Helper()
	if err := hub.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() {
		if err := hub.Delete(context.Background(), obj); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete %T %s: %v", obj, obj.GetName(), err)
		}
	})
}

// scheduledBindings checks that the placement has active bindings on exactly the
// members.
func scheduledBindings(ctx context.Context, hub client.Client, placement string, members ...string) func() error {
	return func() error {
		list := &placementv1beta1.ClusterResourceBindingList{}
		if err := hub.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: placement}); err != nil {
			return err
		}
		var got []string
		for _, b := range list.Items {
			if b.DeletionTimestamp.IsZero() && b.Spec.State != placementv1beta1.BindingStateUnscheduled {
				got = append(got, b.Spec.TargetCluster)
			}
		}
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(members, ",") {
			return fmt.Errorf("placement %s has active bindings on %v, want %v", placement, got, members)
		}
		return nil
	}
}

// resourceIndexExists checks that the placement has a resource snapshot of the index.
func resourceIndexExists(ctx context.Context, hub client.Client, placement, index string) func() error {
	return func() error {
		list := &placementv1beta1.ClusterResourceSnapshotList{}
		if err := hub.List(ctx, list, client.MatchingLabels{
			placementv1beta1.LabelPlacementName: placement, placementv1beta1.LabelResourceIndex: index,
		}); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return fmt.Errorf("placement %s has no resource snapshot of index %s yet", placement, index)
		}
		return nil
	}
}

// approvalRequestOf returns the name of the approval request the run created for
// the stage, found by its labels.
func approvalRequestOf(ctx context.Context, hub client.Client, run, stage string) (string, error) {
	list := &placementv1beta1.ClusterApprovalRequestList{}
	if err := hub.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelUpdateRun: run, placementv1beta1.LabelStage: stage}); err != nil {
		return "", err
	}
	if len(list.Items) != 1 {
		return "", fmt.Errorf("run %s has %d approval requests for stage %s, want 1", run, len(list.Items), stage)
	}
	req := list.Items[0]
	if req.Spec.ParentStageRollout != run || req.Spec.TargetStage != stage {
		return "", fmt.Errorf("approval request %s has spec %+v, want run %s and stage %s", req.Name, req.Spec, run, stage)
	}
	return req.Name, nil
}

// settingsColor returns the color in the staged-app/settings ConfigMap of a
// member, or "" when it has none.
func settingsColor(t *testing.T, member string) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	err := memberClient(t, member).Get(context.Background(), types.NamespacedName{Namespace: "staged-app", Name: "settings"}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return ""
	case err != nil:
		t.Fatalf("get the ConfigMap of member %s: %v", member, err)
	}
	return cm.Data["color"]
}

// settingsOn checks that the members hold the color ("" for no ConfigMap).
func settingsOn(t *testing.T, color string, members ...string) func() error {
	return func() error {
		for _, m := range members {
			if got := settingsColor(t, m); got != color {
				return fmt.Errorf("member %s holds color %q, want %q", m, got, color)
			}
		}
		return nil
	}
}

// clustersByIndex returns, from a run's status, the resource index each cluster runs.
func clustersByIndex(run *placementv1beta1.ClusterStagedUpdateRun) map[string]string {
	out := map[string]string{}
	for _, st := range run.Status.StagesStatus {
		for _, c := range st.Clusters {
			out[c.ClusterName] = c.ResourceSnapshotIndex
		}
	}
	return out
}

// A staged run whose canary fails a CEL analysis rolls the canary back by
// itself, and prod is never touched; the same strategy lets a good version
// through with no approval. The agents report the ConfigMap's data.replicas as
// statusFeedback, and the check wants it at most 3.
func TestStagedUpdateRunAnalysisRollsBackAFailedCanary(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const (
		ns        = "analysed-app"
		placement = "analysed-app"
		strategy  = "analysed-canary-then-prod"
	)
	canary, prod := labelStages(t, hub)
	createApp(t, hub, ns, map[string]string{"color": "blue", "replicas": "2"})
	createOnHub(t, hub, canaryThenProd(strategy, nil, placementv1beta1.AfterStageTask{Type: placementv1beta1.AfterStageTaskTypeAnalysis, Analysis: &placementv1beta1.Analysis{
		Interval: metav1.Duration{Duration: 2 * time.Second}, SuccessCount: 2, FailureLimit: 1,
		OnFailure: placementv1beta1.AnalysisFailureRollback,
		Checks: []placementv1beta1.AnalysisCheck{{
			Name: "replicas-sane",
			CEL:  "clusters.all(c, c.feedback.all(f, f.kind != 'ConfigMap' || f.values.all(v, v.name != 'replicas' || int(v.value) <= 3)))",
		}},
	}}))
	crp := appPlacement(ns, placementv1beta1.ExternalRolloutStrategyType)
	crp.Spec.StatusFeedback = []placementv1beta1.StatusFeedbackRule{{Version: "v1", Kind: "ConfigMap",
		JSONPaths: []placementv1beta1.JSONPathRule{{Name: "replicas", Path: ".data.replicas"}}}}
	createPlacement(t, hub, crp)
	framework.Eventually(t, time.Minute, scheduledBindings(ctx, hub, placement, allMembers...))
	framework.Eventually(t, time.Minute, resourceIndexExists(ctx, hub, placement, "0"))

	runCondition := func(name, typ string, status metav1.ConditionStatus, reason string) func() error {
		return func() error {
			run := &placementv1beta1.ClusterStagedUpdateRun{}
			if err := hub.Get(ctx, types.NamespacedName{Name: name}, run); err != nil {
				return err
			}
			c := conditions.Get(run.Status.Conditions, typ)
			if c == nil || c.Status != status || c.Reason != reason {
				return fmt.Errorf("run %s: %s is %+v, want %s %s", name, typ, c, status, reason)
			}
			return nil
		}
	}

	// Index 0 (replicas 2) passes two rounds and goes on to prod with no approval.
	start := time.Now()
	createOnHub(t, hub, &placementv1beta1.ClusterStagedUpdateRun{
		ObjectMeta: metav1.ObjectMeta{Name: "analysed-run-0"},
		Spec:       placementv1beta1.StagedUpdateRunSpec{PlacementName: placement, ResourceSnapshotIndex: "0", StagedUpdateStrategyName: strategy},
	})
	framework.Eventually(t, 3*time.Minute, runCondition("analysed-run-0", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded))
	framework.Eventually(t, time.Minute, colorIn(t, ns, "blue", allMembers...))
	framework.Logf("run analysed-run-0 passed its canary analysis and succeeded with no approval after %s", time.Since(start).Round(time.Millisecond))

	// Index 1 (replicas 5) fails the canary's analysis and is rolled back.
	cm := &corev1.ConfigMap{}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: ns, Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["color"], cm.Data["replicas"] = "red", "5"
	if err := hub.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, resourceIndexExists(ctx, hub, placement, "1"))
	createOnHub(t, hub, &placementv1beta1.ClusterStagedUpdateRun{
		ObjectMeta: metav1.ObjectMeta{Name: "analysed-run-1"},
		Spec:       placementv1beta1.StagedUpdateRunSpec{PlacementName: placement, ResourceSnapshotIndex: "1", StagedUpdateStrategyName: strategy},
	})
	prodBlue := func() error {
		if err := colorIn(t, ns, "blue", prod...)(); err != nil {
			return fmt.Errorf("prod was touched: %w", err)
		}
		return nil
	}
	framework.Eventually(t, 2*time.Minute, func() error {
		if err := prodBlue(); err != nil {
			t.Fatal(err)
		}
		return colorIn(t, ns, "red", canary...)()
	})
	var failedAt time.Time
	framework.Eventually(t, 2*time.Minute, func() error {
		if err := prodBlue(); err != nil {
			t.Fatal(err)
		}
		run := &placementv1beta1.ClusterStagedUpdateRun{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "analysed-run-1"}, run); err != nil {
			return err
		}
		for _, ts := range run.Status.StagesStatus[0].AfterStageTaskStatus {
			if c := conditions.Get(ts.Conditions, placementv1beta1.ConditionAnalysisPassed); c != nil && c.Status == metav1.ConditionFalse {
				failedAt = time.Now()
				framework.Logf("canary analysis failed: %s", c.Message)
				return nil
			}
		}
		return fmt.Errorf("the canary analysis of analysed-run-1 has not failed yet")
	})
	framework.Eventually(t, 2*time.Minute, func() error {
		if err := prodBlue(); err != nil {
			t.Fatal(err)
		}
		return colorIn(t, ns, "blue", canary...)()
	})
	framework.Logf("rollback time: every canary member holds the old ConfigMap again %s after the test saw the analysis fail", time.Since(failedAt).Round(time.Millisecond))
	framework.Eventually(t, time.Minute, runCondition("analysed-run-1", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunRolledBack))
	framework.Consistently(t, 5*time.Second, prodBlue)
	snap := &placementv1beta1.ClusterResourceSnapshot{}
	if err := hub.Get(ctx, types.NamespacedName{Name: placement + "-1-snapshot"}, snap); err != nil {
		t.Fatal(err)
	}
	if snap.Annotations[placementv1beta1.AnnotationFailedAnalysis] == "" {
		t.Errorf("resource snapshot %s is not marked %s", snap.Name, placementv1beta1.AnnotationFailedAnalysis)
	}
}

// colorIn checks that the members' settings ConfigMap in the namespace holds the
// color.
func colorIn(t *testing.T, ns, color string, members ...string) func() error {
	return func() error {
		for _, m := range members {
			cm := &corev1.ConfigMap{}
			err := memberClient(t, m).Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "settings"}, cm)
			if client.IgnoreNotFound(err) != nil {
				return err
			}
			if got := cm.Data["color"]; got != color {
				return fmt.Errorf("member %s holds color %q in %s, want %q", m, got, ns, color)
			}
		}
		return nil
	}
}

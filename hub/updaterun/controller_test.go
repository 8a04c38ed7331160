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

package updaterun_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/updaterun"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// waitUntilExternallyControlled waits until the placement has a Scheduled binding
// on each cluster, marked RolloutStarted=Unknown (RolloutControlledExternally),
// and its first resource snapshot; and then checks that no cluster got a Work.
func waitUntilExternallyControlled(t *testing.T, placement string, clusters ...string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		for _, c := range clusters {
			b, err := bindingOn(placement, c)
			if err != nil {
				return err
			}
			rs := conditions.Get(b.Status.Conditions, placementv1beta1.ConditionRolloutStarted)
			if b.Spec.State != placementv1beta1.BindingStateScheduled || rs == nil || rs.Reason != placementv1beta1.ReasonRolloutControlledExternally {
				return fmt.Errorf("binding on %s: state %s, RolloutStarted %+v", c, b.Spec.State, rs)
			}
		}
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Name: placement}, crp); err != nil {
			return err
		}
		if crp.Status.ObservedResourceIndex != "0" {
			return fmt.Errorf("placement %s has resource index %q", placement, crp.Status.ObservedResourceIndex)
		}
		return nil
	})
	none := map[string]string{}
	for _, c := range clusters {
		none[c] = ""
	}
	if err := colorsAre(placement, none)(); err != nil {
		t.Fatalf("before any run: %v", err)
	}
}

// A canary stage, an approval, then prod one cluster at a time in the order of a
// label; prod gets nothing until the approval; a stopped run moves nothing.
func TestCanaryApprovalThenProdOneAtATime(t *testing.T) {
	ctx := context.Background()
	agents := newMemberAgents()
	startHub(t, agents)
	testenv.ReadyMember(t, env.Client, "a-1", map[string]string{"suite": "a", "stage": "canary"})
	testenv.ReadyMember(t, env.Client, "a-2", map[string]string{"suite": "a", "stage": "prod", "order": "2"})
	testenv.ReadyMember(t, env.Client, "a-3", map[string]string{"suite": "a", "stage": "prod", "order": "1"})
	appNamespace(t, "upd-a", "blue")
	externalPlacement(t, "upd-a", map[string]string{"suite": "a"})
	testenv.Create(t, env.Client, &placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: "upd-a"},
		Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{Name: "canary", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "canary"}},
				AfterStageTasks: []placementv1beta1.AfterStageTask{{Type: placementv1beta1.AfterStageTaskTypeApproval}}},
			{Name: "prod", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "prod"}},
				SortingLabelKey: ptr.To("order"), MaxConcurrency: ptr.To(intstr.FromInt32(1))},
		}},
	})
	waitUntilExternallyControlled(t, "upd-a", "a-1", "a-2", "a-3")

	succeededBefore := metricValue(t, "flotilla_updaterun_runs_finished_total", "succeeded")
	updatedBefore := metricValue(t, "flotilla_updaterun_clusters_updated_total", "")
	boundBefore := boundCount(t)
	agents.hold("a-3", true)
	testenv.Create(t, env.Client, newRun("upd-a-0", "upd-a", "0", "upd-a"))
	init := waitForRunCondition(t, "upd-a-0", placementv1beta1.ConditionUpdateRunInitialized, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunInitialized)
	if want := "3 clusters in 2 stages (canary: 1, prod: 2) to resource snapshot upd-a-0-snapshot (index 0)"; init.Message != want {
		t.Errorf("Initialized message = %q, want %q", init.Message, want)
	}

	// The canary gets the resources; prod waits for the approval.
	testenv.Eventually(t, 30*time.Second, colorsAre("upd-a", map[string]string{"a-1": "blue"}))
	waiting := waitForRunCondition(t, "upd-a-0", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunWaiting)
	if want := "stage canary: every cluster is updated; waiting for approval of ClusterApprovalRequest upd-a-0-canary (set its Approved condition to True)"; waiting.Message != want {
		t.Errorf("Progressing message = %q, want %q", waiting.Message, want)
	}
	req := &placementv1beta1.ClusterApprovalRequest{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: "upd-a-0-canary"}, req); err != nil {
		t.Fatal(err)
	}
	if req.Labels[placementv1beta1.LabelUpdateRun] != "upd-a-0" || req.Labels[placementv1beta1.LabelStage] != "canary" ||
		req.Spec.ParentStageRollout != "upd-a-0" || req.Spec.TargetStage != "canary" {
		t.Errorf("approval request: labels %v, spec %+v", req.Labels, req.Spec)
	}
	if err := colorsAre("upd-a", map[string]string{"a-2": "", "a-3": ""})(); err != nil {
		t.Fatalf("prod before the approval: %v", err)
	}

	// Approving (as kubectl patch --subresource=status would) moves prod on, in
	// label order: a-3 first; a-2 waits while a-3 is not Available.
	conditions.Set(&req.Status.Conditions, placementv1beta1.ConditionApprovalRequestApprovedByUser, metav1.ConditionTrue, "Approved", "looks good", req.Generation)
	if err := env.Client.Status().Update(ctx, req); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		r := &placementv1beta1.ClusterApprovalRequest{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "upd-a-0-canary"}, r); err != nil {
			return err
		}
		if !conditions.IsTrue(r.Status.Conditions, placementv1beta1.ConditionApprovalAccepted) || !conditions.IsTrue(r.Status.Conditions, placementv1beta1.ConditionApprovalRequestApprovedByUser) {
			return fmt.Errorf("approval request conditions: %+v", r.Status.Conditions)
		}
		return nil
	})
	progressing := waitForRunCondition(t, "upd-a-0", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunProgressing)
	if want := "stage prod: updating a-3 (at most 1 at a time)"; progressing.Message != want {
		t.Errorf("Progressing message = %q, want %q", progressing.Message, want)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		got, err := colorOn("upd-a", "a-3")
		if err != nil || got != "blue" {
			return fmt.Errorf("a-3 color %q, %w", got, err)
		}
		return nil
	})
	if b, err := bindingOn("upd-a", "a-2"); err != nil || b.Spec.State != placementv1beta1.BindingStateScheduled {
		t.Fatalf("a-2 moved while a-3 was updating (maxConcurrency 1): %+v %v", b, err)
	}

	// Stopped, the run moves no further cluster, even once a-3 is Available.
	stop := getRun(t, "upd-a-0")
	stop.Spec.State = placementv1beta1.StagedUpdateRunStateStop
	if err := env.Client.Update(ctx, stop); err != nil {
		t.Fatal(err)
	}
	waitForRunCondition(t, "upd-a-0", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunStopped)
	agents.hold("a-3", false)
	testenv.Eventually(t, 30*time.Second, colorsAre("upd-a", map[string]string{"a-3": "blue"}))
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if b, err := bindingOn("upd-a", "a-2"); err != nil || b.Spec.State != placementv1beta1.BindingStateScheduled {
			t.Fatalf("a stopped run moved a-2: %+v %v", b, err)
		}
	}

	// Resumed, it finishes.
	resume := getRun(t, "upd-a-0")
	resume.Spec.State = placementv1beta1.StagedUpdateRunStateRun
	if err := env.Client.Update(ctx, resume); err != nil {
		t.Fatal(err)
	}
	done := waitForRunCondition(t, "upd-a-0", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
	if want := "3 clusters run resource snapshot upd-a-0-snapshot (index 0)"; done.Message != want {
		t.Errorf("Succeeded message = %q, want %q", done.Message, want)
	}
	if err := colorsAre("upd-a", map[string]string{"a-1": "blue", "a-2": "blue", "a-3": "blue"})(); err != nil {
		t.Fatal(err)
	}
	run := getRun(t, "upd-a-0")
	var order []string
	for _, st := range run.Status.StagesStatus {
		if st.StartTime == nil || st.EndTime == nil || !conditions.IsTrue(st.Conditions, placementv1beta1.ConditionUpdateRunSucceeded) {
			t.Errorf("stage %s: start %v end %v conditions %+v", st.StageName, st.StartTime, st.EndTime, st.Conditions)
		}
		for _, c := range st.Clusters {
			order = append(order, c.ClusterName)
			if c.ResourceSnapshotIndex != "0" || c.ResourceSnapshotName != "upd-a-0-snapshot" || c.StartTime == nil || c.EndTime == nil {
				t.Errorf("cluster %s: %+v", c.ClusterName, c)
			}
		}
	}
	if got := strings.Join(order, ","); got != "a-1,a-3,a-2" {
		t.Errorf("clusters in order %s, want a-1,a-3,a-2", got)
	}
	if a3, a2 := clusterStatus(run, "a-3"), clusterStatus(run, "a-2"); a2.StartTime.Before(a3.EndTime) {
		t.Errorf("a-2 started at %v, before a-3 was done at %v", a2.StartTime, a3.EndTime)
	}
	for _, b := range []string{"a-1", "a-2", "a-3"} {
		binding, err := bindingOn("upd-a", b)
		if err != nil {
			t.Fatal(err)
		}
		rs := conditions.Get(binding.Status.Conditions, placementv1beta1.ConditionRolloutStarted)
		if rs == nil || rs.Status != metav1.ConditionTrue || rs.Message != "ClusterStagedUpdateRun upd-a-0 moved the cluster to resource snapshot upd-a-0-snapshot (index 0)" {
			t.Errorf("binding on %s: RolloutStarted %+v", b, rs)
		}
	}
	if got := metricValue(t, "flotilla_updaterun_runs_finished_total", "succeeded") - succeededBefore; got != 1 {
		t.Errorf("flotilla_updaterun_runs_finished_total{result=succeeded} grew by %v, want 1", got)
	}
	if got := metricValue(t, "flotilla_updaterun_clusters_updated_total", "") - updatedBefore; got != 3 {
		t.Errorf("flotilla_updaterun_clusters_updated_total grew by %v, want 3", got)
	}
	// The placement's change was timed through the run: each cluster it moved
	// was marked bound.
	if got := boundCount(t) - boundBefore; got != 3 {
		t.Errorf("flotilla_placement_stage_seconds{stage=bound} observed %d clusters, want the 3 the run moved", got)
	}
	for _, reason := range []string{"Initialized", "ApprovalRequested", "StageApproved", "Stopped", "StageSucceeded", "Succeeded"} {
		testenv.Eventually(t, 10*time.Second, func() error { return hasEvent("upd-a-0", reason) })
	}
}

// A timed wait holds the next stage for its waitTime. With External, a hub edit
// reaches no member until a run rolls it out; a run of an older index rolls back,
// and one created stopped moves nothing until it is set to Run.
func TestTimedWaitEditAndRollback(t *testing.T) {
	ctx := context.Background()
	startHub(t, newMemberAgents())
	testenv.ReadyMember(t, env.Client, "b-1", map[string]string{"suite": "b", "stage": "canary"})
	testenv.ReadyMember(t, env.Client, "b-2", map[string]string{"suite": "b", "stage": "prod"})
	appNamespace(t, "upd-b", "blue")
	externalPlacement(t, "upd-b", map[string]string{"suite": "b"})
	testenv.Create(t, env.Client, &placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: "upd-b"},
		Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{Name: "canary", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "canary"}},
				AfterStageTasks: []placementv1beta1.AfterStageTask{{Type: placementv1beta1.AfterStageTaskTypeTimedWait, WaitTime: &metav1.Duration{Duration: 2 * time.Second}}}},
			{Name: "prod", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "prod"}}, MaxConcurrency: ptr.To(intstr.FromString("100%"))},
		}},
	})
	waitUntilExternallyControlled(t, "upd-b", "b-1", "b-2")

	testenv.Create(t, env.Client, newRun("upd-b-0", "upd-b", "0", "upd-b"))
	waitForRunCondition(t, "upd-b-0", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
	if err := colorsAre("upd-b", map[string]string{"b-1": "blue", "b-2": "blue"})(); err != nil {
		t.Fatal(err)
	}
	run := getRun(t, "upd-b-0")
	wait := run.Status.StagesStatus[0].AfterStageTaskStatus[0]
	if !conditions.IsTrue(wait.Conditions, placementv1beta1.ConditionWaitTimeElapsed) || wait.StartTime == nil {
		t.Fatalf("TimedWait task: %+v", wait)
	}
	if prodStart := run.Status.StagesStatus[1].StartTime; prodStart.Sub(wait.StartTime.Time) < 2*time.Second {
		t.Errorf("prod started %s after the wait began, want at least 2s", prodStart.Sub(wait.StartTime.Time))
	}

	// An edit makes index 1, which reaches no member by itself.
	setColor(t, "upd-b", "green")
	testenv.Eventually(t, 30*time.Second, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "upd-b"}, crp); err != nil {
			return err
		}
		if crp.Status.ObservedResourceIndex != "1" {
			return fmt.Errorf("resource index %q", crp.Status.ObservedResourceIndex)
		}
		return nil
	})
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err := colorsAre("upd-b", map[string]string{"b-1": "blue", "b-2": "blue"})(); err != nil {
			t.Fatalf("an edit reached a member without a run: %v", err)
		}
	}
	testenv.Create(t, env.Client, newRun("upd-b-1", "upd-b", "1", "upd-b"))
	waitForRunCondition(t, "upd-b-1", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
	if err := colorsAre("upd-b", map[string]string{"b-1": "green", "b-2": "green"})(); err != nil {
		t.Fatal(err)
	}

	// Rollback to index 0, created stopped: nothing moves until Run.
	rollback := newRun("upd-b-rollback", "upd-b", "0", "upd-b")
	rollback.Spec.State = placementv1beta1.StagedUpdateRunStateStop
	testenv.Create(t, env.Client, rollback)
	waitForRunCondition(t, "upd-b-rollback", placementv1beta1.ConditionUpdateRunInitialized, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunInitialized)
	waitForRunCondition(t, "upd-b-rollback", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunStopped)
	if err := colorsAre("upd-b", map[string]string{"b-1": "green", "b-2": "green"})(); err != nil {
		t.Fatalf("a stopped run moved a member: %v", err)
	}
	rollback = getRun(t, "upd-b-rollback")
	rollback.Spec.State = placementv1beta1.StagedUpdateRunStateRun
	if err := env.Client.Update(ctx, rollback); err != nil {
		t.Fatal(err)
	}
	waitForRunCondition(t, "upd-b-rollback", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
	if err := colorsAre("upd-b", map[string]string{"b-1": "blue", "b-2": "blue"})(); err != nil {
		t.Fatal(err)
	}
	run = getRun(t, "upd-b-rollback")
	for _, c := range []string{"b-1", "b-2"} {
		if cs := clusterStatus(run, c); cs == nil || cs.ResourceSnapshotIndex != "0" || cs.ResourceSnapshotName != "upd-b-0-snapshot" {
			t.Errorf("rollback status of %s: %+v", c, cs)
		}
	}
	// The placement is available on the index the run rolled back to, and says
	// which index its clusters run.
	testenv.Eventually(t, 30*time.Second, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "upd-b"}, crp); err != nil {
			return err
		}
		c := conditions.Get(crp.Status.Conditions, placementv1beta1.ConditionClusterResourcePlacementAvailable)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != crp.Generation {
			return fmt.Errorf("placement Available = %+v, want True", c)
		}
		if want := "b-1, b-2 run resource snapshot index 0; the latest is 1"; !strings.Contains(c.Message, want) {
			return fmt.Errorf("placement Available message %q does not say %q", c.Message, want)
		}
		for _, pcs := range crp.Status.PlacementStatuses {
			if pcs.ObservedResourceIndex != "0" || !conditions.IsTrue(pcs.Conditions, placementv1beta1.ConditionAvailable) {
				return fmt.Errorf("cluster %s on index %q: %+v", pcs.ClusterName, pcs.ObservedResourceIndex, pcs.Conditions)
			}
		}
		return nil
	})
	// Both indexes are kept (revisionHistoryLimit defaults to 10), the newest
	// stays the latest.
	for name, latest := range map[string]string{"upd-b-0-snapshot": "false", "upd-b-1-snapshot": "true"} {
		snap := &placementv1beta1.ClusterResourceSnapshot{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, snap); err != nil {
			t.Fatal(err)
		}
		if snap.Labels[placementv1beta1.LabelIsLatestSnapshot] != latest {
			t.Errorf("%s is-latest-snapshot = %q, want %q", name, snap.Labels[placementv1beta1.LabelIsLatestSnapshot], latest)
		}
	}
}

// A run that names something missing says exactly what, changes nothing, and
// starts once what it lacks appears; a run waits for another run of its
// placement that is in progress.
func TestRunsThatCannotStart(t *testing.T) {
	ctx := context.Background()
	startHub(t, newMemberAgents())
	testenv.ReadyMember(t, env.Client, "c-1", map[string]string{"suite": "c"})
	appNamespace(t, "upd-c", "blue")
	externalPlacement(t, "upd-c", map[string]string{"suite": "c"})
	appNamespace(t, "upd-c-rolling", "blue")
	testenv.Create(t, env.Client, &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "upd-c-rolling"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "upd-c-rolling"}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"c-1"}},
		},
	})
	approveAll := &placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: "upd-c"},
		Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{Name: "all", LabelSelector: &metav1.LabelSelector{}, AfterStageTasks: []placementv1beta1.AfterStageTask{{Type: placementv1beta1.AfterStageTaskTypeApproval}}},
		}},
	}
	testenv.Create(t, env.Client, approveAll)
	waitUntilExternallyControlled(t, "upd-c", "c-1")

	tests := []struct {
		name, run, placement, index, strategy string
		reason, message                       string
	}{
		{
			name: "a placement that does not exist", run: "upd-c-no-placement", placement: "no-such-placement", index: "0", strategy: "upd-c",
			reason: placementv1beta1.ReasonUpdateRunPlacementNotFound, message: "ClusterResourcePlacement no-such-placement does not exist",
		},
		{
			name: "a placement that rolls itself out", run: "upd-c-rolling", placement: "upd-c-rolling", index: "0", strategy: "upd-c",
			reason:  placementv1beta1.ReasonUpdateRunPlacementNotExternal,
			message: "ClusterResourcePlacement upd-c-rolling has strategy type RollingUpdate; staged update runs roll out only placements whose spec.strategy.type is External",
		},
		{
			name: "a strategy that does not exist", run: "upd-c-no-strategy", placement: "upd-c", index: "0", strategy: "upd-c-later",
			reason: placementv1beta1.ReasonUpdateRunStrategyNotFound, message: "ClusterStagedUpdateStrategy upd-c-later does not exist",
		},
		{
			name: "a resource index that does not exist", run: "upd-c-no-index", placement: "upd-c", index: "5", strategy: "upd-c",
			reason: placementv1beta1.ReasonUpdateRunResourceSnapshotNotFound, message: "ClusterResourcePlacement upd-c has no resource snapshot with index 5 (it keeps indexes 0)",
		},
	}
	for _, tt := range tests {
		testenv.Create(t, env.Client, newRun(tt.run, tt.placement, tt.index, tt.strategy))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := waitForRunCondition(t, tt.run, placementv1beta1.ConditionUpdateRunInitialized, metav1.ConditionFalse, tt.reason)
			if c.Message != tt.message {
				t.Errorf("Initialized message = %q, want %q", c.Message, tt.message)
			}
			run := getRun(t, tt.run)
			if len(run.Status.StagesStatus) != 0 || conditions.Get(run.Status.Conditions, placementv1beta1.ConditionUpdateRunProgressing) != nil {
				t.Errorf("a run that is not initialized has progress: %+v", run.Status)
			}
			testenv.Eventually(t, 10*time.Second, func() error { return hasEvent(tt.run, tt.reason) })
		})
	}
	// Nothing changed on the member.
	if b, err := bindingOn("upd-c", "c-1"); err != nil || b.Spec.State != placementv1beta1.BindingStateScheduled || b.Spec.ResourceSnapshotName != "" {
		t.Fatalf("binding on c-1 changed: %+v %v", b, err)
	}
	if err := colorsAre("upd-c", map[string]string{"c-1": ""})(); err != nil {
		t.Fatal(err)
	}

	// The missing strategy appears: that run starts and, as it waits for its
	// approval, keeps the next run of the placement waiting.
	later := approveAll.DeepCopy()
	later.ObjectMeta = metav1.ObjectMeta{Name: "upd-c-later"}
	testenv.Create(t, env.Client, later)
	waitForRunCondition(t, "upd-c-no-strategy", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunWaiting)
	testenv.Eventually(t, 30*time.Second, colorsAre("upd-c", map[string]string{"c-1": "blue"}))
	testenv.Create(t, env.Client, newRun("upd-c-next", "upd-c", "0", "upd-c"))
	next := waitForRunCondition(t, "upd-c-next", placementv1beta1.ConditionUpdateRunInitialized, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunWaitingForOtherRun)
	if want := "ClusterStagedUpdateRun upd-c-no-strategy of ClusterResourcePlacement upd-c is in progress; this run starts when it succeeds, is stopped or is deleted"; next.Message != want {
		t.Errorf("Initialized message = %q, want %q", next.Message, want)
	}
	approve(t, updaterun.ApprovalRequestName("upd-c-no-strategy", "all"))
	waitForRunCondition(t, "upd-c-no-strategy", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
	waitForRunCondition(t, "upd-c-next", placementv1beta1.ConditionUpdateRunInitialized, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunInitialized)
	_ = ctx
}

// approve sets the approval request's Approved condition, once it exists.
func approve(t *testing.T, name string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		req := &placementv1beta1.ClusterApprovalRequest{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, req); err != nil {
			return err
		}
		conditions.Set(&req.Status.Conditions, placementv1beta1.ConditionApprovalRequestApprovedByUser, metav1.ConditionTrue, "Approved", "test", req.Generation)
		return env.Client.Status().Update(context.Background(), req)
	})
}

// An approved request left by another run of the same name does not approve a
// new run: the run replaces it with its own and waits.
func TestAnApprovalOfAnotherRunDoesNotCount(t *testing.T) {
	ctx := context.Background()
	startHub(t, newMemberAgents())
	testenv.ReadyMember(t, env.Client, "d-1", map[string]string{"suite": "d"})
	appNamespace(t, "upd-d", "blue")
	externalPlacement(t, "upd-d", map[string]string{"suite": "d"})
	testenv.Create(t, env.Client, &placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: "upd-d"},
		Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{Name: "all", LabelSelector: &metav1.LabelSelector{}, AfterStageTasks: []placementv1beta1.AfterStageTask{{Type: placementv1beta1.AfterStageTaskTypeApproval}}},
		}},
	})
	waitUntilExternallyControlled(t, "upd-d", "d-1")
	stale := &placementv1beta1.ClusterApprovalRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "upd-d-0-all", Labels: map[string]string{placementv1beta1.LabelUpdateRun: "upd-d-0", placementv1beta1.LabelStage: "all"}},
		Spec:       placementv1beta1.ApprovalRequestSpec{ParentStageRollout: "upd-d-0", TargetStage: "all"},
	}
	testenv.Create(t, env.Client, stale)
	approve(t, "upd-d-0-all")

	testenv.Create(t, env.Client, newRun("upd-d-0", "upd-d", "0", "upd-d"))
	waitForRunCondition(t, "upd-d-0", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunWaiting)
	run := getRun(t, "upd-d-0")
	testenv.Eventually(t, 30*time.Second, func() error {
		req := &placementv1beta1.ClusterApprovalRequest{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: "upd-d-0-all"}, req); err != nil {
			return err
		}
		if !metav1.IsControlledBy(req, run) {
			return fmt.Errorf("the approval request is not the run's own yet: owners %+v", req.OwnerReferences)
		}
		if conditions.Get(req.Status.Conditions, placementv1beta1.ConditionApprovalRequestApprovedByUser) != nil {
			return fmt.Errorf("the run's own request starts approved: %+v", req.Status.Conditions)
		}
		return nil
	})
	waitForRunCondition(t, "upd-d-0", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunWaiting)
	approve(t, "upd-d-0-all")
	waitForRunCondition(t, "upd-d-0", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
}

// Run upd-e's stage 0-all and run upd-e-0's stage all share the usual name of
// their approval request, upd-e-0-all: the run whose name is taken uses the
// other, and the other run's request neither approves it nor is deleted.
func TestRunsWhoseApprovalRequestNamesCollideEachGetTheirOwn(t *testing.T) {
	ctx := context.Background()
	startHub(t, newMemberAgents())
	testenv.ReadyMember(t, env.Client, "e-1", map[string]string{"suite": "e"})
	appNamespace(t, "upd-e", "blue")
	externalPlacement(t, "upd-e", map[string]string{"suite": "e"})
	testenv.Create(t, env.Client, &placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: "upd-e"},
		Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{Name: "all", LabelSelector: &metav1.LabelSelector{}, AfterStageTasks: []placementv1beta1.AfterStageTask{{Type: placementv1beta1.AfterStageTaskTypeApproval}}},
		}},
	})
	waitUntilExternallyControlled(t, "upd-e", "e-1")
	others := &placementv1beta1.ClusterApprovalRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "upd-e-0-all"},
		Spec:       placementv1beta1.ApprovalRequestSpec{ParentStageRollout: "upd-e", TargetStage: "0-all"},
	}
	testenv.Create(t, env.Client, others)
	approve(t, "upd-e-0-all")

	testenv.Create(t, env.Client, newRun("upd-e-0", "upd-e", "0", "upd-e"))
	waitForRunCondition(t, "upd-e-0", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunWaiting)
	run := getRun(t, "upd-e-0")
	var own string
	testenv.Eventually(t, 30*time.Second, func() error {
		list := &placementv1beta1.ClusterApprovalRequestList{}
		if err := env.Client.List(ctx, list); err != nil {
			return err
		}
		for i := range list.Items {
			req := &list.Items[i]
			if metav1.IsControlledBy(req, run) {
				if req.Name == "upd-e-0-all" {
					return fmt.Errorf("the run took over the other run's request %s", req.Name)
				}
				if req.Spec.ParentStageRollout != "upd-e-0" || req.Spec.TargetStage != "all" {
					return fmt.Errorf("the run's request %s names %+v", req.Name, req.Spec)
				}
				own = req.Name
				return nil
			}
		}
		return fmt.Errorf("the run has no approval request yet")
	})
	got := &placementv1beta1.ClusterApprovalRequest{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "upd-e-0-all"}, got); err != nil || got.UID != others.UID {
		t.Fatalf("the other run's request was replaced or deleted: %v", err)
	}
	waitForRunCondition(t, "upd-e-0", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunWaiting)
	approve(t, own)
	waitForRunCondition(t, "upd-e-0", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
}

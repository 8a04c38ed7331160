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
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// agentMode is what the kstatus test's stand-in agent reports for a member's
// Works.
type agentMode string

const (
	// agentSilent reports nothing, like an agent that has not got to the Work.
	agentSilent agentMode = "silent"
	// agentAvailable reports every Work Applied and Available.
	agentAvailable agentMode = "available"
	// agentApplyFailed reports every Work not Applied (ApplyFailed).
	agentApplyFailed agentMode = "applyFailed"
)

// modalAgents stand in for the agents of the kstatus test's members: each
// reports its Works as its mode says, at the Work's generation.
type modalAgents struct {
	client client.Client
	mu     sync.Mutex
	modes  map[string]agentMode
}

func (a *modalAgents) set(member string, m agentMode) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.modes[member] = m
}

func (a *modalAgents) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	a.mu.Lock()
	mode, ok := a.modes[strings.TrimPrefix(req.Namespace, clusterv1beta1.MemberNamespace(""))]
	a.mu.Unlock()
	if !ok || mode == agentSilent {
		return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
	}
	w := &placementv1beta1.Work{}
	if err := a.client.Get(ctx, req.NamespacedName, w); err != nil || !w.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var changed bool
	switch mode {
	case agentAvailable:
		changed = conditions.Set(&w.Status.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, "test agent", w.Generation)
		changed = conditions.Set(&w.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, placementv1beta1.ReasonAvailable, "test agent", w.Generation) || changed
	case agentApplyFailed:
		changed = conditions.Set(&w.Status.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionFalse, placementv1beta1.ReasonApplyFailed, "test agent: the member refused the ConfigMap", w.Generation)
		changed = conditions.Set(&w.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionUnknown, placementv1beta1.ReasonNotApplied, "test agent", w.Generation) || changed
	}
	if changed {
		if err := a.client.Status().Update(ctx, w); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	// Look again when the mode changes.
	return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
}

// kstatusOf returns a poll that reads the object as the API server serves it
// (defaults included) and succeeds once kstatus computes want for it, with a
// message containing hint or a condition of reason hint.
func kstatusOf(gvk schema.GroupVersionKind, key types.NamespacedName, want status.Status, hint string) func() error {
	return func() error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := env.Client.Get(context.Background(), key, u); err != nil {
			return err
		}
		res, err := status.Compute(u)
		if err != nil {
			return err
		}
		hinted := strings.Contains(res.Message, hint)
		for _, c := range res.Conditions {
			hinted = hinted || c.Reason == hint
		}
		if res.Status != want || !hinted {
			return fmt.Errorf("%s %s computes %s (%q, %+v), want %s with %q", gvk.Kind, key, res.Status, res.Message, res.Conditions, want, hint)
		}
		return nil
	}
}

var (
	crpGVK      = placementv1beta1.GroupVersion.WithKind("ClusterResourcePlacement")
	runGVK      = placementv1beta1.GroupVersion.WithKind("ClusterStagedUpdateRun")
	roGVK       = placementv1beta1.GroupVersion.WithKind("ResourceOverride")
	croGVK      = placementv1beta1.GroupVersion.WithKind("ClusterResourceOverride")
	ksIdle      = types.NamespacedName{Name: "ks-idle"}
	memberGVK   = clusterv1beta1.GroupVersion.WithKind("MemberCluster")
	ksMember    = types.NamespacedName{Name: "ks-1"}
	ksApp       = types.NamespacedName{Name: "ks-app"}
	ksNowhere   = types.NamespacedName{Name: "ks-nowhere"}
	ksStaged    = types.NamespacedName{Name: "ks-staged"}
	ksRun       = types.NamespacedName{Name: "ks-staged-0"}
	ksWrongRun  = types.NamespacedName{Name: "ks-app-0"}
	ksOverride  = types.NamespacedName{Namespace: "ks-app", Name: "ks-color"}
	ksStagedReq = types.NamespacedName{Name: "ks-staged-0-canary"}
)

// Placements, staged update runs, overrides and MemberClusters read, through
// sigs.k8s.io/cli-utils/pkg/kstatus (what Flux and kubectl-style waiters use),
// as InProgress, Current or Failed at the moments a GitOps tool should see
// each: the whole hub runs against a real API server; a stand-in agent reports
// the Works. Each moment is a step and the statuses every object must reach.
func TestKstatusFollowsPlacementsRunsOverridesAndMembers(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	agents := &modalAgents{modes: map[string]agentMode{"ks-1": agentSilent}}
	testenv.ReadyMember(t, c, "ks-1", map[string]string{"suite": "kstatus"})
	testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ks-app"}})
	testenv.Create(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ks-app", Name: "settings"}, Data: map[string]string{"color": "blue"}})
	testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ks-staged"}})
	testenv.Create(t, c, fixedPlacement("ks-app", "ks-app", "ks-1"))
	// An override of a namespace no placement selects.
	testenv.Create(t, c, &placementv1beta1.ClusterResourceOverride{
		ObjectMeta: metav1.ObjectMeta{Name: ksIdle.Name},
		Spec: placementv1beta1.ClusterResourceOverrideSpec{
			ClusterResourceSelectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "Namespace", Name: "ks-idle"}},
			Policy:                   &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{OverrideType: placementv1beta1.DeleteOverrideType}}},
		},
	})

	type want struct {
		gvk    schema.GroupVersionKind
		key    types.NamespacedName
		status status.Status
		// hint is a part of kstatus's message: the reason or what decided it.
		hint string
	}
	steps := []struct {
		moment string
		do     func(t *testing.T)
		want   []want
	}{{
		moment: "objects the hub has not looked at yet are in progress",
		want: []want{
			{crpGVK, ksApp, status.InProgressStatus, "generation is 1, but latest observed generation is 0"},
			{memberGVK, ksMember, status.InProgressStatus, "latest observed generation is 0"},
			{croGVK, ksIdle, status.InProgressStatus, "latest observed generation is 0"},
		},
	}, {
		moment: "the hub runs: a joined, connected, healthy member is current; so is an override once snapshotted; a placement whose Work the agent has not applied is in progress",
		do: func(t *testing.T) {
			startHub(t)
			env.StartManager(t, func(mgr ctrl.Manager) error {
				agents.client = mgr.GetClient()
				return ctrl.NewControllerManagedBy(mgr).Named("kstatus-test-agents").For(&placementv1beta1.Work{}).Complete(agents)
			})
		},
		want: []want{
			{memberGVK, ksMember, status.CurrentStatus, ""},
			{croGVK, ksIdle, status.CurrentStatus, ""},
			{crpGVK, ksApp, status.InProgressStatus, placementv1beta1.ReasonApplyPending},
		},
	}, {
		moment: "a placement no cluster fits has failed, saying why",
		do: func(t *testing.T) {
			crp := fixedPlacement("ks-nowhere", "ks-app")
			crp.Spec.Policy = &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To(int32(1)),
				Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
						{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"suite": "no-such-suite"}}},
					}},
				}}}
			testenv.Create(t, c, crp)
		},
		want: []want{{crpGVK, ksNowhere, status.FailedStatus, "ClusterResourcePlacementScheduled is False"}},
	}, {
		moment: "the agent applied everything and it is available: the placement is current",
		do:     func(t *testing.T) { agents.set("ks-1", agentAvailable) },
		want:   []want{{crpGVK, ksApp, status.CurrentStatus, ""}},
	}, {
		moment: "the member refuses an object: the placement has failed",
		do:     func(t *testing.T) { agents.set("ks-1", agentApplyFailed) },
		want:   []want{{crpGVK, ksApp, status.FailedStatus, "ClusterResourcePlacementApplied is False: 1 of 1 clusters: ks-1"}},
	}, {
		moment: "the member applies it again: current",
		do:     func(t *testing.T) { agents.set("ks-1", agentAvailable) },
		want:   []want{{crpGVK, ksApp, status.CurrentStatus, ""}},
	}, {
		moment: "an override is current once snapshotted; one whose patch does not fit fails the placement, not itself",
		do: func(t *testing.T) {
			testenv.Create(t, c, &placementv1beta1.ResourceOverride{
				ObjectMeta: metav1.ObjectMeta{Namespace: ksOverride.Namespace, Name: ksOverride.Name},
				Spec: placementv1beta1.ResourceOverrideSpec{
					ResourceSelectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "settings"}},
					Policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
						ClusterSelector: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
							{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"suite": "kstatus"}}},
						}},
						OverrideType: placementv1beta1.JSONPatchOverrideType,
						JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{
							{Operator: placementv1beta1.JSONPatchOverrideOpReplace, Path: "/data/missing", Value: &apiextensionsv1.JSON{Raw: []byte(`"red"`)}},
						},
					}}},
				},
			})
		},
		want: []want{
			{roGVK, ksOverride, status.CurrentStatus, ""},
			{crpGVK, ksApp, status.FailedStatus, placementv1beta1.ReasonOverrideFailed},
		},
	}, {
		moment: "the override is fixed: the placement rolls it out and is current again",
		do: func(t *testing.T) {
			err := retry.RetryOnConflict(patientRetry, func() error {
				ro := &placementv1beta1.ResourceOverride{}
				if err := c.Get(ctx, ksOverride, ro); err != nil {
					return err
				}
				ro.Spec.Policy.OverrideRules[0].JSONPatchOverrides[0].Path = "/data/color"
				return c.Update(ctx, ro)
			})
			if err != nil {
				t.Fatal(err)
			}
		},
		want: []want{
			{roGVK, ksOverride, status.CurrentStatus, ""},
			{crpGVK, ksApp, status.CurrentStatus, ""},
		},
	}, {
		moment: "the member's agent stops sending heartbeats: the member has failed, the placement is in progress (its state there is unknown), not current",
		do: func(t *testing.T) {
			setAgentConnected(t, "ks-1", metav1.ConditionFalse, clusterv1beta1.ReasonHeartbeatTimeout)
		},
		want: []want{
			{memberGVK, ksMember, status.FailedStatus, "AgentConnected is False"},
			{crpGVK, ksApp, status.InProgressStatus, placementv1beta1.ReasonAgentDisconnected},
		},
	}, {
		moment: "the agent is back: both current",
		do: func(t *testing.T) {
			setAgentConnected(t, "ks-1", metav1.ConditionTrue, clusterv1beta1.ReasonAgentConnected)
		},
		want: []want{
			{memberGVK, ksMember, status.CurrentStatus, ""},
			{crpGVK, ksApp, status.CurrentStatus, ""},
		},
	}, {
		moment: "a staged update run of a placement that is not External has failed",
		do: func(t *testing.T) {
			testenv.Create(t, c, &placementv1beta1.ClusterStagedUpdateStrategy{
				ObjectMeta: metav1.ObjectMeta{Name: "ks-staged"},
				Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{{
					Name: "canary", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"suite": "kstatus"}},
					AfterStageTasks: []placementv1beta1.AfterStageTask{{Type: placementv1beta1.AfterStageTaskTypeApproval}},
				}}},
			})
			testenv.Create(t, c, &placementv1beta1.ClusterStagedUpdateRun{
				ObjectMeta: metav1.ObjectMeta{Name: ksWrongRun.Name},
				Spec:       placementv1beta1.StagedUpdateRunSpec{PlacementName: "ks-app", ResourceSnapshotIndex: "0", StagedUpdateStrategyName: "ks-staged"},
			})
		},
		want: []want{{runGVK, ksWrongRun, status.FailedStatus, placementv1beta1.ReasonUpdateRunPlacementNotExternal}},
	}, {
		moment: "an External placement waits for a run: in progress",
		do: func(t *testing.T) {
			crp := fixedPlacement("ks-staged", "ks-staged", "ks-1")
			crp.Spec.Strategy.Type = placementv1beta1.ExternalRolloutStrategyType
			testenv.Create(t, c, crp)
		},
		want: []want{{crpGVK, ksStaged, status.InProgressStatus, "ClusterResourcePlacementRolloutStarted is Unknown"}},
	}, {
		moment: "its run updated the canary and waits for an approval: the run is in progress; the placement, Available on the canary, is current",
		do: func(t *testing.T) {
			testenv.Create(t, c, &placementv1beta1.ClusterStagedUpdateRun{
				ObjectMeta: metav1.ObjectMeta{Name: ksRun.Name},
				Spec:       placementv1beta1.StagedUpdateRunSpec{PlacementName: "ks-staged", ResourceSnapshotIndex: "0", StagedUpdateStrategyName: "ks-staged"},
			})
		},
		want: []want{
			{runGVK, ksRun, status.InProgressStatus, placementv1beta1.ReasonUpdateRunWaiting},
			{crpGVK, ksStaged, status.CurrentStatus, ""},
		},
	}, {
		moment: "approved, the run succeeds: current",
		do: func(t *testing.T) {
			req := &placementv1beta1.ClusterApprovalRequest{}
			if err := c.Get(ctx, ksStagedReq, req); err != nil {
				t.Fatal(err)
			}
			conditions.Set(&req.Status.Conditions, placementv1beta1.ConditionApprovalRequestApprovedByUser, metav1.ConditionTrue, "Approved", "looks good", req.Generation)
			if err := c.Status().Update(ctx, req); err != nil {
				t.Fatal(err)
			}
		},
		want: []want{
			{runGVK, ksRun, status.CurrentStatus, ""},
			{crpGVK, ksStaged, status.CurrentStatus, ""},
		},
	}}
	for _, step := range steps {
		started := time.Now()
		if step.do != nil {
			step.do(t)
		}
		for _, w := range step.want {
			testenv.Eventually(t, 30*time.Second, kstatusOf(w.gvk, w.key, w.status, w.hint))
		}
		t.Logf("%s: reached in %s", step.moment, time.Since(started).Round(10*time.Millisecond))
	}
}

// setAgentConnected writes a member's AgentConnected condition as the tunnel
// server does (the hub's other writers of the status then follow).
func setAgentConnected(t *testing.T, member string, s metav1.ConditionStatus, reason string) {
	t.Helper()
	err := retry.RetryOnConflict(patientRetry, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Name: member}, mc); err != nil {
			return err
		}
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, s, reason, "test", mc.Generation)
		return env.Client.Status().Update(context.Background(), mc)
	})
	if err != nil {
		t.Fatal(err)
	}
}

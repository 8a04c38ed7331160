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

package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the commands' output")

// ages matches the ages the commands print ("5s ago", "3m12s ago").
var ages = regexp.MustCompile(`\b\d+[smhdy](\d+[smh])? ago\b`)

// runCommand runs `kubectl flotilla args...` against the test API server and
// returns its output with ages normalized.
func runCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := NewCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(args, "--kubeconfig", kubeconfig))
	err := cmd.ExecuteContext(context.Background())
	return ages.ReplaceAllString(out.String(), "<age> ago"), err
}

// golden compares got with testdata/<name>.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("output of %s differs from %s (-want +got); rerun with -update if intended:\n%s", name, path, diff)
	}
}

// memberCluster creates a member cluster with the given state.
func memberCluster(t *testing.T, name string, labels map[string]string, taints []clusterv1beta1.Taint, connected, healthy metav1.ConditionStatus) {
	t.Helper()
	ctx := context.Background()
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: clusterv1beta1.MemberClusterSpec{Taints: taints}}
	if err := env.Client.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionJoined, metav1.ConditionTrue, clusterv1beta1.ReasonJoined, "joined", mc.Generation)
	conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, connected, clusterv1beta1.ReasonAgentConnected, "test", mc.Generation)
	conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionHealthy, healthy, clusterv1beta1.ReasonHealthy, "test", mc.Generation)
	mc.Status.AgentVersion = "v0.2.0"
	mc.Status.LastHeartbeatTime = &now
	if err := env.Client.Status().Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
}

// scheduleWith runs the real scheduler framework over the test's member clusters
// and records the outcome on a policy snapshot, as the hub's scheduler does.
func scheduleWith(t *testing.T, placement string, policy *placementv1beta1.PlacementPolicy, bound ...string) framework.CycleResult {
	t.Helper()
	ctx := context.Background()
	clusters := &clusterv1beta1.MemberClusterList{}
	locations := &clusterv1beta1.LocationList{}
	if err := env.Client.List(ctx, clusters); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.List(ctx, locations); err != nil {
		t.Fatal(err)
	}
	var bindings []placementv1beta1.ClusterResourceBinding
	for _, c := range bound {
		b := placementv1beta1.ClusterResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: placement + "-" + c, Labels: map[string]string{placementv1beta1.LabelPlacementName: placement}},
			Spec:       placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateBound, TargetCluster: c},
		}
		bindings = append(bindings, b)
	}
	objs := make([]placementv1beta1.BindingObj, 0, len(bindings))
	for i := range bindings {
		objs = append(objs, &bindings[i])
	}
	res, err := plugins.NewFramework(framework.Options{}).RunCycle(ctx, framework.CycleInput{
		PlacementName: placement, Policy: policy, Clusters: clusters.Items, Locations: locations.Items, Bindings: objs, Now: time.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range bindings {
		b := &bindings[i]
		for _, d := range res.Decisions {
			if d.ClusterName == b.Spec.TargetCluster {
				b.Spec.ClusterDecision = d
			}
		}
		if err := env.Client.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	snap := &placementv1beta1.ClusterSchedulingPolicySnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: placement + "-0", Labels: map[string]string{
			placementv1beta1.LabelPlacementName: placement, placementv1beta1.LabelIsLatestSnapshot: "true", placementv1beta1.LabelPolicyIndex: "0",
		}},
		Spec: placementv1beta1.SchedulingPolicySnapshotSpec{Policy: policy, PolicyHash: []byte("test")},
	}
	if err := env.Client.Create(ctx, snap); err != nil {
		t.Fatal(err)
	}
	conditions.Set(&snap.Status.Conditions, placementv1beta1.ConditionScheduled, res.Status, res.Reason, res.Message, snap.Generation)
	snap.Status.TargetClusters = res.Decisions
	if err := env.Client.Status().Update(ctx, snap); err != nil {
		t.Fatal(err)
	}
	return res
}

// cond returns a condition that turned now.
func cond(typ string, status metav1.ConditionStatus, reason, msg string, gen int64) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen, LastTransitionTime: metav1.Now()}
}

// The fleet of the golden tests: two clusters in Location aws (one under
// maintenance), one elsewhere and disconnected, and a PickN placement that
// could fill only one of its two slots.
func TestGoldenOutputs(t *testing.T) {
	ctx := context.Background()
	maintenance := []clusterv1beta1.Taint{{Key: "maintenance", Value: "true", Effect: clusterv1beta1.TaintEffectNoSchedule}}
	memberCluster(t, "member-1", map[string]string{"cloud": "aws", "env": "prod", "fleet": "golden"}, nil, metav1.ConditionTrue, metav1.ConditionTrue)
	memberCluster(t, "member-2", map[string]string{"cloud": "aws", "env": "prod", "fleet": "golden"}, maintenance, metav1.ConditionTrue, metav1.ConditionTrue)
	memberCluster(t, "member-3", map[string]string{"cloud": "gce", "env": "dev", "fleet": "golden"}, nil, metav1.ConditionFalse, metav1.ConditionUnknown)
	loc := &clusterv1beta1.Location{
		ObjectMeta: metav1.ObjectMeta{Name: "aws", Labels: map[string]string{"tier": "gold"}},
		Spec:       clusterv1beta1.LocationSpec{InstanceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"cloud": "aws"}}},
	}
	if err := env.Client.Create(ctx, loc); err != nil {
		t.Fatal(err)
	}
	policy := &placementv1beta1.PlacementPolicy{
		PlacementType:     placementv1beta1.PickN,
		NumberOfClusters:  ptr.To[int32](2),
		LocationSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"tier": "gold"}}},
		Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PreferredClusterSelector{{
				Weight: 20, Preference: placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
			}},
		}},
		Tolerations: []placementv1beta1.Toleration{{Key: "dedicated", Operator: placementv1beta1.TolerationOpExists, Effect: clusterv1beta1.TaintEffectNoSchedule}},
	}
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "web"}},
			Policy:            policy,
		},
	}
	if err := env.Client.Create(ctx, crp); err != nil {
		t.Fatal(err)
	}
	res := scheduleWith(t, "web", policy, "member-1")
	gen := crp.Generation
	cm := placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Name: "settings", Namespace: "web"}
	deploy := placementv1beta1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Name: "web", Namespace: "web"}
	observed := metav1.Now()
	crp.Status = placementv1beta1.PlacementStatus{
		ObservedResourceIndex: "1",
		SelectedResources:     []placementv1beta1.ResourceIdentifier{{Version: "v1", Kind: "Namespace", Name: "web"}, cm, deploy},
		Conditions: []metav1.Condition{
			cond(placementv1beta1.ConditionClusterResourcePlacementScheduled, res.Status, res.Reason, res.Message, gen),
			cond(placementv1beta1.ConditionClusterResourcePlacementRolloutStarted, metav1.ConditionTrue, placementv1beta1.ReasonRolloutStarted, "all 1 selected cluster is on the latest resources", gen),
			cond(placementv1beta1.ConditionClusterResourcePlacementApplied, metav1.ConditionFalse, placementv1beta1.ReasonApplyFailed, "1 of 1 cluster failed to apply: member-1", gen),
		},
		PlacementStatuses: []placementv1beta1.PerClusterPlacementStatus{
			{
				ClusterName: "member-1",
				Conditions: []metav1.Condition{
					cond(placementv1beta1.ConditionScheduled, metav1.ConditionTrue, placementv1beta1.ReasonScheduled, "picked: among the best-scoring clusters that match the scheduling policy", gen),
					cond(placementv1beta1.ConditionRolloutStarted, metav1.ConditionTrue, placementv1beta1.ReasonRolloutStarted, "on resource index 1", gen),
					cond(placementv1beta1.ConditionApplied, metav1.ConditionFalse, placementv1beta1.ReasonApplyFailed, "1 of 3 manifests failed to apply", gen),
					cond(placementv1beta1.ConditionAvailable, metav1.ConditionUnknown, placementv1beta1.ReasonNotApplied, "waiting for the apply", gen-1),
				},
				FailedPlacements: []placementv1beta1.FailedResourcePlacement{{
					ResourceIdentifier: deploy,
					Condition:          cond(placementv1beta1.ConditionApplied, metav1.ConditionFalse, placementv1beta1.ReasonApplyFailed, `Deployment.apps "web" is invalid: spec.replicas: must be at least 0`, gen),
				}},
				DiffedPlacements: []placementv1beta1.DiffedResourcePlacement{{
					ResourceIdentifier: cm, ObservationTime: &observed,
					ObservedDiffs: []placementv1beta1.PatchDetail{{Path: "/data/mode", ValueInMember: "debug", ValueInHub: "release"}},
				}},
			},
			{
				Conditions: []metav1.Condition{
					cond(placementv1beta1.ConditionScheduled, metav1.ConditionFalse, placementv1beta1.ReasonSchedulingPolicyUnfulfilled, "1 of 2 clusters could not be selected: no cluster fits: in Location aws: 1 of 2 clusters selected", gen),
				},
			},
		},
	}
	if err := env.Client.Status().Update(ctx, crp); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"status-web", []string{"status", "web"}},
		{"why-web-member-1-selected", []string{"why", "web", "member-1"}},
		{"why-web-member-2-tainted", []string{"why", "web", "member-2"}},
		{"why-web-member-3-other-location", []string{"why", "web", "member-3"}},
		{"clusters", []string{"clusters", "-l", "fleet=golden"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out, err := runCommand(t, tc.args...)
			if err != nil {
				t.Fatalf("%v: %v\n%s", tc.args, err, out)
			}
			golden(t, tc.golden, out)
		})
	}

	t.Run("status-colored", func(t *testing.T) {
		out, err := runCommand(t, "status", "web", "--color", "always")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains([]byte(out), []byte(ansiRed+"False"+ansiReset)) || !bytes.Contains([]byte(out), []byte(ansiGreen+"True"+ansiReset)) {
			t.Errorf("--color always does not colour the statuses:\n%q", out)
		}
		plain, err := runCommand(t, "status", "web")
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains([]byte(plain), []byte("\x1b[")) {
			t.Errorf("output that is not a terminal is coloured:\n%q", plain)
		}
	})

	t.Run("a ResourcePlacement with -n", func(t *testing.T) {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}); err != nil {
			t.Fatal(err)
		}
		rp := &placementv1beta1.ResourcePlacement{
			ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "team-a"},
			Spec:       placementv1beta1.PlacementSpec{ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "api"}}},
		}
		if err := env.Client.Create(ctx, rp); err != nil {
			t.Fatal(err)
		}
		rp.Status.Conditions = []metav1.Condition{cond(placementv1beta1.ConditionResourcePlacementScheduled, metav1.ConditionTrue,
			placementv1beta1.ReasonSchedulingPolicyFulfilled, "2 clusters selected", rp.Generation)}
		if err := env.Client.Status().Update(ctx, rp); err != nil {
			t.Fatal(err)
		}
		out, err := runCommand(t, "status", "api", "-n", "team-a")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		golden(t, "status-rp-api", out)
		if _, err := runCommand(t, "status", "api"); err == nil || err.Error() != "ClusterResourcePlacement api not found (a ResourcePlacement? add -n <namespace>)" {
			t.Errorf("status of a ResourcePlacement without -n: %v", err)
		}
	})
}

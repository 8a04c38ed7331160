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
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// clustersOf returns the clusters a placement is on.
func clustersOf(ctx context.Context, hub client.Client, name string) ([]string, error) {
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := hub.Get(ctx, types.NamespacedName{Name: name}, crp); err != nil {
		return nil, err
	}
	var out []string
	for _, pcs := range crp.Status.PlacementStatuses {
		if pcs.ClusterName != "" {
			out = append(out, pcs.ClusterName)
		}
	}
	return out, nil
}

// onlyCluster waits until the placement is available on exactly one cluster and
// returns it.
func onlyCluster(t *testing.T, hub client.Client, name string) string {
	t.Helper()
	ctx := context.Background()
	var cluster string
	framework.Eventually(t, 3*time.Minute, func() error {
		got, err := clustersOf(ctx, hub, name)
		if err != nil {
			return err
		}
		if len(got) != 1 {
			return fmt.Errorf("placement %s is on %v, want one cluster", name, got)
		}
		cluster = got[0]
		return framework.PlacementConditionsTrue(ctx, hub, name, cluster)()
	})
	return cluster
}

func restartAgentAtEnd(t *testing.T, member string) {
	t.Cleanup(func() {
		_ = provider.StartAgent(context.Background(), member)
		framework.Eventually(t, time.Minute, framework.MemberCondition(context.Background(), hubClient(t), member, clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue))
	})
}

// A PickN=1 placement whose cluster is lost is available on another member within
// 30s (tolerationSeconds 10); when the lost member returns it no longer holds the
// evicted resources, and the placement does not move back.
func TestPickNFailsOverAndTheReturningClusterIsCleanedUp(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-failover")
	placeNamespace(t, hub, "e2e-failover", "e2e-failover", &placementv1beta1.PlacementPolicy{
		PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1),
		Tolerations: []placementv1beta1.Toleration{{Key: clusterv1beta1.TaintUnreachable, Operator: placementv1beta1.TolerationOpExists,
			Effect: clusterv1beta1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](10)}},
	})
	lost := onlyCluster(t, hub, "e2e-failover")
	t.Logf("placed on %s; stopping its agent", lost)
	stopped := time.Now()
	if err := provider.StopAgent(ctx, lost); err != nil {
		t.Fatal(err)
	}
	restartAgentAtEnd(t, lost)
	var replacement string
	framework.Eventually(t, 30*time.Second, func() error {
		got, err := clustersOf(ctx, hub, "e2e-failover")
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0] == lost {
			return fmt.Errorf("placement is on %v", got)
		}
		replacement = got[0]
		return framework.PlacementConditionsTrue(ctx, hub, "e2e-failover", replacement)()
	})
	t.Logf("available on %s %s after %s's agent stopped", replacement, time.Since(stopped).Round(time.Second), lost)

	// The policy snapshot says why the lost cluster was left.
	snaps := &placementv1beta1.ClusterSchedulingPolicySnapshotList{}
	if err := hub.List(ctx, snaps, client.MatchingLabels{placementv1beta1.LabelPlacementName: "e2e-failover", placementv1beta1.LabelIsLatestSnapshot: "true"}); err != nil || len(snaps.Items) != 1 {
		t.Fatalf("latest policy snapshot: %v (%d)", err, len(snaps.Items))
	}
	found := false
	for _, d := range snaps.Items[0].Status.TargetClusters {
		if d.ClusterName == lost {
			found = true
			if d.Selected || !strings.Contains(d.Reason, "NoExecute") {
				t.Errorf("decision for %s = %+v, want not selected because of the NoExecute taint", lost, d)
			}
		}
	}
	if !found {
		t.Errorf("no decision recorded for %s", lost)
	}

	// The lost member returns: what it held for the placement is removed there,
	// and the placement stays where it is.
	if err := provider.StartAgent(ctx, lost); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, onMember(t, lost, &corev1.Namespace{}, types.NamespacedName{Name: "e2e-failover"}, false))
	framework.Consistently(t, 5*time.Second, func() error {
		got, err := clustersOf(ctx, hub, "e2e-failover")
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0] != replacement {
			return fmt.Errorf("placement moved to %v", got)
		}
		return nil
	})
}

// A placement that tolerates the unreachable taint stays where it is.
func TestToleratedTaintKeepsThePlacementInPlace(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-tolerated")
	placeNamespace(t, hub, "e2e-tolerated", "e2e-tolerated", &placementv1beta1.PlacementPolicy{
		PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1),
		Tolerations: []placementv1beta1.Toleration{{Key: clusterv1beta1.TaintUnreachable, Operator: placementv1beta1.TolerationOpExists}},
	})
	cluster := onlyCluster(t, hub, "e2e-tolerated")
	if err := provider.StopAgent(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	restartAgentAtEnd(t, cluster)
	framework.Eventually(t, 30*time.Second, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: cluster}, mc); err != nil {
			return err
		}
		for _, taint := range mc.Spec.Taints {
			if taint.Key == clusterv1beta1.TaintUnreachable && taint.Effect == clusterv1beta1.TaintEffectNoExecute {
				return nil
			}
		}
		return fmt.Errorf("%s has no unreachable taint yet: %+v", cluster, mc.Spec.Taints)
	})
	// Three times the e2e hub's default toleration (5s): an untolerating placement would have moved.
	framework.Consistently(t, 15*time.Second, func() error {
		got, err := clustersOf(ctx, hub, "e2e-tolerated")
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0] != cluster {
			return fmt.Errorf("the tolerating placement moved to %v", got)
		}
		return nil
	})
}

// A disruption budget refuses an eviction that would leave too few clusters.
func TestDisruptionBudgetRefusesAnEviction(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-budget")
	placeNamespace(t, hub, "e2e-budget", "e2e-budget", &placementv1beta1.PlacementPolicy{
		PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1)})
	cluster := onlyCluster(t, hub, "e2e-budget")
	budget := &placementv1beta1.ClusterResourcePlacementDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-budget"},
		Spec:       placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1))},
	}
	if err := hub.Create(ctx, budget); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Delete(ctx, budget) })
	ev := &placementv1beta1.ClusterResourcePlacementEviction{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-budget-evict"},
		Spec:       placementv1beta1.PlacementEvictionSpec{PlacementName: "e2e-budget", ClusterName: cluster},
	}
	if err := hub.Create(ctx, ev); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Delete(ctx, ev) })
	framework.Eventually(t, time.Minute, func() error {
		if err := hub.Get(ctx, types.NamespacedName{Name: ev.Name}, ev); err != nil {
			return err
		}
		c := conditions.Get(ev.Status.Conditions, placementv1beta1.ConditionEvictionExecuted)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != placementv1beta1.ReasonBlockedByDisruptionBudget {
			return fmt.Errorf("Executed = %+v", c)
		}
		t.Logf("refused: %s", c.Message)
		return nil
	})
	framework.Consistently(t, 3*time.Second, placedOn(ctx, hub, "e2e-budget", cluster))
}

// PickAll keeps a cluster that is merely unreachable (and says so per cluster),
// and leaves a cluster a user drains.
func TestPickAllKeepsAnUnreachableClusterAndLeavesADrainedOne(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-pickall-failover")
	placeNamespace(t, hub, "e2e-pickall-failover", "e2e-pickall-failover", nil)
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-pickall-failover", allMembers...))

	if err := provider.StopAgent(ctx, "member-2"); err != nil {
		t.Fatal(err)
	}
	restartAgentAtEnd(t, "member-2")
	framework.Eventually(t, 30*time.Second, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "e2e-pickall-failover"}, crp); err != nil {
			return err
		}
		for _, pcs := range crp.Status.PlacementStatuses {
			if pcs.ClusterName != "member-2" {
				continue
			}
			if c := conditions.Get(pcs.Conditions, placementv1beta1.ConditionScheduled); c != nil &&
				strings.Contains(c.Message, clusterv1beta1.TaintUnreachable) && strings.Contains(c.Message, "kept") {
				t.Logf("member-2: %s", c.Message)
				return nil
			}
			return fmt.Errorf("member-2 conditions: %+v", pcs.Conditions)
		}
		return fmt.Errorf("member-2 is no longer in the placement's status")
	})
	framework.Consistently(t, 10*time.Second, placedOn(ctx, hub, "e2e-pickall-failover", allMembers...))

	// A drain does move the placement off the cluster.
	drain := exec.Command(provider.HubBinary(), "drain", "member-3", "--kubeconfig", provider.HubKubeconfig(), "--timeout", "2m")
	out, err := drain.CombinedOutput()
	if err != nil {
		t.Fatalf("hub drain member-3: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(provider.HubBinary(), "uncordon", "member-3", "--kubeconfig", provider.HubKubeconfig()).CombinedOutput(); err != nil {
			t.Errorf("hub uncordon member-3: %v\n%s", err, out)
		}
	})
	framework.Eventually(t, 2*time.Minute, placedOn(ctx, hub, "e2e-pickall-failover", "member-1", "member-2"))
	framework.Eventually(t, 2*time.Minute, onMember(t, "member-3", &corev1.Namespace{}, types.NamespacedName{Name: "e2e-pickall-failover"}, false))
}

// A PickN placement that opted in moves off a cluster where its Deployment never
// becomes available, while that cluster itself is fine.
func TestUnavailableResourcesMoveAnOptedInPlacement(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	// Only member-1's and member-3's nodes can run the Deployment's pods.
	for _, m := range []string{"member-1", "member-3"} {
		out, err := framework.Kubectl(ctx, provider.MemberKubeconfig(m), "", "label", "nodes", "--all", "e2e-runs-web=yes", "--overwrite")
		if err != nil {
			t.Fatalf("label nodes of %s: %v\n%s", m, err, out)
		}
		t.Cleanup(func() {
			_, _ = framework.Kubectl(ctx, provider.MemberKubeconfig(m), "", "label", "nodes", "--all", "e2e-runs-web-")
		})
	}
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-unavailable"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-unavailable"}}) })
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "e2e-unavailable", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"e2e-runs-web": "yes"},
					Containers:   []corev1.Container{{Name: "web", Image: webImage}},
				},
			},
		},
	}
	if err := hub.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	// member-2 is preferred, but its nodes cannot run the pods.
	placeNamespace(t, hub, "e2e-unavailable", "e2e-unavailable", &placementv1beta1.PlacementPolicy{
		PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1), UnavailableEvictionSeconds: ptr.To[int32](10),
		Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PreferredClusterSelector{{
				Weight: 100, Preference: placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{clusterv1beta1.LabelClusterName: "member-2"}}},
			}},
		}},
	})
	framework.Eventually(t, time.Minute, func() error {
		got, err := clustersOf(ctx, hub, "e2e-unavailable")
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0] != "member-2" {
			return fmt.Errorf("placement is on %v, want member-2 first", got)
		}
		return nil
	})
	var moved string
	framework.Eventually(t, 2*time.Minute, func() error {
		got, err := clustersOf(ctx, hub, "e2e-unavailable")
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0] == "member-2" {
			return fmt.Errorf("placement is on %v", got)
		}
		moved = got[0]
		return framework.PlacementConditionsTrue(ctx, hub, "e2e-unavailable", moved)()
	})
	t.Logf("moved from member-2 to %s, where the Deployment is available", moved)
	framework.Eventually(t, time.Minute, onMember(t, "member-2", &appsv1.Deployment{}, types.NamespacedName{Namespace: "e2e-unavailable", Name: "web"}, false))
}

// preferMember1 is a PickN=1 policy preferring member-1 to every other
// cluster, failing over 10s after a cluster becomes unreachable and failing
// back after a stabilization window of 10s.
func preferMember1() *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{
		PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1),
		Tolerations: []placementv1beta1.Toleration{{Key: clusterv1beta1.TaintUnreachable, Operator: placementv1beta1.TolerationOpExists,
			Effect: clusterv1beta1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](10)}},
		ClusterPreferences: []placementv1beta1.ClusterPreference{
			{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{clusterv1beta1.LabelClusterName: "member-1"}}},
			{LabelSelector: metav1.LabelSelector{}},
		},
		Failback: &placementv1beta1.FailbackPolicy{StabilizationSeconds: ptr.To[int32](10), MaxConcurrent: ptr.To[int32](10)},
	}
}

// availableOn returns the clusters where the hub sees the placement Available.
func availableOn(ctx context.Context, hub client.Client, name string) ([]string, error) {
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := hub.Get(ctx, types.NamespacedName{Name: name}, crp); err != nil {
		return nil, err
	}
	var out []string
	for _, pcs := range crp.Status.PlacementStatuses {
		if conditions.IsTrue(pcs.Conditions, placementv1beta1.ConditionAvailable) {
			out = append(out, pcs.ClusterName)
		}
	}
	return out, nil
}

// failOver stops member-1's agent and waits until the placement is available
// on one other cluster, which it returns with how long that took.
func failOver(t *testing.T, hub client.Client, name string) (string, time.Duration) {
	t.Helper()
	ctx := context.Background()
	stopped := time.Now()
	if err := provider.StopAgent(ctx, "member-1"); err != nil {
		t.Fatal(err)
	}
	var replacement string
	framework.Eventually(t, time.Minute, func() error {
		got, err := clustersOf(ctx, hub, name)
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0] == "member-1" {
			return fmt.Errorf("placement is on %v", got)
		}
		replacement = got[0]
		return framework.PlacementConditionsTrue(ctx, hub, name, replacement)()
	})
	return replacement, time.Since(stopped)
}

// watchGaps polls the placement until stop is closed and reports, on the
// returned channel, the moments no cluster had it Available.
func watchGaps(ctx context.Context, hub client.Client, name string, stop <-chan struct{}) <-chan []time.Time {
	out := make(chan []time.Time, 1)
	go func() {
		var gaps []time.Time
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				out <- gaps
				return
			case <-tick.C:
				if got, err := availableOn(ctx, hub, name); err == nil && len(got) == 0 {
					gaps = append(gaps, time.Now())
				}
			}
		}
	}()
	return out
}

func failbackCondition(ctx context.Context, hub client.Client, name string) (*metav1.Condition, error) {
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := hub.Get(ctx, types.NamespacedName{Name: name}, crp); err != nil {
		return nil, err
	}
	return conditions.Get(crp.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionFailback)), nil
}

// A placement preferring member-1 fails over when member-1's agent stops and,
// once the agent is back, returns to member-1 after the stabilization window —
// the copy elsewhere stays until the one on member-1 is Available, so at no
// moment is the placement Available nowhere.
func TestFailbackReturnsToThePreferredClusterWithoutAGap(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-failback")
	placeNamespace(t, hub, "e2e-failback", "e2e-failback", preferMember1())
	if got := onlyCluster(t, hub, "e2e-failback"); got != "member-1" {
		t.Fatalf("placed on %s, want the preferred member-1", got)
	}
	restartAgentAtEnd(t, "member-1")
	replacement, took := failOver(t, hub, "e2e-failback")
	t.Logf("failover: available on %s %s after member-1's agent stopped", replacement, took.Round(100*time.Millisecond))

	stop := make(chan struct{})
	gaps := watchGaps(ctx, hub, "e2e-failback", stop)
	started := time.Now()
	if err := provider.StartAgent(ctx, "member-1"); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-failback", "member-1"))
	close(stop)
	t.Logf("failback: available on member-1 alone %s after its agent started (stabilization window 10s)", time.Since(started).Round(100*time.Millisecond))
	if g := <-gaps; len(g) > 0 {
		t.Errorf("the placement was Available on no cluster at %d polls during the failback, first at %s", len(g), g[0].Format(time.RFC3339Nano))
	}
	framework.Eventually(t, 30*time.Second, func() error {
		c, err := failbackCondition(ctx, hub, "e2e-failback")
		if err != nil {
			return err
		}
		if c == nil || c.Reason != placementv1beta1.ReasonFailbackNotNeeded {
			return fmt.Errorf("Failback condition = %+v, want reason %s", c, placementv1beta1.ReasonFailbackNotNeeded)
		}
		return nil
	})
	framework.Eventually(t, time.Minute, onMember(t, replacement, &corev1.Namespace{}, types.NamespacedName{Name: "e2e-failback"}, false))
}

// A member that fails twice is held back: after the second failure the
// placement stays on its replacement (the Failback condition says until when)
// instead of moving back once more, so a flapping member causes one move back,
// not one per flap.
func TestFailbackDoesNotPingPongWithAFlappingMember(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-flapping")
	placeNamespace(t, hub, "e2e-flapping", "e2e-flapping", preferMember1())
	if got := onlyCluster(t, hub, "e2e-flapping"); got != "member-1" {
		t.Fatalf("placed on %s, want the preferred member-1", got)
	}
	restartAgentAtEnd(t, "member-1")
	moves := 0
	for flap := 1; flap <= 2; flap++ {
		replacement, took := failOver(t, hub, "e2e-flapping")
		t.Logf("flap %d: failover to %s took %s", flap, replacement, took.Round(100*time.Millisecond))
		started := time.Now()
		if err := provider.StartAgent(ctx, "member-1"); err != nil {
			t.Fatal(err)
		}
		if flap == 1 {
			framework.Eventually(t, 2*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-flapping", "member-1"))
			moves++
			t.Logf("flap %d: failback to member-1 took %s after its agent started", flap, time.Since(started).Round(100*time.Millisecond))
			continue
		}
		framework.Eventually(t, time.Minute, func() error {
			c, err := failbackCondition(ctx, hub, "e2e-flapping")
			if err != nil {
				return err
			}
			if c == nil || c.Reason != placementv1beta1.ReasonFailbackHeldBack {
				return fmt.Errorf("Failback condition = %+v, want reason %s", c, placementv1beta1.ReasonFailbackHeldBack)
			}
			return nil
		})
		c, _ := failbackCondition(ctx, hub, "e2e-flapping")
		t.Logf("flap %d: %s", flap, c.Message)
		// Three stabilization windows: without the back-off it would be back on member-1.
		framework.Consistently(t, 30*time.Second, func() error {
			got, err := clustersOf(ctx, hub, "e2e-flapping")
			if err != nil {
				return err
			}
			if len(got) != 1 || got[0] != replacement {
				return fmt.Errorf("placement moved to %v while member-1 is held back", got)
			}
			return nil
		})
	}
	if moves != 1 {
		t.Errorf("moved back %d times in 2 flaps, want 1", moves)
	}
}

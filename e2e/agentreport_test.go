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
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
)

// What the agents report beyond applying: drifts, diffs, availability that follows
// the member, and status feedback.

// configMapNamespace creates, on the hub, a namespace with one ConfigMap
// (color: blue) and removes it when the test ends.
func configMapNamespace(t *testing.T, hub client.Client, name string) {
	t.Helper()
	ctx := context.Background()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "settings"}, Data: map[string]string{"color": "blue"}},
	} {
		if err := hub.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	t.Cleanup(func() { _ = hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}) })
}

// placeOn creates a PickFixed placement of a namespace on one member, changed by
// edit first, and deletes it when the test ends.
func placeOn(t *testing.T, hub client.Client, name, member string, edit func(*placementv1beta1.PlacementSpec)) {
	t.Helper()
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: name}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{member}},
		},
	}
	if edit != nil {
		edit(&crp.Spec)
	}
	if err := hub.Create(context.Background(), crp); err != nil {
		t.Fatalf("create placement %s: %v", name, err)
	}
	t.Cleanup(func() { deletePlacementAndWait(t, hub, name) })
}

// clusterStatus returns a check on the placement's status for one cluster.
func clusterStatus(ctx context.Context, hub client.Client, name, member string, check func(*placementv1beta1.PerClusterPlacementStatus) error) func() error {
	return func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: name}, crp); err != nil {
			return err
		}
		for i := range crp.Status.PlacementStatuses {
			if pcs := &crp.Status.PlacementStatuses[i]; pcs.ClusterName == member {
				return check(pcs)
			}
		}
		return fmt.Errorf("no status for %s yet", member)
	}
}

func perClusterCondition(pcs *placementv1beta1.PerClusterPlacementStatus, t string, want metav1.ConditionStatus, reason string) error {
	for _, c := range pcs.Conditions {
		if c.Type == t {
			if c.Status != want || (reason != "" && c.Reason != reason) {
				return fmt.Errorf("%s on %s is %s/%s (%s), want %s/%s", t, pcs.ClusterName, c.Status, c.Reason, c.Message, want, reason)
			}
			return nil
		}
	}
	return fmt.Errorf("no %s condition on %s yet", t, pcs.ClusterName)
}

// setColor edits the placed ConfigMap on a member, as a user there would.
func setColor(t *testing.T, member, namespace, color string) {
	t.Helper()
	c := memberClient(t, member)
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: namespace, Name: "settings"}, cm); err != nil {
		t.Fatalf("get the ConfigMap on %s: %v", member, err)
	}
	cm.Data["color"] = color
	if err := c.Update(context.Background(), cm); err != nil {
		t.Fatalf("edit the ConfigMap on %s: %v", member, err)
	}
}

func colorOn(t *testing.T, member, namespace, want string) func() error {
	c := memberClient(t, member)
	return func() error {
		cm := &corev1.ConfigMap{}
		if err := c.Get(context.Background(), types.NamespacedName{Namespace: namespace, Name: "settings"}, cm); err != nil {
			return err
		}
		if got := cm.Data["color"]; got != want {
			return fmt.Errorf("color on %s is %q, want %q", member, got, want)
		}
		return nil
	}
}

// An edit on a member is reverted (whenToApply Always, the default) within
// seconds, or, with IfNotDrifted, left and reported on the hub with its path and
// both values.
func TestMemberEditsAreRevertedOrReportedAsDrifts(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const name, member = "e2e-drift", "member-1"
	configMapNamespace(t, hub, name)
	placeOn(t, hub, name, member, nil)
	framework.Eventually(t, 2*time.Minute, framework.PlacementConditionsTrue(ctx, hub, name, member))

	setColor(t, member, name, "red")
	framework.Eventually(t, 15*time.Second, colorOn(t, member, name, "blue"))

	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := hub.Get(ctx, types.NamespacedName{Name: name}, crp); err != nil {
		t.Fatal(err)
	}
	crp.Spec.Strategy.ApplyStrategy.WhenToApply = placementv1beta1.WhenToApplyIfNotDrifted
	if err := hub.Update(ctx, crp); err != nil {
		t.Fatal(err)
	}
	// Wait until the member applied the Work with the new strategy.
	framework.Eventually(t, time.Minute, func() error {
		w := &placementv1beta1.Work{}
		if err := hub.Get(ctx, types.NamespacedName{Namespace: "flotilla-member-" + member, Name: name + "-work"}, w); err != nil {
			return err
		}
		if s := w.Spec.ApplyStrategy; s == nil || s.WhenToApply != placementv1beta1.WhenToApplyIfNotDrifted {
			return fmt.Errorf("the Work's apply strategy is %+v, want whenToApply IfNotDrifted", s)
		}
		for _, c := range w.Status.Conditions {
			if c.Type == placementv1beta1.ConditionApplied && c.ObservedGeneration == w.Generation && c.Status == metav1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("the member has not applied generation %d of the Work yet", w.Generation)
	})
	setColor(t, member, name, "green")
	framework.Eventually(t, 30*time.Second, clusterStatus(ctx, hub, name, member, func(pcs *placementv1beta1.PerClusterPlacementStatus) error {
		if err := perClusterCondition(pcs, placementv1beta1.ConditionApplied, metav1.ConditionFalse, placementv1beta1.ReasonFoundDrifts); err != nil {
			return err
		}
		for _, d := range pcs.DriftedPlacements {
			if d.Kind != "ConfigMap" || d.Name != "settings" || d.FirstDriftedObservedTime == nil {
				continue
			}
			for _, od := range d.ObservedDrifts {
				if od.Path == "/data/color" && od.ValueInMember == "green" && od.ValueInHub == "blue" {
					return nil
				}
			}
		}
		return fmt.Errorf("driftedPlacements %+v lack /data/color green (member) vs blue (hub)", pcs.DriftedPlacements)
	}))
	framework.Consistently(t, 5*time.Second, colorOn(t, member, name, "green"))
}

// A ReportDiff placement changes nothing on the member and lists how it differs;
// a member that matches reports DiffReported=True, not a failure.
func TestReportDiffChangesNothingAndListsDiffs(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const name = "e2e-reportdiff"
	configMapNamespace(t, hub, name)
	// member-2 holds a different ConfigMap; member-3 holds a matching one.
	for member, color := range map[string]string{"member-2": "purple", "member-3": "blue"} {
		c := memberClient(t, member)
		_ = c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "settings"}, Data: map[string]string{"color": color}}); err != nil {
			t.Fatalf("create the ConfigMap on %s: %v", member, err)
		}
		t.Cleanup(func() { _ = c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}) })
	}
	placeOn(t, hub, name, "member-2", func(s *placementv1beta1.PlacementSpec) {
		s.Policy.ClusterNames = []string{"member-2", "member-3"}
		s.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeReportDiff}
	})
	framework.Eventually(t, 2*time.Minute, clusterStatus(ctx, hub, name, "member-2", func(pcs *placementv1beta1.PerClusterPlacementStatus) error {
		if err := perClusterCondition(pcs, placementv1beta1.ConditionDiffReported, metav1.ConditionTrue, placementv1beta1.ReasonDiffReported); err != nil {
			return err
		}
		for _, d := range pcs.DiffedPlacements {
			for _, od := range d.ObservedDiffs {
				if d.Name == "settings" && od.Path == "/data/color" && od.ValueInMember == "purple" && od.ValueInHub == "blue" {
					return nil
				}
			}
		}
		return fmt.Errorf("diffedPlacements %+v lack /data/color purple (member) vs blue (hub)", pcs.DiffedPlacements)
	}))
	framework.Eventually(t, time.Minute, clusterStatus(ctx, hub, name, "member-3", func(pcs *placementv1beta1.PerClusterPlacementStatus) error {
		if err := perClusterCondition(pcs, placementv1beta1.ConditionDiffReported, metav1.ConditionTrue, placementv1beta1.ReasonDiffReported); err != nil {
			return err
		}
		for _, d := range pcs.DiffedPlacements {
			if d.Name == "settings" {
				return fmt.Errorf("the matching ConfigMap on member-3 is listed as differing: %+v", d)
			}
		}
		for _, c := range pcs.Conditions {
			if c.Type == placementv1beta1.ConditionApplied {
				return fmt.Errorf("a ReportDiff placement reports Applied on member-3: %+v", c)
			}
		}
		return nil
	}))
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := hub.Get(ctx, types.NamespacedName{Name: name}, crp); err != nil {
		t.Fatal(err)
	}
	if c := findPlacementCondition(crp, placementv1beta1.ConditionClusterResourcePlacementDiffReported); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("%s = %+v, want True", placementv1beta1.ConditionClusterResourcePlacementDiffReported, c)
	}
	framework.Consistently(t, 5*time.Second, colorOn(t, "member-2", name, "purple"))
}

func findPlacementCondition(crp *placementv1beta1.ClusterResourcePlacement, t string) *metav1.Condition {
	for i := range crp.Status.Conditions {
		if crp.Status.Conditions[i].Type == t {
			return &crp.Status.Conditions[i]
		}
	}
	return nil
}

// A Deployment whose nodes vanish turns Available=False on the hub, with the
// reason; the value a statusFeedback JSONPath asks for comes back meanwhile.
func TestAvailabilityFollowsTheMemberAndFeedbackComesBack(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const name, member, node = "e2e-vanish", "member-3", "e2e-vanishing-node"
	kubeconfig := provider.MemberKubeconfig(member)
	// A fake node of its own, that only this Deployment's pods go to.
	nodeYAML := `apiVersion: v1
kind: Node
metadata:
  name: ` + node + `
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {e2e-vanish: "yes", type: kwok}
spec:
  taints: [{key: e2e-vanish, value: "yes", effect: NoSchedule}]
status:
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
`
	if out, err := framework.Kubectl(ctx, kubeconfig, nodeYAML, "apply", "-f", "-"); err != nil {
		t.Fatalf("create node: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = framework.Kubectl(ctx, kubeconfig, "", "delete", "node", node, "--ignore-not-found") })

	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}) })
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"e2e-vanish": "yes"},
					Tolerations:  []corev1.Toleration{{Key: "e2e-vanish", Operator: corev1.TolerationOpEqual, Value: "yes", Effect: corev1.TaintEffectNoSchedule}},
					Containers:   []corev1.Container{{Name: "web", Image: "nginx:1.27"}},
				},
			},
		},
	}
	if err := hub.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	placeOn(t, hub, name, member, func(s *placementv1beta1.PlacementSpec) {
		s.StatusFeedback = []placementv1beta1.StatusFeedbackRule{{Group: "apps", Version: "v1", Kind: "Deployment",
			JSONPaths: []placementv1beta1.JSONPathRule{{Name: "ready", Path: ".status.readyReplicas"}, {Name: "broken", Path: "{.status[}"}}}}
	})
	framework.Eventually(t, 2*time.Minute, framework.PlacementConditionsTrue(ctx, hub, name, member))
	framework.Eventually(t, time.Minute, clusterStatus(ctx, hub, name, member, func(pcs *placementv1beta1.PerClusterPlacementStatus) error {
		for _, f := range pcs.Feedback {
			if f.Kind != "Deployment" || f.Name != "web" {
				continue
			}
			got := map[string]placementv1beta1.FeedbackValue{}
			for _, v := range f.Values {
				got[v.Name] = v
			}
			if got["ready"].Value != "2" {
				return fmt.Errorf("feedback ready = %+v, want 2", got["ready"])
			}
			if !strings.Contains(got["broken"].Error, `the JSONPath "{.status[}" does not parse`) {
				return fmt.Errorf("feedback broken = %+v, want the parse error", got["broken"])
			}
			return nil
		}
		return fmt.Errorf("no feedback for Deployment web yet: %+v", pcs.Feedback)
	}))

	start := time.Now()
	if out, err := framework.Kubectl(ctx, kubeconfig, "", "delete", "node", node); err != nil {
		t.Fatalf("delete node: %v\n%s", err, out)
	}
	framework.Eventually(t, 3*time.Minute, clusterStatus(ctx, hub, name, member, func(pcs *placementv1beta1.PerClusterPlacementStatus) error {
		if err := perClusterCondition(pcs, placementv1beta1.ConditionAvailable, metav1.ConditionFalse, placementv1beta1.ReasonNotAvailableYet); err != nil {
			return err
		}
		for _, c := range pcs.Conditions {
			if c.Type == placementv1beta1.ConditionAvailable && !strings.Contains(c.Message, "replicas available") {
				return fmt.Errorf("Available message %q does not say why", c.Message)
			}
		}
		return nil
	}))
	t.Logf("Available=False on the hub %s after the node was deleted", time.Since(start).Round(time.Second))
}

// A ConfigMap born on a member inside a placed namespace is mirrored to the hub,
// kept in sync, reported as a conflict when a second member has it too, and
// removed from the hub when removed on the member.
func TestConfigMapBornOnAMemberIsUpsyncedAndRemoved(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const name = "e2e-upsync"
	configMapNamespace(t, hub, name)
	placeOn(t, hub, name, "member-1", func(s *placementv1beta1.PlacementSpec) {
		s.Policy.ClusterNames = []string{"member-1", "member-2"}
		s.UpsyncSelectors = []placementv1beta1.UpsyncSelector{{Version: "v1", Kind: "ConfigMap",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"upsync": "true"}}}}
	})
	framework.Eventually(t, 2*time.Minute, framework.PlacementConditionsTrue(ctx, hub, name, "member-1", "member-2"))

	born := func(value string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "born", Labels: map[string]string{"upsync": "true"}},
			Data: map[string]string{"value": value}}
	}
	m1 := memberClient(t, "member-1")
	if err := m1.Create(ctx, born("one")); err != nil {
		t.Fatal(err)
	}
	mirrorValue := func(want string) func() error {
		return func() error {
			cm := &corev1.ConfigMap{}
			if err := hub.Get(ctx, types.NamespacedName{Namespace: name, Name: "born"}, cm); err != nil {
				return err
			}
			if from := cm.Labels[placementv1beta1.LabelUpsyncedFrom]; from != "member-1" || cm.Data["value"] != want {
				return fmt.Errorf("the mirror is from %q with value %q, want member-1 with %q", from, cm.Data["value"], want)
			}
			return nil
		}
	}
	framework.Eventually(t, 30*time.Second, mirrorValue("one"))

	cm := &corev1.ConfigMap{}
	if err := m1.Get(ctx, types.NamespacedName{Namespace: name, Name: "born"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["value"] = "two"
	if err := m1.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, mirrorValue("two"))

	// The same ConfigMap on member-2 is a conflict; the mirror stays member-1's.
	if err := memberClient(t, "member-2").Create(ctx, born("other")); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, clusterStatus(ctx, hub, name, "member-2", func(pcs *placementv1beta1.PerClusterPlacementStatus) error {
		return perClusterCondition(pcs, placementv1beta1.ConditionUpsynced, metav1.ConditionFalse, placementv1beta1.ReasonUpsyncConflict)
	}))
	framework.Consistently(t, 3*time.Second, mirrorValue("two"))

	// The mirror is not placed back onto the members.
	framework.Consistently(t, 5*time.Second, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: name}, crp); err != nil {
			return err
		}
		for _, r := range crp.Status.SelectedResources {
			if r.Name == "born" {
				return fmt.Errorf("the placement selects the mirror: %+v", r)
			}
		}
		return nil
	})

	if err := m1.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, func() error {
		err := hub.Get(ctx, types.NamespacedName{Namespace: name, Name: "born"}, &corev1.ConfigMap{})
		if err == nil {
			return fmt.Errorf("the mirror is still on the hub")
		}
		return client.IgnoreNotFound(err)
	})
}

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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flotilla-io/flotilla/agent/apply"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
)

// placementCondition returns a check that a ClusterResourcePlacement's
// condition (its suffix, e.g. Conflicted) has a status and reason, for the
// current generation.
func placementCondition(ctx context.Context, t *testing.T, name, suffix string, want metav1.ConditionStatus, reason string) func() error {
	hub := hubClient(t)
	return func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: name}, crp); err != nil {
			return err
		}
		c := findPlacementCondition(crp, placementv1beta1.ClusterResourcePlacementConditionType(suffix))
		if c == nil || c.Status != want || c.Reason != reason || c.ObservedGeneration != crp.Generation {
			return fmt.Errorf("placement %s: %s is %+v, want %s/%s", name, suffix, c, want, reason)
		}
		return nil
	}
}

// Two ClusterResourcePlacements select one namespace: the one created later
// reports Conflicted and sends nothing; the objects stay the earlier one's on
// every member. Deleting the later leaves them there and the earlier Available;
// deleting the earlier removes them.
func TestConflictBetweenTwoClusterResourcePlacementsTheEarlierKeepsTheNamespace(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const ns = "conflict-crp"
	appNamespace(t, hub, ns)
	placeNamespace(t, hub, "conflict-first", ns, nil)
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "conflict-first", allMembers...))

	placeNamespace(t, hub, "conflict-later", ns, nil)
	framework.Eventually(t, time.Minute, placementCondition(ctx, t, "conflict-later", placementv1beta1.ConditionConflicted,
		metav1.ConditionTrue, placementv1beta1.ReasonSelectedByEarlierPlacement))
	later := &placementv1beta1.ClusterResourcePlacement{}
	if err := hub.Get(ctx, types.NamespacedName{Name: "conflict-later"}, later); err != nil {
		t.Fatal(err)
	}
	if n := len(later.Status.SelectedResources); n != 0 {
		t.Errorf("the later placement places %d object(s), want none: %+v", n, later.Status.SelectedResources)
	}
	msg := findPlacementCondition(later, placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionConflicted)).Message
	for _, want := range []string{"Namespace " + ns, "ConfigMap " + ns + "/settings", "ClusterResourcePlacement conflict-first"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Conflicted message %q does not name %q", msg, want)
		}
	}
	out, err := framework.Kubectl(ctx, provider.HubKubeconfig(), "", "get", "crp", "conflict-first", "conflict-later")
	if err != nil {
		t.Fatalf("kubectl get crp: %v\n%s", err, out)
	}
	t.Logf("kubectl get crp:\n%s", out)

	// The objects stay the earlier placement's Work's on every member.
	owned := func(member string) func() error {
		c := memberClient(t, member)
		return func() error {
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "settings"}, cm); err != nil {
				return err
			}
			if w := cm.Annotations[apply.AnnotationWork]; !strings.HasPrefix(w, "conflict-first") {
				return fmt.Errorf("ConfigMap %s/settings on %s is Work %q's, want conflict-first's", ns, member, w)
			}
			return nil
		}
	}
	for _, m := range allMembers {
		framework.Consistently(t, 10*time.Second, owned(m))
	}

	deletePlacementAndWait(t, hub, "conflict-later")
	for _, m := range allMembers {
		framework.Consistently(t, 15*time.Second, owned(m))
	}
	framework.Eventually(t, time.Minute, framework.PlacementConditionsTrue(ctx, hub, "conflict-first", allMembers...))

	deletePlacementAndWait(t, hub, "conflict-first")
	for _, m := range allMembers {
		framework.Eventually(t, 2*time.Minute, onMember(t, m, &corev1.Namespace{}, types.NamespacedName{Name: ns}, false))
	}
}

// A ClusterResourcePlacement that names kube-system is refused at admission;
// one that got past admission (the rule is checked on the hub too) is
// Scheduled=False, InvalidResourceSelectors, naming the namespace.
func TestConflictReservedNamespaceIsRefusedLoudly(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "conflict-kube-system"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "kube-system"}},
		},
	}
	err := hub.Create(ctx, crp)
	if err == nil {
		t.Cleanup(func() { deletePlacementAndWait(t, hub, crp.Name) })
		t.Fatalf("creating a placement of kube-system succeeded, want it refused")
	}
	if !strings.Contains(err.Error(), "reserved") {
		t.Errorf("creating a placement of kube-system failed with %v, want it to say the namespace is reserved", err)
	}

	// A Namespace selector by labels that matches kube-system leaves it out and
	// says so in the Scheduled condition.
	byLabel := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "conflict-kube-system-by-label"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}}}},
		},
	}
	if err := hub.Create(ctx, byLabel); err != nil {
		t.Fatalf("create placement %s: %v", byLabel.Name, err)
	}
	t.Cleanup(func() { deletePlacementAndWait(t, hub, byLabel.Name) })
	framework.Eventually(t, time.Minute, func() error {
		got := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: byLabel.Name}, got); err != nil {
			return err
		}
		c := findPlacementCondition(got, placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionScheduled))
		if c == nil || !strings.Contains(c.Message, "reserved namespace(s) kube-system") {
			return fmt.Errorf("Scheduled is %+v, want its message to name kube-system as left out", c)
		}
		if n := len(got.Status.SelectedResources); n != 0 {
			return fmt.Errorf("the placement places %d object(s), want none", n)
		}
		return nil
	})
}

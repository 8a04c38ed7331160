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
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// oneClusterAtATime is the rolling update the rollout tests use.
func oneClusterAtATime() placementv1beta1.RolloutStrategy {
	return placementv1beta1.RolloutStrategy{
		Type: placementv1beta1.RollingUpdateRolloutStrategyType,
		RollingUpdate: &placementv1beta1.RollingUpdateConfig{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxSurge: ptr.To(intstr.FromInt32(0)),
		},
	}
}

// placeWithStrategy creates a PickAll placement of one namespace with a rollout strategy.
func placeWithStrategy(t *testing.T, hub client.Client, name string, strategy placementv1beta1.RolloutStrategy) {
	t.Helper()
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: name}},
			Strategy:          strategy,
		},
	}
	if err := hub.Create(context.Background(), crp); err != nil {
		t.Fatalf("create placement %s: %v", name, err)
	}
	t.Cleanup(func() { deletePlacementAndWait(t, hub, name) })
}

// slowDeployment is a Deployment whose pods count as available 15 s after they
// are ready; Recreate makes the member's own rollout take the old pod down first,
// so the Deployment is unavailable for the whole of its update.
func slowDeployment(namespace, image string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas:        ptr.To[int32](1),
			MinReadySeconds: 15,
			Strategy:        appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector:        &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
			},
		},
	}
}

// memberDeployment is what one poll sees of the Deployment on a member.
type memberDeployment struct {
	image     string
	available bool // rolled out: observed, every replica updated and available, no old ones
}

func observeDeployment(ctx context.Context, c client.Client, key types.NamespacedName) (memberDeployment, error) {
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, key, d); err != nil {
		return memberDeployment{}, err
	}
	want := ptr.Deref(d.Spec.Replicas, 1)
	st := d.Status
	return memberDeployment{
		image: d.Spec.Template.Spec.Containers[0].Image,
		available: st.ObservedGeneration == d.Generation && st.UpdatedReplicas == want && st.Replicas == want &&
			st.AvailableReplicas == want && st.UnavailableReplicas == 0,
	}, nil
}

// With maxUnavailable 1 and maxSurge 0, a Deployment with minReadySeconds 15
// updated on the hub reaches the members one at a time, in the order of their
// names, each only once the one before is available with the new version.
func TestRollingUpdateReachesMembersOneAtATime(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const ns = "e2e-rolling"
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, slowDeployment(ns, "nginx:1.27")} {
		if err := hub.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
	placeWithStrategy(t, hub, ns, oneClusterAtATime())
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, ns, allMembers...))

	members := map[string]client.Client{}
	for _, m := range allMembers {
		members[m] = memberClient(t, m)
	}
	key := types.NamespacedName{Namespace: ns, Name: "web"}
	const newImage = "nginx:1.28"

	// Watch the members while the update rolls: when the new version arrives on
	// each, and how many are mid-update (new version, not yet available) at once.
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	var order []string
	maxMidUpdate := 0
	var midUpdateSeen []string
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			var mid []string
			for _, m := range allMembers {
				d, err := observeDeployment(ctx, members[m], key)
				if err != nil || d.image != newImage {
					continue
				}
				mu.Lock()
				if _, ok := arrived[m]; !ok {
					arrived[m] = time.Now()
					order = append(order, m)
				}
				mu.Unlock()
				if !d.available {
					mid = append(mid, m)
				}
			}
			mu.Lock()
			if len(mid) > maxMidUpdate {
				maxMidUpdate, midUpdateSeen = len(mid), mid
			}
			mu.Unlock()
		}
	}()

	d := &appsv1.Deployment{}
	if err := hub.Get(ctx, key, d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Image = newImage
	if err := hub.Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	framework.Eventually(t, 5*time.Minute, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(order) < len(allMembers) {
			return fmt.Errorf("the new version is on %v so far", order)
		}
		return nil
	})
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, ns, allMembers...))
	close(stop)
	<-watched

	mu.Lock()
	defer mu.Unlock()
	for i, m := range order {
		framework.Logf("rolling update: %s got the new version after %s", m, arrived[m].Sub(start).Round(100*time.Millisecond))
		if i > 0 {
			// The Deployment takes minReadySeconds to become available, so the next
			// member cannot follow sooner; less one second, because the pod's Ready
			// time, from which the member counts, is kept in whole seconds.
			if gap := arrived[m].Sub(arrived[order[i-1]]); gap < 14*time.Second {
				t.Errorf("%s got the new version %s after %s, sooner than the 15 s (less the Ready time's rounding) %s needs to become available", m, gap, order[i-1], order[i-1])
			}
		}
	}
	if strings.Join(order, ",") != strings.Join(allMembers, ",") {
		t.Errorf("the new version arrived in the order %v, want %v", order, allMembers)
	}
	if maxMidUpdate > 1 {
		t.Errorf("%d members were mid-update at once (%v), want at most 1", maxMidUpdate, midUpdateSeen)
	}
}

// A member whose apply fails holds the rolling update: the others keep the old
// version, and the status says which member holds it and why.
func TestFailedApplyOnTheFirstMemberHoldsTheOthers(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const ns = "e2e-held"
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"version": "1"}},
	} {
		if err := hub.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
	strategy := oneClusterAtATime()
	strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverNever}
	placeWithStrategy(t, hub, ns, strategy)
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, ns, allMembers...))

	// member-1 already has a "blocker" ConfigMap of its own, which the placement's
	// whenToTakeOver: Never refuses to take over.
	blocker := func(owner string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blocker"}, Data: map[string]string{"owner": owner}}
	}
	if err := memberClient(t, "member-1").Create(ctx, blocker("member-1")); err != nil {
		t.Fatal(err)
	}
	if err := hub.Create(ctx, blocker("hub")); err != nil {
		t.Fatal(err)
	}
	settings := &corev1.ConfigMap{}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: ns, Name: "settings"}, settings); err != nil {
		t.Fatal(err)
	}
	settings.Data["version"] = "2"
	if err := hub.Update(ctx, settings); err != nil {
		t.Fatal(err)
	}

	held := func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: ns}, crp); err != nil {
			return err
		}
		for _, pcs := range crp.Status.PlacementStatuses {
			rs := conditions.Get(pcs.Conditions, placementv1beta1.ConditionRolloutStarted)
			switch pcs.ClusterName {
			case "member-1":
				if rs == nil || rs.Status != metav1.ConditionTrue {
					return fmt.Errorf("member-1 RolloutStarted = %+v, want True", rs)
				}
				if ap := conditions.Get(pcs.Conditions, placementv1beta1.ConditionApplied); ap == nil || ap.Status != metav1.ConditionFalse {
					return fmt.Errorf("member-1 Applied = %+v, want False", ap)
				}
			default:
				if rs == nil || rs.Status != metav1.ConditionFalse || !strings.Contains(rs.Message, "member-1") {
					return fmt.Errorf("%s RolloutStarted = %+v, want False naming member-1", pcs.ClusterName, rs)
				}
			}
		}
		placementRS := conditions.Get(crp.Status.Conditions, placementv1beta1.ConditionClusterResourcePlacementRolloutStarted)
		if placementRS == nil || placementRS.Status != metav1.ConditionFalse || !strings.Contains(placementRS.Message, "member-1") {
			return fmt.Errorf("placement RolloutStarted = %+v, want False naming member-1", placementRS)
		}
		return nil
	}
	framework.Eventually(t, 2*time.Minute, held)
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := hub.Get(ctx, types.NamespacedName{Name: ns}, crp); err == nil {
		framework.Logf("held rollout: %s", conditions.Get(crp.Status.Conditions, placementv1beta1.ConditionClusterResourcePlacementRolloutStarted).Message)
	}
	// The others keep the old version while member-1 fails.
	framework.Consistently(t, 20*time.Second, func() error {
		for _, m := range []string{"member-2", "member-3"} {
			cm := &corev1.ConfigMap{}
			if err := memberClient(t, m).Get(ctx, types.NamespacedName{Namespace: ns, Name: "settings"}, cm); err != nil {
				return err
			}
			if cm.Data["version"] != "1" {
				return fmt.Errorf("%s has version %s while member-1 holds the rollout", m, cm.Data["version"])
			}
		}
		return held()
	})

	// Removing member-1's own object lets the rollout go on to every member.
	if err := memberClient(t, "member-1").Delete(ctx, blocker("member-1")); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, ns, allMembers...))
}

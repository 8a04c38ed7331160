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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
)

// patchMember changes a MemberCluster and undoes the change when the test ends.
func patchMember(t *testing.T, hub client.Client, name string, mutate func(mc *clusterv1beta1.MemberCluster)) {
	t.Helper()
	ctx := context.Background()
	mc := &clusterv1beta1.MemberCluster{}
	if err := hub.Get(ctx, types.NamespacedName{Name: name}, mc); err != nil {
		t.Fatal(err)
	}
	original := mc.DeepCopy()
	patch := client.MergeFrom(mc.DeepCopy())
	mutate(mc)
	if err := hub.Patch(ctx, mc, patch); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cur := &clusterv1beta1.MemberCluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: name}, cur); err != nil {
			t.Errorf("restore %s: %v", name, err)
			return
		}
		restore := client.MergeFrom(cur.DeepCopy())
		cur.Labels = original.Labels
		cur.Spec = original.Spec
		if err := hub.Patch(ctx, cur, restore); err != nil {
			t.Errorf("restore %s: %v", name, err)
		}
	})
}

// placedOn returns a check that a placement's bindings are exactly on clusters.
func placedOn(ctx context.Context, hub client.Client, placement string, clusters ...string) func() error {
	return func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: placement}, crp); err != nil {
			return err
		}
		var got []string
		for _, pcs := range crp.Status.PlacementStatuses {
			if pcs.ClusterName != "" {
				got = append(got, pcs.ClusterName)
			}
		}
		if strings.Join(got, ",") != strings.Join(clusters, ",") {
			return fmt.Errorf("placement %s is on [%s], want [%s]", placement, strings.Join(got, ","), strings.Join(clusters, ","))
		}
		return nil
	}
}

func requireLabels(labels map[string]string) *placementv1beta1.Affinity {
	return &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{
			ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}},
		},
	}}
}

// Labels on MemberClusters change where a PickAll placement is, live.
func TestMemberLabelsChangeTheSelectedSetLive(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-live-labels")
	placeNamespace(t, hub, "e2e-live-labels", "e2e-live-labels", &placementv1beta1.PlacementPolicy{
		PlacementType: placementv1beta1.PickAll, Affinity: requireLabels(map[string]string{"tier": "gold"})})
	framework.Eventually(t, time.Minute, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "e2e-live-labels"}, crp); err != nil {
			return err
		}
		for _, c := range crp.Status.Conditions {
			if c.Type == placementv1beta1.ConditionClusterResourcePlacementScheduled && c.Status == metav1.ConditionFalse {
				t.Logf("no gold cluster yet: %s: %s", c.Reason, c.Message)
				return nil
			}
		}
		return fmt.Errorf("placement not reported unschedulable yet: %+v", crp.Status.Conditions)
	})
	patchMember(t, hub, "member-1", func(mc *clusterv1beta1.MemberCluster) { mc.Labels["tier"] = "gold" })
	framework.Eventually(t, 2*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-live-labels", "member-1"))
	patchMember(t, hub, "member-3", func(mc *clusterv1beta1.MemberCluster) { mc.Labels["tier"] = "gold" })
	framework.Eventually(t, 2*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-live-labels", "member-1", "member-3"))
	patchMember(t, hub, "member-1", func(mc *clusterv1beta1.MemberCluster) { delete(mc.Labels, "tier") })
	framework.Eventually(t, 2*time.Minute, placedOn(ctx, hub, "e2e-live-labels", "member-3"))
}

// A member with strictMatchLabels is skipped by a placement without a selector.
func TestStrictClusterIsSkippedBySelectorlessPlacement(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	patchMember(t, hub, "member-2", func(mc *clusterv1beta1.MemberCluster) { mc.Spec.StrictMatchLabels = true })
	appNamespace(t, hub, "e2e-strict")
	placeNamespace(t, hub, "e2e-strict", "e2e-strict", nil)
	framework.Eventually(t, 2*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-strict", "member-1", "member-3"))

	// A placement whose selector explicitly matches the strict cluster may use it.
	appNamespace(t, hub, "e2e-strict-explicit")
	placeNamespace(t, hub, "e2e-strict-explicit", "e2e-strict-explicit", &placementv1beta1.PlacementPolicy{
		PlacementType: placementv1beta1.PickAll, Affinity: requireLabels(map[string]string{"env": "dev"})})
	framework.Eventually(t, 2*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-strict-explicit", "member-2"))
}

// PickN with a DoNotSchedule topology spread over zones puts one copy in each zone.
func TestTopologySpreadAcrossTwoZones(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-spread")
	placeNamespace(t, hub, "e2e-spread", "e2e-spread", &placementv1beta1.PlacementPolicy{
		PlacementType:    placementv1beta1.PickN,
		NumberOfClusters: ptr.To[int32](2),
		TopologySpreadConstraints: []placementv1beta1.TopologySpreadConstraint{{
			MaxSkew: ptr.To[int32](1), TopologyKey: "zone", WhenUnsatisfiable: placementv1beta1.DoNotSchedule,
		}},
	})
	zoneOf := map[string]string{"member-1": "zone-a", "member-2": "zone-b", "member-3": "zone-b"}
	framework.Eventually(t, 2*time.Minute, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "e2e-spread"}, crp); err != nil {
			return err
		}
		zones := map[string]int{}
		for _, pcs := range crp.Status.PlacementStatuses {
			if pcs.ClusterName != "" {
				zones[zoneOf[pcs.ClusterName]]++
			}
		}
		if zones["zone-a"] != 1 || zones["zone-b"] != 1 {
			return fmt.Errorf("copies per zone = %v, want one in zone-a and one in zone-b", zones)
		}
		return nil
	})
}

// A placement for another scheduler is left unscheduled by ours.
func TestPlacementForAnotherSchedulerStaysUnscheduled(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-external")
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-external"},
		Spec: placementv1beta1.PlacementSpec{
			SchedulerName:     "my-own-scheduler",
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "e2e-external"}},
		},
	}
	if err := hub.Create(ctx, crp); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deletePlacementAndWait(t, hub, "e2e-external") })
	framework.Eventually(t, time.Minute, func() error {
		got := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "e2e-external"}, got); err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == placementv1beta1.ConditionClusterResourcePlacementScheduled && c.Reason == placementv1beta1.ReasonWaitingForExternalScheduler {
				return nil
			}
		}
		return fmt.Errorf("conditions: %+v", got.Status.Conditions)
	})
	framework.Consistently(t, 5*time.Second, func() error {
		list := &placementv1beta1.ClusterResourceBindingList{}
		if err := hub.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: "e2e-external"}); err != nil {
			return err
		}
		if len(list.Items) != 0 {
			return fmt.Errorf("our scheduler bound it to %d clusters", len(list.Items))
		}
		return nil
	})

	// The external scheduler writes a binding; the rest of the pipeline delivers it.
	binding := &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-external-member-1", Labels: map[string]string{placementv1beta1.LabelPlacementName: "e2e-external"}},
		Spec:       placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateScheduled, TargetCluster: "member-1"},
	}
	if err := hub.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, onMember(t, "member-1", &corev1.ConfigMap{}, types.NamespacedName{Namespace: "e2e-external", Name: "settings"}, true))
}

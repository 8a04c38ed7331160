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
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/apply"
	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/tools/localfleet/fleet"
)

// joinHubAsMember joins the hub cluster as member "hub" the way a user does
// (`hub token create --hub-as-member`, `agent join --hub-as-member` with the hub
// cluster's kubeconfig, `agent run`) and, when the test ends, makes it leave again
// and waits until the hub has forgotten it, so that the fleet the other tests use
// is as it was.
func joinHubAsMember(t *testing.T, hub client.Client) {
	t.Helper()
	ctx := context.Background()
	if err := provider.JoinHubAsMember(ctx); err != nil {
		t.Fatalf("joining the hub as member %s: %v", fleet.HubMemberName, err)
	}
	t.Cleanup(func() {
		if err := provider.LeaveHubAsMember(ctx); err != nil {
			t.Errorf("the hub's agent leave failed: %v", err)
		}
		framework.Eventually(t, 2*time.Minute, func() error {
			err := hub.Get(ctx, types.NamespacedName{Name: fleet.HubMemberName}, &clusterv1beta1.MemberCluster{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("MemberCluster %s still exists (err %w)", fleet.HubMemberName, err)
		})
		framework.Eventually(t, 2*time.Minute, func() error {
			err := hub.Get(ctx, types.NamespacedName{Name: clusterv1beta1.MemberNamespace(fleet.HubMemberName)}, &corev1.Namespace{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("namespace %s still exists (err %w)", clusterv1beta1.MemberNamespace(fleet.HubMemberName), err)
		})
	})
	for _, cond := range []string{clusterv1beta1.ConditionJoined, clusterv1beta1.ConditionAgentConnected, clusterv1beta1.ConditionHealthy} {
		framework.Eventually(t, time.Minute, framework.MemberCondition(ctx, hub, fleet.HubMemberName, cond, metav1.ConditionTrue))
	}
}

func rawObject(t *testing.T, obj any) placementv1beta1.ResourceContent {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return placementv1beta1.ResourceContent{RawExtension: runtime.RawExtension{Raw: raw}}
}

// The hub joined as member "hub" receives a compound placement: the outer placement
// places an envelope carrying an inner placement onto the hub only; the hub's agent
// applies the inner placement there (and refuses a manifest aimed at the hub's own
// namespace), and the inner placement places its app onto the other members, not
// onto the hub, whose taint it does not tolerate. Nothing loops, and deleting the
// outer placement removes the inner one and, through it, the app on the members.
func TestHubAsMemberReceivesACompoundPlacement(t *testing.T) {
	if provider.OnKind() {
		t.Skip("the hub joins as a member on kwok fleets only (localfleet --hub-as-member)")
	}
	ctx := context.Background()
	hub := hubClient(t)
	joinHubAsMember(t, hub)

	mc := &clusterv1beta1.MemberCluster{}
	if err := hub.Get(ctx, types.NamespacedName{Name: fleet.HubMemberName}, mc); err != nil {
		t.Fatal(err)
	}
	if mc.Labels[clusterv1beta1.LabelHub] != "true" || !slices.ContainsFunc(mc.Spec.Taints, func(tt clusterv1beta1.Taint) bool {
		return tt.Key == clusterv1beta1.TaintHub && tt.Effect == clusterv1beta1.TaintEffectNoSchedule
	}) {
		t.Fatalf("MemberCluster %s has labels %v and taints %v, want the hub's label and NoSchedule taint", mc.Name, mc.Labels, mc.Spec.Taints)
	}

	const app, inner, outer = "e2e-compound", "e2e-compound-inner", "e2e-compound-outer"
	createOnHub(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: app}})
	createOnHub(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "settings"}, Data: map[string]string{"color": "green"}})
	innerCRP := map[string]any{
		"apiVersion": placementv1beta1.GroupVersion.String(), "kind": "ClusterResourcePlacement",
		"metadata": map[string]any{"name": inner},
		"spec": map[string]any{
			"resourceSelectors": []any{map[string]any{"group": "", "version": "v1", "kind": "Namespace", "name": app}},
			"policy":            map[string]any{"placementType": "PickAll"},
		},
	}
	forged := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "e2e-forged", "namespace": clusterv1beta1.HubNamespace},
		"data":     map[string]any{"k": "v"},
	}
	createOnHub(t, hub, &placementv1beta1.ClusterResourceEnvelope{
		ObjectMeta: metav1.ObjectMeta{Name: outer},
		Data:       map[string]placementv1beta1.ResourceContent{"inner.yaml": rawObject(t, innerCRP), "forged.yaml": rawObject(t, forged)},
	})
	outerCRP := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: outer},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Group: placementv1beta1.GroupVersion.Group, Version: placementv1beta1.GroupVersion.Version, Kind: "ClusterResourceEnvelope", Name: outer}},
			Policy: &placementv1beta1.PlacementPolicy{
				PlacementType: placementv1beta1.PickAll,
				Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{
						LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{clusterv1beta1.LabelHub: "true"}},
					}}},
				}},
				Tolerations: []placementv1beta1.Toleration{{Key: clusterv1beta1.TaintHub, Operator: placementv1beta1.TolerationOpExists, Effect: clusterv1beta1.TaintEffectNoSchedule}},
			},
		},
	}
	if err := hub.Create(ctx, outerCRP); err != nil {
		t.Fatalf("create placement %s: %v", outer, err)
	}
	t.Cleanup(func() { deletePlacementAndWait(t, hub, outer) })

	// The hub's agent applied the inner placement on the hub, as the Work's.
	framework.Eventually(t, 2*time.Minute, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: inner}, crp); err != nil {
			return err
		}
		if crp.Labels[apply.LabelAppliedBy] != apply.AppliedByAgent || crp.Annotations[apply.AnnotationWork] == "" {
			return fmt.Errorf("placement %s has labels %v and annotations %v, want the agent's", inner, crp.Labels, crp.Annotations)
		}
		return nil
	})
	// The inner placement's app is Available on every other member, not on the hub.
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, inner, allMembers...))
	for _, m := range allMembers {
		framework.Eventually(t, time.Minute, onMember(t, m, &corev1.ConfigMap{}, types.NamespacedName{Namespace: app, Name: "settings"}, true))
	}
	// The outer placement is on the hub only; the manifest aimed at the hub's own
	// namespace is refused there, and only it.
	framework.Eventually(t, 2*time.Minute, clusterStatus(ctx, hub, outer, fleet.HubMemberName, func(pcs *placementv1beta1.PerClusterPlacementStatus) error {
		var seen []string
		for _, f := range pcs.FailedPlacements {
			if f.Name == "e2e-forged" && f.Namespace == clusterv1beta1.HubNamespace && f.Condition.Status == metav1.ConditionFalse &&
				strings.Contains(f.Condition.Message, "is refused: namespace "+clusterv1beta1.HubNamespace) {
				if len(pcs.FailedPlacements) != 1 {
					return fmt.Errorf("failed placements %+v, want only the forged ConfigMap", pcs.FailedPlacements)
				}
				return nil
			}
			seen = append(seen, fmt.Sprintf("%s/%s: %s", f.Namespace, f.Name, f.Condition.Message))
		}
		return fmt.Errorf("the forged ConfigMap is not reported refused; failed placements: %v", seen)
	}))
	clusters, err := clustersOf(ctx, hub, outer)
	if err != nil || !slices.Equal(clusters, []string{fleet.HubMemberName}) {
		t.Fatalf("the outer placement is on %v (err %v), want only %s", clusters, err, fleet.HubMemberName)
	}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: clusterv1beta1.HubNamespace, Name: "e2e-forged"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ConfigMap %s/e2e-forged on the hub: err %v, want NotFound", clusterv1beta1.HubNamespace, err)
	}

	// Nothing loops: the inner placement's spec and the outer's resources stay put.
	before := &placementv1beta1.ClusterResourcePlacement{}
	if err := hub.Get(ctx, types.NamespacedName{Name: outer}, before); err != nil {
		t.Fatal(err)
	}
	framework.Consistently(t, 10*time.Second, func() error {
		in, out := &placementv1beta1.ClusterResourcePlacement{}, &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: inner}, in); err != nil {
			return err
		}
		if err := hub.Get(ctx, types.NamespacedName{Name: outer}, out); err != nil {
			return err
		}
		if in.Generation != 1 {
			return fmt.Errorf("the inner placement's spec was rewritten: generation %d", in.Generation)
		}
		if out.Status.ObservedResourceIndex != before.Status.ObservedResourceIndex {
			return fmt.Errorf("the outer placement's resources moved from index %s to %s", before.Status.ObservedResourceIndex, out.Status.ObservedResourceIndex)
		}
		return nil
	})

	// Deleting the outer placement removes the inner one, and with it the app.
	deletePlacementAndWait(t, hub, outer)
	framework.Eventually(t, 2*time.Minute, func() error {
		err := hub.Get(ctx, types.NamespacedName{Name: inner}, &placementv1beta1.ClusterResourcePlacement{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("the inner placement still exists (err %w)", err)
	})
	for _, m := range allMembers {
		framework.Eventually(t, 2*time.Minute, onMember(t, m, &corev1.Namespace{}, types.NamespacedName{Name: app}, false))
	}
}

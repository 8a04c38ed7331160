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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
)

func labelSelector(l map[string]string) *placementv1beta1.ClusterSelector {
	return &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: l}}}}
}

// A ResourceOverride puts the member's name in the ConfigMap on env=dev members
// and keeps it off zone=eu ones; other members get it as on the hub.
func TestResourceOverrideAddsMemberNameAndDeletesPerZone(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const ns = "e2e-overrides"
	// member-2 is env=dev; member-3 moves to zone=eu for this test.
	patchMember(t, hub, "member-3", func(mc *clusterv1beta1.MemberCluster) { mc.Labels["zone"] = "eu" })
	createOnHub(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	createOnHub(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"color": "blue"}})
	createOnHub(t, hub, &placementv1beta1.ResourceOverride{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "per-member"},
		Spec: placementv1beta1.ResourceOverrideSpec{
			ResourceSelectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "settings"}},
			Policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{
				{ClusterSelector: labelSelector(map[string]string{"env": "dev"}), JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{
					{Operator: placementv1beta1.JSONPatchOverrideOpAdd, Path: "/data/member", Value: &apiextensionsv1.JSON{Raw: []byte(`"${MEMBER-CLUSTER-NAME}"`)}},
				}},
				{ClusterSelector: labelSelector(map[string]string{"zone": "eu"}), OverrideType: placementv1beta1.DeleteOverrideType},
			}},
		},
	})
	placeNamespace(t, hub, "e2e-overrides", ns, &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll})
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-overrides", allMembers...))

	key := types.NamespacedName{Namespace: ns, Name: "settings"}
	memberValue := func(member, want string) func() error {
		c := memberClient(t, member)
		return func() error {
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, key, cm); err != nil {
				return err
			}
			if got, ok := cm.Data["member"]; got != want || (want == "") == ok {
				return fmt.Errorf("%s: data.member = %q (set %v), want %q", member, got, ok, want)
			}
			return nil
		}
	}
	framework.Eventually(t, time.Minute, memberValue("member-2", "member-2"))
	framework.Eventually(t, time.Minute, memberValue("member-1", ""))
	framework.Eventually(t, time.Minute, onMember(t, "member-3", &corev1.ConfigMap{}, key, false))
	framework.Eventually(t, time.Minute, onMember(t, "member-3", &corev1.Namespace{}, types.NamespacedName{Name: ns}, true))

	// The placement names the overrides each cluster applies, and Overridden says so.
	framework.Eventually(t, time.Minute, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "e2e-overrides"}, crp); err != nil {
			return err
		}
		for _, pcs := range crp.Status.PlacementStatuses {
			wantOverride := pcs.ClusterName != "member-1"
			if got := len(pcs.ApplicableResourceOverrides) == 1 && pcs.ApplicableResourceOverrides[0].Name == "per-member-0"; got != wantOverride {
				return fmt.Errorf("%s lists overrides %v", pcs.ClusterName, pcs.ApplicableResourceOverrides)
			}
			c := meta(pcs.Conditions, placementv1beta1.ConditionOverridden)
			wantReason := placementv1beta1.ReasonNoOverrideSpecified
			if wantOverride {
				wantReason = placementv1beta1.ReasonOverridden
			}
			if c == nil || c.Reason != wantReason {
				return fmt.Errorf("%s: Overridden is %+v, want reason %s", pcs.ClusterName, c, wantReason)
			}
		}
		return nil
	})
}

func meta(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

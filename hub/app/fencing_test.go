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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// A fenced placement asked to move off a member whose agent was just cut off
// does not start on the other member until the lease and the margin have
// passed since the hub last heard from it: at no moment is there a binding on
// the new member while the old member still has the placement's Work.
func TestAFencedPlacementStartsElsewhereOnlyOnceTheOldCopyIsKnownStopped(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	testenv.ReadyMember(t, c, "fence-one", map[string]string{"suite": "fence"})
	testenv.ReadyMember(t, c, "fence-two", map[string]string{"suite": "fence", "fast": "yes"})
	startHub(t)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fenced"}}); err != nil {
		t.Fatal(err)
	}
	const lease = 10 * time.Second
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "fenced"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "fenced"}},
			Policy: &placementv1beta1.PlacementPolicy{
				PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1),
				Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
						{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"suite": "fence"}}},
					}},
					PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PreferredClusterSelector{{
						Weight: 50, Preference: placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fast": "yes"}}},
					}},
				}},
				Fencing: &placementv1beta1.FencingPolicy{LeaseSeconds: ptr.To(int32(lease / time.Second))},
			},
		},
	}
	if err := c.Create(ctx, crp); err != nil {
		t.Fatal(err)
	}
	oldWork := types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace("fence-two"), Name: "fenced-work"}
	testenv.Eventually(t, 30*time.Second, func() error {
		w := &placementv1beta1.Work{}
		if err := c.Get(ctx, oldWork, w); err != nil {
			return err
		}
		if w.Spec.Fencing == nil || w.Spec.Fencing.Lease() != lease {
			return fmt.Errorf("the Work carries fencing %+v, want the placement's", w.Spec.Fencing)
		}
		return nil
	})

	// fence-two's agent is cut off now; the placement is asked to move to
	// fence-one, which has become the better cluster.
	mc := &clusterv1beta1.MemberCluster{}
	if err := c.Get(ctx, types.NamespacedName{Name: "fence-two"}, mc); err != nil {
		t.Fatal(err)
	}
	cutAt := time.Now()
	conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse, clusterv1beta1.ReasonHeartbeatTimeout, "test", mc.Generation)
	mc.Status.LastHeartbeatTime = &metav1.Time{Time: cutAt}
	if err := c.Status().Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
	for name, fast := range map[string]bool{"fence-one": true, "fence-two": false} {
		m := &clusterv1beta1.MemberCluster{}
		if err := c.Get(ctx, types.NamespacedName{Name: name}, m); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(m.DeepCopy())
		if fast {
			m.Labels["fast"] = "yes"
		} else {
			delete(m.Labels, "fast")
		}
		if err := c.Patch(ctx, m, patch); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Get(ctx, types.NamespacedName{Name: "fenced"}, crp); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(crp.DeepCopy())
	metav1.SetMetaDataAnnotation(&crp.ObjectMeta, placementv1beta1.AnnotationRebalance, "1")
	if err := c.Patch(ctx, crp, patch); err != nil {
		t.Fatal(err)
	}

	// Until fence-one has a binding, the old Work must be gone first.
	newOnOne := func() (bool, error) {
		list := &placementv1beta1.ClusterResourceBindingList{}
		if err := c.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: "fenced"}); err != nil {
			return false, err
		}
		for _, b := range list.Items {
			if b.Spec.TargetCluster == "fence-one" {
				return true, nil
			}
		}
		return false, nil
	}
	oldWorkExists := func() (bool, error) {
		err := c.Get(ctx, oldWork, &placementv1beta1.Work{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}
	sawWaiting := false
	testenv.Eventually(t, 60*time.Second, func() error {
		onOne, err := newOnOne()
		if err != nil {
			return err
		}
		old, err := oldWorkExists()
		if err != nil {
			return err
		}
		if onOne && old {
			t.Fatalf("fence-one got a binding while fence-two still has the Work, %s after the cut", time.Since(cutAt))
		}
		got := &placementv1beta1.ClusterResourcePlacement{}
		if err := c.Get(ctx, types.NamespacedName{Name: "fenced"}, got); err != nil {
			return err
		}
		if cond := conditions.Get(got.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionFencing)); cond != nil &&
			cond.Reason == placementv1beta1.ReasonFencingWaiting && strings.Contains(cond.Message, "fence-two: its agent is cut off") {
			sawWaiting = true
		}
		if !onOne {
			return fmt.Errorf("no binding on fence-one yet (old Work there: %v)", old)
		}
		return nil
	})
	if took := time.Since(cutAt); took < lease {
		t.Errorf("the placement started on fence-one %s after the cut, before the lease of %s ran out", took, lease)
	}
	if !sawWaiting {
		t.Error("the placement never said it was waiting for fence-two's copy to stop")
	}
}

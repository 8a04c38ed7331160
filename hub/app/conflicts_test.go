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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// Two ClusterResourcePlacements select one namespace: the later one reports
// Conflicted, places nothing and its Work carries none of the objects, while
// the earlier one's Work carries them all; deleting the earlier one lets the
// later one take them. A ResourcePlacement in a reserved namespace is
// Scheduled=False, InvalidResourceSelectors.
func TestConflictBetweenTwoClusterResourcePlacementsIsDecidedOnTheHub(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	member := "conflict-1"
	testenv.ReadyMember(t, c, member, map[string]string{"flotilla.test/group": "conflict"})
	startHub(t)
	testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	testenv.Create(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}, Data: map[string]string{"k": "v"}})
	place := func(name string) *placementv1beta1.ClusterResourcePlacement {
		crp := &placementv1beta1.ClusterResourcePlacement{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: placementv1beta1.PlacementSpec{
				ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "shop"}},
				Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{member}},
			},
		}
		testenv.Create(t, c, crp)
		return crp
	}
	workHas := func(placement string, want ...string) func() error {
		return func() error {
			_, names, _, _, err := rpWork(ctx, c, member, pipeline.PlacementKey{Name: placement})
			if err != nil {
				return err
			}
			if strings.Join(names, ",") != strings.Join(want, ",") {
				return fmt.Errorf("the Work of %s holds %v, want %v", placement, names, want)
			}
			return nil
		}
	}

	first := place("shop-first")
	testenv.Eventually(t, 30*time.Second, workHas("shop-first", "ConfigMap/settings", "Namespace/shop"))
	// Created in the same second or later, and by name after: the later one.
	place("shop-later")
	testenv.Eventually(t, 30*time.Second, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := c.Get(ctx, types.NamespacedName{Name: "shop-later"}, crp); err != nil {
			return err
		}
		cond := conditions.Get(crp.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionConflicted))
		if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != placementv1beta1.ReasonSelectedByEarlierPlacement ||
			!strings.Contains(cond.Message, "ConfigMap shop/settings, Namespace shop placed by ClusterResourcePlacement shop-first") {
			return fmt.Errorf("Conflicted: %+v", cond)
		}
		if len(crp.Status.SelectedResources) != 0 {
			return fmt.Errorf("the later placement places %+v, want nothing", crp.Status.SelectedResources)
		}
		return nil
	})
	testenv.Eventually(t, 30*time.Second, workHas("shop-later"))
	if err := workHas("shop-first", "ConfigMap/settings", "Namespace/shop")(); err != nil {
		t.Error(err)
	}

	// The earlier one goes: the later one places the namespace now.
	if err := c.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, workHas("shop-later", "ConfigMap/settings", "Namespace/shop"))
	testenv.Eventually(t, 30*time.Second, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := c.Get(ctx, types.NamespacedName{Name: "shop-later"}, crp); err != nil {
			return err
		}
		if cond := conditions.Get(crp.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionConflicted)); cond != nil {
			return fmt.Errorf("Conflicted still: %+v", cond)
		}
		return nil
	})

	// A ResourcePlacement in kube-public is refused, loudly.
	testenv.Create(t, c, &placementv1beta1.ResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-public", Name: "system"},
		Spec:       placementv1beta1.PlacementSpec{ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "ConfigMap"}}},
	})
	testenv.Eventually(t, 30*time.Second, func() error {
		rp := &placementv1beta1.ResourcePlacement{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: "kube-public", Name: "system"}, rp); err != nil {
			return err
		}
		cond := conditions.Get(rp.Status.Conditions, placementv1beta1.ResourcePlacementConditionType(placementv1beta1.ConditionScheduled))
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != placementv1beta1.ReasonInvalidResourceSelectors ||
			!strings.Contains(cond.Message, "namespace kube-public") || !strings.Contains(cond.Message, "reserved") {
			return fmt.Errorf("Scheduled: %+v", cond)
		}
		return nil
	})
}

// An earlier placement that starts placing what a later one places (its
// selector is edited to name the later one's namespace) takes it over: the
// change of its placed objects wakes the later placement, which then leaves
// them out.
func TestAnEarlierPlacementTakesOverWhatItComesToSelect(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	member := "takeover-1"
	testenv.ReadyMember(t, c, member, map[string]string{"flotilla.test/group": "takeover"})
	startHub(t)
	testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "depot"}})
	testenv.Create(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "depot", Name: "stock"}, Data: map[string]string{"k": "v"}})
	place := func(name string, sel placementv1beta1.ResourceSelector) {
		testenv.Create(t, c, &placementv1beta1.ClusterResourcePlacement{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: placementv1beta1.PlacementSpec{
				ResourceSelectors: []placementv1beta1.ResourceSelector{sel},
				Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{member}},
			},
		})
	}
	places := func(name string, want int) func() error {
		return func() error {
			crp := &placementv1beta1.ClusterResourcePlacement{}
			if err := c.Get(ctx, types.NamespacedName{Name: name}, crp); err != nil {
				return err
			}
			if len(crp.Status.SelectedResources) != want {
				return fmt.Errorf("%s places %+v, want %d objects", name, crp.Status.SelectedResources, want)
			}
			return nil
		}
	}
	// The earlier placement selects namespaces labelled tier=depot: none yet.
	place("depot-early", placementv1beta1.ResourceSelector{Version: "v1", Kind: "Namespace",
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "depot"}}})
	testenv.Eventually(t, 30*time.Second, places("depot-early", 0))
	place("depot-late", placementv1beta1.ResourceSelector{Version: "v1", Kind: "Namespace", Name: "depot"})
	testenv.Eventually(t, 30*time.Second, places("depot-late", 2))

	// Its selector is edited to name the namespace: only the earlier
	// placement changes, and the later one learns of it from the earlier
	// one's placed objects.
	patch := []byte(`{"spec":{"resourceSelectors":[{"version":"v1","kind":"Namespace","name":"depot"}]}}`)
	if err := c.Patch(ctx, &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "depot-early"}},
		client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, places("depot-early", 2))
	testenv.Eventually(t, 30*time.Second, places("depot-late", 0))
	testenv.Eventually(t, 30*time.Second, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := c.Get(ctx, types.NamespacedName{Name: "depot-late"}, crp); err != nil {
			return err
		}
		cond := conditions.Get(crp.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionConflicted))
		if cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, "placed by ClusterResourcePlacement depot-early") {
			return fmt.Errorf("Conflicted: %+v", cond)
		}
		return nil
	})
}

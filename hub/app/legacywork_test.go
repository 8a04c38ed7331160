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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/schedulinggroup"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// A hub upgraded from one that named a scheduling group's Work
// <placement>-<group>-work (pipeline.PlacementKey.LegacyWorkName) keeps using
// that Work: it is not duplicated under the new name nor deleted and created
// again (same UID), it gets the placement's edits, and it goes when the
// placement is deleted. The older hub is played by the hub itself, stopped,
// with its group Work moved to the legacy name.
func TestAWorkOfTheOldNameIsKeptAfterAnUpgrade(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	const member, group = "legacy-1", "database"
	testenv.ReadyMember(t, c, member, map[string]string{"suite": "legacy", "tier": "db"})
	key := pipeline.PlacementKey{Name: "legacy"}
	newName, oldName := key.WorkName(group), key.LegacyWorkName(group)
	if newName == oldName {
		t.Fatalf("the names of the two schemes are the same (%s): nothing to test", newName)
	}
	ns := clusterv1beta1.MemberNamespace(member)
	newKey, oldKey := types.NamespacedName{Namespace: ns, Name: newName}, types.NamespacedName{Namespace: ns, Name: oldName}

	testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}})
	testenv.Create(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "legacy", Name: "db-config",
		Annotations: map[string]string{schedulinggroup.AnnotationGroup: group}}})
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Annotations: map[string]string{
			schedulinggroup.AnnotationDynamicSelectors: `[{"group":"database","matchLabels":{"suite":"legacy","tier":"db"},"source":"ResourceWorkflow"}]`,
		}},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "legacy"}},
			Policy: &placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
					{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"suite": "legacy"}}},
				}},
			}}},
		},
	}
	testenv.Create(t, c, crp)

	// The older hub: the group's Work is written, then the hub stops and the
	// Work takes the name an older hub gave it.
	t.Run("an older hub places the group", func(t *testing.T) {
		startHub(t)
		testenv.Eventually(t, 30*time.Second, func() error { return c.Get(ctx, newKey, &placementv1beta1.Work{}) })
	})
	written := &placementv1beta1.Work{}
	if err := c.Get(ctx, newKey, written); err != nil {
		t.Fatal(err)
	}
	legacy := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: oldName, Labels: written.Labels, Annotations: written.Annotations,
		OwnerReferences: written.OwnerReferences, Finalizers: written.Finalizers,
	}, Spec: written.Spec}
	testenv.Create(t, c, legacy)
	if err := c.Patch(ctx, written, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, written); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if err := c.Get(ctx, newKey, &placementv1beta1.Work{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Work of the new name is still there (%w)", err)
		}
		return nil
	})

	// The upgraded hub.
	startHub(t)
	keptAndAlone := func() error {
		got := &placementv1beta1.Work{}
		if err := c.Get(ctx, oldKey, got); err != nil {
			return fmt.Errorf("the Work of the old name: %w", err)
		}
		if got.UID != legacy.UID {
			return fmt.Errorf("the Work of the old name was created again: UID %s, was %s", got.UID, legacy.UID)
		}
		if err := c.Get(ctx, newKey, &placementv1beta1.Work{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("a Work of the new name %s exists next to %s (%w)", newName, oldName, err)
		}
		return nil
	}
	// A placement edit reaches the Work of the old name.
	if err := retry.RetryOnConflict(patientRetry, func() error {
		if err := c.Get(ctx, types.NamespacedName{Name: key.Name}, crp); err != nil {
			return err
		}
		crp.Spec.StatusFeedback = []placementv1beta1.StatusFeedbackRule{{Version: "v1", Kind: "ConfigMap", JSONPaths: []placementv1beta1.JSONPathRule{{Name: "k", Path: ".data.k"}}}}
		return c.Update(ctx, crp)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		got := &placementv1beta1.Work{}
		if err := c.Get(ctx, oldKey, got); err != nil {
			return err
		}
		if len(got.Spec.StatusFeedback) != 1 {
			return fmt.Errorf("the Work of the old name has status feedback %+v, want the placement's one rule", got.Spec.StatusFeedback)
		}
		return keptAndAlone()
	})
	testenv.Consistently(t, 3*time.Second, keptAndAlone)

	// Deleting the placement removes the Work of the old name, and the
	// placement goes.
	if err := c.Delete(ctx, crp); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if err := c.Get(ctx, newKey, &placementv1beta1.Work{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("a Work of the new name exists (%w)", err)
		}
		if err := c.Get(ctx, oldKey, &placementv1beta1.Work{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Work of the old name is still there (%w)", err)
		}
		if err := c.Get(ctx, types.NamespacedName{Name: key.Name}, &placementv1beta1.ClusterResourcePlacement{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the placement is still there (%w)", err)
		}
		return nil
	})
}

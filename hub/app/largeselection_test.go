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

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// A selection larger than one object holds is split across several resource
// snapshots of one index, and the member's Work carries all of it.
func TestLargeSelectionIsSplitAcrossSnapshotsOfOneIndex(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	testenv.ReadyMember(t, c, "large-1", map[string]string{"size": "large"})
	startHub(t)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "large"}}); err != nil {
		t.Fatal(err)
	}
	// Three ConfigMaps of 350 kB: about 1.05 MB together, over the 1 MB a snapshot holds.
	for i := range 3 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "large", Name: fmt.Sprintf("blob-%d", i)},
			Data: map[string]string{"blob": strings.Repeat(fmt.Sprint(i), 350_000)}}
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "large"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "large"}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"large-1"}},
		},
	}
	if err := c.Create(ctx, crp); err != nil {
		t.Fatal(err)
	}
	// The hub's cache may not show every ConfigMap at the placement's first
	// reconcile, so an earlier index may hold part of the selection; the
	// latest set holds all of it in two snapshots, and every set is whole: as
	// many snapshots of its index as its master counts.
	testenv.Eventually(t, 30*time.Second, func() error {
		list := &placementv1beta1.ClusterResourceSnapshotList{}
		if err := c.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: "large"}); err != nil {
			return err
		}
		byIndex := map[string][]placementv1beta1.ClusterResourceSnapshot{}
		latest := ""
		for _, s := range list.Items {
			idx := s.Labels[placementv1beta1.LabelResourceIndex]
			byIndex[idx] = append(byIndex[idx], s)
			if s.Labels[placementv1beta1.LabelIsLatestSnapshot] == "true" {
				latest = idx
			}
		}
		if latest == "" {
			return fmt.Errorf("no latest snapshot among %d", len(list.Items))
		}
		for idx, set := range byIndex {
			master, parts := "", 0
			for _, s := range set {
				if _, sub := s.Annotations[placementv1beta1.AnnotationSubindexOfResourceSnapshot]; sub {
					parts++
					continue
				}
				master = s.Annotations[placementv1beta1.AnnotationNumberOfResourceSnapshots]
			}
			if master != fmt.Sprint(parts+1) {
				return fmt.Errorf("index %s: the master counts %q snapshots, and there are %d", idx, master, parts+1)
			}
			if idx == latest && parts != 1 {
				return fmt.Errorf("the latest index %s has %d snapshots, want 2", idx, parts+1)
			}
		}
		want := map[string]bool{"large-" + latest + "-snapshot": true, "large-" + latest + "-1": true}
		for _, s := range byIndex[latest] {
			if !want[s.Name] {
				return fmt.Errorf("unexpected snapshot %s of the latest index %s", s.Name, latest)
			}
		}
		return nil
	})
	testenv.Eventually(t, 30*time.Second, func() error {
		work := &placementv1beta1.Work{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace("large-1"), Name: "large-work"}, work); err != nil {
			return err
		}
		if n := len(work.Spec.Workload.Manifests); n != 4 {
			return fmt.Errorf("work has %d manifests, want the namespace and 3 ConfigMaps", n)
		}
		return nil
	})
}

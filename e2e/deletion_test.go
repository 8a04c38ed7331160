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
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/apply"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
)

// TestDeletingAPlacementKeepsWhatTheMemberHad: member-1 already holds namespace
// keep-demo with two ConfigMaps of its own, one named like the hub's with other
// content. A placement of keep-demo takes the namespace over (no diff), refuses the
// ConfigMap (NotTakenOver) and creates another. Deleting the placement deletes what
// it created and leaves the member's namespace and ConfigMaps; the hub says so in an
// ObjectsReleased Event on the placement.
func TestDeletingAPlacementKeepsWhatTheMemberHad(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	member := memberClient(t, "member-1")
	const ns, crpName = "keep-demo", "keep-demo"

	memberObjs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"}, Data: map[string]string{"owner": "member"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"color": "red"}},
	}
	for _, o := range memberObjs {
		if err := member.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s on member-1: %v", o, o.GetName(), err)
		}
	}
	t.Cleanup(func() { _ = member.Delete(ctx, memberObjs[0]) })
	hubObjs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"color": "blue"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "created"}, Data: map[string]string{"owner": "hub"}},
	}
	for _, o := range hubObjs {
		if err := hub.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s on the hub: %v", o, o.GetName(), err)
		}
	}
	t.Cleanup(func() { _ = hub.Delete(ctx, hubObjs[0]) })

	placeNamespace(t, hub, crpName, ns, &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"member-1"}})
	framework.Eventually(t, 2*time.Minute, onMember(t, "member-1", &corev1.ConfigMap{}, types.NamespacedName{Namespace: ns, Name: "created"}, true))
	framework.Eventually(t, time.Minute, func() error {
		nsObj := &corev1.Namespace{}
		if err := member.Get(ctx, types.NamespacedName{Name: ns}, nsObj); err != nil {
			return err
		}
		if nsObj.Annotations[apply.AnnotationWork] == "" {
			return fmt.Errorf("namespace %s on member-1 is not taken over yet", ns)
		}
		return nil
	})
	framework.Eventually(t, time.Minute, notTakenOverOn(ctx, hub, crpName, "member-1", "settings"))

	start := time.Now()
	deletePlacementAndWait(t, hub, crpName)
	framework.Logf("placement %s deleted in %s", crpName, time.Since(start).Round(time.Millisecond))

	framework.Eventually(t, time.Minute, onMember(t, "member-1", &corev1.ConfigMap{}, types.NamespacedName{Namespace: ns, Name: "created"}, false))
	nsObj := &corev1.Namespace{}
	if err := member.Get(ctx, types.NamespacedName{Name: ns}, nsObj); err != nil {
		t.Fatalf("the member's namespace %s: %v", ns, err)
	}
	if nsObj.DeletionTimestamp != nil {
		t.Errorf("the member's namespace %s is being deleted", ns)
	}
	if v, ok := nsObj.Annotations[apply.AnnotationWork]; ok {
		t.Errorf("the member's namespace %s still carries %s=%q", ns, apply.AnnotationWork, v)
	}
	for name, want := range map[string]map[string]string{"mine": {"owner": "member"}, "settings": {"color": "red"}} {
		cm := &corev1.ConfigMap{}
		if err := member.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cm); err != nil {
			t.Errorf("the member's ConfigMap %s/%s: %v", ns, name, err)
			continue
		}
		if fmt.Sprint(cm.Data) != fmt.Sprint(want) || cm.DeletionTimestamp != nil {
			t.Errorf("the member's ConfigMap %s/%s: data %v (deleting: %v), want %v", ns, name, cm.Data, cm.DeletionTimestamp != nil, want)
		}
	}

	// The hub said what was kept.
	framework.Eventually(t, time.Minute, func() error {
		events := &eventsv1.EventList{}
		if err := hub.List(ctx, events); err != nil {
			return err
		}
		var seen []string
		for _, e := range events.Items {
			if e.Reason != placementv1beta1.EventReasonObjectsReleased {
				continue
			}
			seen = append(seen, e.Regarding.Kind+"/"+e.Regarding.Name+": "+e.Note)
			if e.Regarding.Kind == "ClusterResourcePlacement" && e.Regarding.Name == crpName &&
				strings.Contains(e.Note, "Namespace "+ns) && strings.Contains(e.Note, placementv1beta1.ReasonReleasedTakenOver) {
				framework.Logf("event: %s", e.Note)
				return nil
			}
		}
		return fmt.Errorf("no ObjectsReleased Event on placement %s naming namespace %s; seen: %v", crpName, ns, seen)
	})
}

// notTakenOverOn returns a check that the placement reports, for a cluster, that
// the ConfigMap named was not taken over.
func notTakenOverOn(ctx context.Context, hub client.Client, crpName, cluster, name string) func() error {
	return func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: crpName}, crp); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("placement %s not found", crpName)
			}
			return err
		}
		for _, ps := range crp.Status.PlacementStatuses {
			if ps.ClusterName != cluster {
				continue
			}
			for _, f := range ps.FailedPlacements {
				if f.Name == name && f.Condition.Reason == placementv1beta1.ReasonNotTakenOver {
					return nil
				}
			}
			return fmt.Errorf("cluster %s: failed placements %+v", cluster, ps.FailedPlacements)
		}
		return fmt.Errorf("placement %s has no status for %s yet", crpName, cluster)
	}
}

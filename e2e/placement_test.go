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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
)

var allMembers = []string{"member-1", "member-2", "member-3"}

func hubClient(t *testing.T) client.Client {
	t.Helper()
	c, err := framework.Client(provider.HubKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func memberClient(t *testing.T, member string) client.Client {
	t.Helper()
	c, err := framework.Client(provider.MemberKubeconfig(member))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// appNamespace creates, on the hub, a namespace with a ConfigMap and a Deployment
// and removes it when the test ends.
func appNamespace(t *testing.T, hub client.Client, name string) {
	t.Helper()
	ctx := context.Background()
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "settings"}, Data: map[string]string{"color": "blue"}},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: webImage}}},
				},
			},
		},
	}
	for _, o := range objs {
		if err := hub.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	t.Cleanup(func() { _ = hub.Delete(ctx, objs[0]) })
}

// placeNamespace creates a ClusterResourcePlacement of one namespace.
func placeNamespace(t *testing.T, hub client.Client, name, namespace string, policy *placementv1beta1.PlacementPolicy) *placementv1beta1.ClusterResourcePlacement {
	t.Helper()
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Group: "", Version: "v1", Kind: "Namespace", Name: namespace}},
			Policy:            policy,
		},
	}
	if err := hub.Create(context.Background(), crp); err != nil {
		t.Fatalf("create placement %s: %v", name, err)
	}
	t.Cleanup(func() { deletePlacementAndWait(t, hub, name) })
	return crp
}

func deletePlacementAndWait(t *testing.T, hub client.Client, name string) {
	ctx := context.Background()
	crp := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := hub.Delete(ctx, crp); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete placement %s: %v", name, err)
		return
	}
	framework.Eventually(t, 2*time.Minute, func() error {
		err := hub.Get(ctx, types.NamespacedName{Name: name}, crp)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("placement %s still exists (finalizers %v)", name, crp.Finalizers)
	})
}

// onMember returns a check that an object exists (or not) on a member.
func onMember(t *testing.T, member string, obj client.Object, key types.NamespacedName, want bool) func() error {
	c := memberClient(t, member)
	return func() error {
		err := c.Get(context.Background(), key, obj)
		switch {
		case err == nil && !want:
			return fmt.Errorf("%s %s still exists on %s", obj.GetObjectKind().GroupVersionKind().Kind, key, member)
		case apierrors.IsNotFound(err) && want:
			return fmt.Errorf("%s not on %s yet", key, member)
		case err != nil && !apierrors.IsNotFound(err):
			return err
		}
		return nil
	}
}

// Members join with one command each and report connection, health and properties.
func TestMembersJoinedConnectedAndHealthy(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	for _, m := range allMembers {
		for _, cond := range []string{clusterv1beta1.ConditionJoined, clusterv1beta1.ConditionAgentConnected, clusterv1beta1.ConditionHealthy} {
			framework.Eventually(t, time.Minute, framework.MemberCondition(ctx, hub, m, cond, metav1.ConditionTrue))
		}
		framework.Eventually(t, time.Minute, func() error {
			mc := &clusterv1beta1.MemberCluster{}
			if err := hub.Get(ctx, types.NamespacedName{Name: m}, mc); err != nil {
				return err
			}
			if mc.Labels[clusterv1beta1.LabelClusterName] != m || mc.Labels[clusterv1beta1.LabelKubernetesVersion] != "1.37" {
				return fmt.Errorf("built-in labels of %s: %v", m, mc.Labels)
			}
			if mc.Status.Properties[clusterv1beta1.PropertyNodeCount].Value == "" || mc.Status.ResourceUsage.Allocatable.Cpu().IsZero() {
				return fmt.Errorf("properties of %s not reported: %+v", m, mc.Status.Properties)
			}
			return nil
		})
	}
}

// PickAll of a namespace brings its ConfigMap and Deployment to every member,
// Applied and Available, and an edit on the hub reaches every member.
func TestPickAllPlacesNamespaceEverywhereAndFollowsEdits(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-pickall")
	placeNamespace(t, hub, "e2e-pickall", "e2e-pickall", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll})
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-pickall", allMembers...))
	for _, m := range allMembers {
		framework.Eventually(t, time.Minute, onMember(t, m, &appsv1.Deployment{}, types.NamespacedName{Namespace: "e2e-pickall", Name: "web"}, true))
	}

	cm := &corev1.ConfigMap{}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: "e2e-pickall", Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["color"] = "green"
	if err := hub.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	for _, m := range allMembers {
		mc := memberClient(t, m)
		framework.Eventually(t, 2*time.Minute, func() error {
			got := &corev1.ConfigMap{}
			if err := mc.Get(ctx, types.NamespacedName{Namespace: "e2e-pickall", Name: "settings"}, got); err != nil {
				return err
			}
			if got.Data["color"] != "green" {
				return fmt.Errorf("%s has color=%q", m, got.Data["color"])
			}
			return nil
		})
	}
	framework.Eventually(t, 2*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-pickall", allMembers...))

	// Deleting the placement removes its resources from every member.
	deletePlacementAndWait(t, hub, "e2e-pickall")
	for _, m := range allMembers {
		framework.Eventually(t, 2*time.Minute, onMember(t, m, &corev1.ConfigMap{}, types.NamespacedName{Namespace: "e2e-pickall", Name: "settings"}, false))
		framework.Eventually(t, 2*time.Minute, onMember(t, m, &corev1.Namespace{}, types.NamespacedName{Name: "e2e-pickall"}, false))
	}
}

// PickFixed places on exactly the named member.
func TestPickFixedPlacesOnTheNamedMemberOnly(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-pickfixed")
	placeNamespace(t, hub, "e2e-pickfixed", "e2e-pickfixed", &placementv1beta1.PlacementPolicy{
		PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"member-2"}})
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-pickfixed", "member-2"))
	key := types.NamespacedName{Namespace: "e2e-pickfixed", Name: "settings"}
	framework.Eventually(t, time.Minute, onMember(t, "member-2", &corev1.ConfigMap{}, key, true))
	for _, m := range []string{"member-1", "member-3"} {
		framework.Consistently(t, 3*time.Second, onMember(t, m, &corev1.ConfigMap{}, key, false))
	}
}

// Required label affinity picks exactly the members whose labels match.
func TestLabelAffinityPicksExactlyTheMatchingMembers(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-affinity")
	placeNamespace(t, hub, "e2e-affinity", "e2e-affinity", &placementv1beta1.PlacementPolicy{
		PlacementType: placementv1beta1.PickAll,
		Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{
				ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
				}},
			},
		}},
	})
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-affinity", "member-1", "member-3"))
	key := types.NamespacedName{Namespace: "e2e-affinity", Name: "settings"}
	framework.Consistently(t, 3*time.Second, onMember(t, "member-2", &corev1.ConfigMap{}, key, false))
}

// A manifest that cannot apply on one member shows Applied=False on that cluster
// with the member API server's message, while the rest of the Work applies.
func TestManifestThatCannotApplyIsReportedPerCluster(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	crd := widgetCRD()
	// The kind exists on the hub and on member-1 and member-2, not on member-3.
	for _, c := range []client.Client{hub, memberClient(t, "member-1"), memberClient(t, "member-2")} {
		if err := c.Create(ctx, crd.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create CRD: %v", err)
		}
	}
	framework.Eventually(t, time.Minute, func() error {
		w := widget("e2e-badapply", "probe")
		w.SetNamespace("default")
		if err := hub.Create(ctx, w); err != nil {
			return err
		}
		return hub.Delete(ctx, w)
	})
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-badapply"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-badapply"}}) })
	if err := hub.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "e2e-badapply", Name: "settings"}, Data: map[string]string{"a": "b"}}); err != nil {
		t.Fatal(err)
	}
	if err := hub.Create(ctx, widget("e2e-badapply", "w1")); err != nil {
		t.Fatal(err)
	}
	placeNamespace(t, hub, "e2e-badapply", "e2e-badapply", nil)

	framework.Eventually(t, 3*time.Minute, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "e2e-badapply"}, crp); err != nil {
			return err
		}
		applied := map[string]metav1.ConditionStatus{}
		var failed []placementv1beta1.FailedResourcePlacement
		for _, pcs := range crp.Status.PlacementStatuses {
			for _, c := range pcs.Conditions {
				if c.Type == placementv1beta1.ConditionApplied {
					applied[pcs.ClusterName] = c.Status
				}
			}
			if pcs.ClusterName == "member-3" {
				failed = pcs.FailedPlacements
			}
		}
		if applied["member-1"] != metav1.ConditionTrue || applied["member-2"] != metav1.ConditionTrue || applied["member-3"] != metav1.ConditionFalse {
			return fmt.Errorf("Applied per cluster = %v, want member-1/2 True and member-3 False", applied)
		}
		if len(failed) != 1 || failed[0].Kind != "Widget" || failed[0].Condition.Message == "" {
			return fmt.Errorf("member-3 failedPlacements = %+v, want the Widget with the API server's message", failed)
		}
		t.Logf("member-3 reports: %s", failed[0].Condition.Message)
		return nil
	})
	// The rest of the Work applied on member-3.
	framework.Eventually(t, time.Minute, onMember(t, "member-3", &corev1.ConfigMap{}, types.NamespacedName{Namespace: "e2e-badapply", Name: "settings"}, true))
}

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.e2e.flotilla.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "e2e.flotilla.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
}

func widget(namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("e2e.flotilla.io/v1")
	u.SetKind("Widget")
	u.SetNamespace(namespace)
	u.SetName(name)
	u.Object["spec"] = map[string]any{"size": 3}
	return u
}

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

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
)

// teamNamespace creates, on the hub, a namespace with labels and ConfigMaps, and
// removes it when the test ends.
func teamNamespace(t *testing.T, hub client.Client, name string, labels map[string]string, configMaps ...*corev1.ConfigMap) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := hub.Create(ctx, ns); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() { _ = hub.Delete(ctx, ns) })
	for _, cm := range configMaps {
		cm.Namespace = name
		if err := hub.Create(ctx, cm); err != nil {
			t.Fatalf("create ConfigMap %s/%s: %v", name, cm.Name, err)
		}
	}
}

// createResourcePlacement creates a ResourcePlacement and deletes it (waiting
// until it is gone) when the test ends.
func createResourcePlacement(t *testing.T, hub client.Client, rp *placementv1beta1.ResourcePlacement) {
	t.Helper()
	if err := hub.Create(context.Background(), rp); err != nil {
		t.Fatalf("create ResourcePlacement %s/%s: %v", rp.Namespace, rp.Name, err)
	}
	t.Cleanup(func() { deleteResourcePlacementAndWait(t, hub, rp.Namespace, rp.Name) })
}

func deleteResourcePlacementAndWait(t *testing.T, hub client.Client, namespace, name string) {
	ctx := context.Background()
	rp := &placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := hub.Delete(ctx, rp); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete ResourcePlacement %s/%s: %v", namespace, name, err)
		return
	}
	framework.Eventually(t, 2*time.Minute, func() error {
		err := hub.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, rp)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("ResourcePlacement %s/%s still exists (finalizers %v)", namespace, name, rp.Finalizers)
	})
}

// removeMemberNamespace deletes a namespace from a member when the test ends: a
// ResourcePlacement never removes the namespace it brought.
func removeMemberNamespace(t *testing.T, member, name string) {
	t.Cleanup(func() {
		_ = memberClient(t, member).Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
}

// rpConditionsTrue returns a check that a ResourcePlacement is current and every
// ResourcePlacement-level condition is True, with exactly the given clusters.
func rpConditionsTrue(ctx context.Context, hub client.Client, namespace, name string, clusters ...string) func() error {
	return func() error {
		rp := &placementv1beta1.ResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, rp); err != nil {
			return err
		}
		for _, perCluster := range placementv1beta1.PerClusterConditionTypes() {
			typ := placementv1beta1.ResourcePlacementConditionType(perCluster)
			c := findRPCondition(rp.Status.Conditions, typ)
			if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != rp.Generation {
				return fmt.Errorf("ResourcePlacement %s/%s: %s is %+v", namespace, name, typ, c)
			}
		}
		var got []string
		for _, pcs := range rp.Status.PlacementStatuses {
			got = append(got, pcs.ClusterName)
		}
		if strings.Join(got, ",") != strings.Join(clusters, ",") {
			return fmt.Errorf("ResourcePlacement %s/%s is on [%s], want [%s]", namespace, name, strings.Join(got, ","), strings.Join(clusters, ","))
		}
		return nil
	}
}

func findRPCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// A namespace team places its ConfigMap with a ResourcePlacement in namespace
// team-a, PickN 2 (restricted to the two env=prod members): both get the
// ConfigMap; the member that lacked team-a gets the namespace with the hub's
// labels, the member that had it keeps its own namespace untouched; `kubectl get
// rp -n team-a` shows it; deleting the placement removes the ConfigMap from both
// and leaves the namespaces.
func TestResourcePlacementPickNPlacesItsConfigMapOnTwoMembers(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const ns = "team-a"
	teamNamespace(t, hub, ns, map[string]string{"team": "a"},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-config", Labels: map[string]string{"app": "web"}}, Data: map[string]string{"color": "blue"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "not-selected"}, Data: map[string]string{"k": "v"}})
	// member-3 already has team-a, with an object of its own.
	m3 := memberClient(t, "member-3")
	if err := m3.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"owner": "member-3"}}}); err != nil {
		t.Fatalf("create %s on member-3: %v", ns, err)
	}
	if err := m3.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "member-own"}}); err != nil {
		t.Fatalf("create member-own on member-3: %v", err)
	}
	for _, m := range []string{"member-1", "member-3"} {
		removeMemberNamespace(t, m, ns)
	}

	createResourcePlacement(t, hub, &placementv1beta1.ResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
			Policy: &placementv1beta1.PlacementPolicy{
				PlacementType:    placementv1beta1.PickN,
				NumberOfClusters: ptr.To[int32](2),
				Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
						{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
					}},
				}},
			},
		},
	})
	framework.Eventually(t, 3*time.Minute, rpConditionsTrue(ctx, hub, ns, "web", "member-1", "member-3"))
	key := types.NamespacedName{Namespace: ns, Name: "app-config"}
	for _, m := range []string{"member-1", "member-3"} {
		framework.Eventually(t, time.Minute, onMember(t, m, &corev1.ConfigMap{}, key, true))
	}
	framework.Consistently(t, 3*time.Second, onMember(t, "member-2", &corev1.ConfigMap{}, key, false))
	framework.Consistently(t, 3*time.Second, onMember(t, "member-1", &corev1.ConfigMap{}, types.NamespacedName{Namespace: ns, Name: "not-selected"}, false))

	// The namespace was brought to member-1 with the hub's labels; member-3's own
	// namespace was left as it was.
	got := &corev1.Namespace{}
	if err := memberClient(t, "member-1").Get(ctx, types.NamespacedName{Name: ns}, got); err != nil {
		t.Fatal(err)
	}
	if got.Labels["team"] != "a" {
		t.Errorf("the namespace brought to member-1 has labels %v, want team=a", got.Labels)
	}
	if err := m3.Get(ctx, types.NamespacedName{Name: ns}, got); err != nil {
		t.Fatal(err)
	}
	if got.Labels["owner"] != "member-3" || got.Labels["team"] != "" {
		t.Errorf("member-3's own namespace was changed: labels %v", got.Labels)
	}

	out, err := framework.Kubectl(ctx, provider.HubKubeconfig(), "", "get", "rp", "-n", ns)
	if err != nil || !strings.Contains(out, "web") || !strings.Contains(out, "True") {
		t.Errorf("kubectl get rp -n %s: %v\n%s", ns, err, out)
	}

	// Deleting the placement removes the ConfigMap and leaves the namespaces.
	deleteResourcePlacementAndWait(t, hub, ns, "web")
	for _, m := range []string{"member-1", "member-3"} {
		framework.Eventually(t, 2*time.Minute, onMember(t, m, &corev1.ConfigMap{}, key, false))
		framework.Consistently(t, 2*time.Second, onMember(t, m, &corev1.Namespace{}, types.NamespacedName{Name: ns}, true))
	}
	framework.Consistently(t, 2*time.Second, onMember(t, "member-3", &corev1.ConfigMap{}, types.NamespacedName{Namespace: ns, Name: "member-own"}, true))
}

// A ResourcePlacement created after a ClusterResourcePlacement that places its
// ConfigMap reports the conflict, naming the ClusterResourcePlacement, and does
// not place the ConfigMap; the ClusterResourcePlacement keeps placing it.
func TestResourcePlacementConflictsWithAnEarlierClusterResourcePlacement(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const ns = "e2e-rp-conflict"
	teamNamespace(t, hub, ns, nil, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Data: map[string]string{"k": "v"}})
	removeMemberNamespace(t, "member-1", ns)
	placeNamespace(t, hub, ns, ns, &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"member-2"}})
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, ns, "member-2"))

	createResourcePlacement(t, hub, &placementv1beta1.ResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "shared"}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"member-1"}},
		},
	})
	framework.Eventually(t, 2*time.Minute, func() error {
		rp := &placementv1beta1.ResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Namespace: ns, Name: "late"}, rp); err != nil {
			return err
		}
		c := findRPCondition(rp.Status.Conditions, placementv1beta1.ResourcePlacementConditionType(placementv1beta1.ConditionConflicted))
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != placementv1beta1.ReasonSelectedByEarlierPlacement ||
			!strings.Contains(c.Message, "ConfigMap "+ns+"/shared placed by ClusterResourcePlacement "+ns) {
			return fmt.Errorf("ResourcePlacementConflicted is %+v", c)
		}
		return nil
	})
	// The later placement places only its namespace; the earlier one is unaffected.
	framework.Eventually(t, 3*time.Minute, rpConditionsTrue(ctx, hub, ns, "late", "member-1"))
	framework.Eventually(t, time.Minute, onMember(t, "member-1", &corev1.Namespace{}, types.NamespacedName{Name: ns}, true))
	framework.Consistently(t, 3*time.Second, onMember(t, "member-1", &corev1.ConfigMap{}, types.NamespacedName{Namespace: ns, Name: "shared"}, false))
	framework.Eventually(t, time.Minute, framework.PlacementConditionsTrue(ctx, hub, ns, "member-2"))
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := hub.Get(ctx, types.NamespacedName{Name: ns}, crp); err != nil {
		t.Fatal(err)
	}
	if c := findRPCondition(crp.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionConflicted)); c != nil {
		t.Errorf("the earlier ClusterResourcePlacement reports a conflict: %+v", c)
	}
}

// A user bound to the built-in edit role in a namespace may manage
// ResourcePlacements, ResourceOverrides and ResourceEnvelopes there (the
// aggregated ClusterRoles of manifests/hub), and read their bindings and
// snapshots — but not ClusterResourcePlacements, nor anything in another namespace.
func TestResourcePlacementRightsAggregateToEdit(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const ns = "e2e-rp-rbac"
	teamNamespace(t, hub, ns, nil)
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "alice-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "alice"}},
	}
	if err := hub.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	can := func(namespace, verb, resource string) (bool, error) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "alice",
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: namespace, Verb: verb, Group: placementv1beta1.GroupVersion.Group, Resource: resource,
			},
		}}
		if err := hub.Create(ctx, sar); err != nil {
			return false, err
		}
		return sar.Status.Allowed, nil
	}
	for _, tc := range []struct {
		namespace, verb, resource string
		want                      bool
	}{
		{ns, "create", "resourceplacements", true},
		{ns, "delete", "resourceplacements", true},
		{ns, "create", "resourceoverrides", true},
		{ns, "create", "resourceenvelopes", true},
		{ns, "list", "resourcebindings", true},
		{ns, "get", "resourcesnapshots", true},
		{ns, "create", "resourcebindings", false},
		{"", "create", "clusterresourceplacements", false},
		{"default", "create", "resourceplacements", false},
	} {
		framework.Eventually(t, time.Minute, func() error {
			got, err := can(tc.namespace, tc.verb, tc.resource)
			if err != nil {
				return err
			}
			if got != tc.want {
				return fmt.Errorf("alice may %s %s in %q: %v, want %v", tc.verb, tc.resource, tc.namespace, got, tc.want)
			}
			return nil
		})
	}
}

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
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// rpWork reads the Work of a placement (of either scope) on a member: the
// kind/name of each manifest, the annotations of its Namespace manifest and the
// data of its ConfigMaps.
func rpWork(ctx context.Context, c client.Client, member string, key pipeline.PlacementKey) (*placementv1beta1.Work, []string, map[string]string, map[string]map[string]string, error) {
	work := &placementv1beta1.Work{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace(member), Name: key.WorkName("")}, work); err != nil {
		return nil, nil, nil, nil, err
	}
	var names []string
	var nsAnnotations map[string]string
	data := map[string]map[string]string{}
	for _, m := range work.Spec.Workload.Manifests {
		var o struct {
			Kind     string
			Metadata metav1.ObjectMeta
			Data     map[string]string
		}
		if err := json.Unmarshal(m.Raw, &o); err != nil {
			return nil, nil, nil, nil, err
		}
		names = append(names, o.Kind+"/"+o.Metadata.Name)
		switch o.Kind {
		case "Namespace":
			nsAnnotations = o.Metadata.Annotations
		case "ConfigMap":
			data[o.Metadata.Name] = o.Data
		}
	}
	sort.Strings(names)
	return work, names, nsAnnotations, data, nil
}

// boundMembers lists the clusters of a ResourcePlacement's active bindings.
func boundMembers(ctx context.Context, c client.Client, key pipeline.PlacementKey) ([]string, error) {
	bindings, err := pipeline.ListBindings(ctx, c, key)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range pipeline.ActiveBindings(bindings) {
		if _, ok := b.(*placementv1beta1.ResourceBinding); !ok || b.GetNamespace() != key.Namespace {
			return nil, fmt.Errorf("binding %s is a %T in %q, want a ResourceBinding in %s", b.GetName(), b, b.GetNamespace(), key.Namespace)
		}
		out = append(out, b.GetBindingSpec().TargetCluster)
	}
	return out, nil
}

// A ResourcePlacement goes through the same pipeline as a ClusterResourcePlacement:
// PickN 2 gives two ResourceBindings in its namespace and two Works that carry its
// namespace (create-only) and the ConfigMap it selects; a ResourceOverride of its
// namespace naming it applies per member; the agents' reports make it Available
// with ResourcePlacement-prefixed conditions; a ClusterResourcePlacement created
// later that selects the same ConfigMap leaves it out and says so; deleting the
// ResourcePlacement removes its bindings and Works.
func TestResourcePlacementEndToEndOnTheHub(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	group := map[string]string{"flotilla.test/group": "rp"}
	members := []string{"rp-1", "rp-2", "rp-3"}
	for _, m := range members {
		testenv.ReadyMember(t, c, m, group)
	}
	startHub(t)
	testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"team": "a"}}})
	testenv.Create(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "app-config", Labels: map[string]string{"app": "web"}},
		Data: map[string]string{"color": "blue"}})
	testenv.Create(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "unrelated"}, Data: map[string]string{"k": "v"}})
	testenv.Create(t, c, &placementv1beta1.ResourceOverride{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "per-member"},
		Spec: placementv1beta1.ResourceOverrideSpec{
			Placement:         &placementv1beta1.PlacementRef{Name: "web"},
			ResourceSelectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "app-config"}},
			Policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
				ClusterSelector: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: group}}}},
				OverrideType:    placementv1beta1.JSONPatchOverrideType,
				JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{
					{Operator: placementv1beta1.JSONPatchOverrideOpAdd, Path: "/data/member", Value: &apiextensionsv1.JSON{Raw: []byte(`"${MEMBER-CLUSTER-NAME}"`)}},
				},
			}}},
		},
	})
	rp := &placementv1beta1.ResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
			Policy: &placementv1beta1.PlacementPolicy{
				PlacementType:    placementv1beta1.PickN,
				NumberOfClusters: ptr.To[int32](2),
				Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
						{LabelSelector: &metav1.LabelSelector{MatchLabels: group}},
					}},
				}},
			},
		},
	}
	testenv.Create(t, c, rp)
	key := pipeline.KeyOf(rp)

	var chosen []string
	testenv.Eventually(t, 30*time.Second, func() error {
		var err error
		if chosen, err = boundMembers(ctx, c, key); err != nil {
			return err
		}
		if len(chosen) != 2 {
			return fmt.Errorf("bound to %v, want 2 members", chosen)
		}
		for _, m := range chosen {
			work, names, nsAnnotations, data, err := rpWork(ctx, c, m, key)
			if err != nil {
				return err
			}
			if want := []string{"ConfigMap/app-config", "Namespace/team-a"}; strings.Join(names, ",") != strings.Join(want, ",") {
				return fmt.Errorf("Work on %s holds %v, want %v", m, names, want)
			}
			if nsAnnotations[placementv1beta1.AnnotationCreateOnly] != "true" {
				return fmt.Errorf("the namespace in the Work on %s is not create-only: %v", m, nsAnnotations)
			}
			if data["app-config"]["member"] != m {
				return fmt.Errorf("the ResourceOverride naming the placement did not apply on %s: %v", m, data["app-config"])
			}
			if work.Labels[placementv1beta1.LabelPlacementNamespace] != "team-a" || len(work.OwnerReferences) != 0 {
				return fmt.Errorf("Work on %s: labels %v, owners %v; want the placement namespace label and no cross-namespace owner", m, work.Labels, work.OwnerReferences)
			}
		}
		return nil
	})
	snaps, err := pipeline.ListResourceSnapshots(ctx, c, key, nil)
	if err != nil || len(snaps) == 0 {
		t.Fatalf("want ResourceSnapshots in team-a, got %d (%v)", len(snaps), err)
	}

	// The agents report the Works applied and available.
	for _, m := range chosen {
		work, _, _, _, err := rpWork(ctx, c, m, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := reportAvailable(ctx, c, work); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		got := &placementv1beta1.ResourcePlacement{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: "team-a", Name: "web"}, got); err != nil {
			return err
		}
		for _, perCluster := range placementv1beta1.PerClusterConditionTypes() {
			typ := placementv1beta1.ResourcePlacementConditionType(perCluster)
			if !conditions.IsCurrentTrue(got.Status.Conditions, typ, got.Generation) {
				return fmt.Errorf("%s: %+v", typ, conditions.Get(got.Status.Conditions, typ))
			}
		}
		if n := len(got.Status.PlacementStatuses); n != 2 {
			return fmt.Errorf("%d placement statuses, want 2", n)
		}
		return nil
	})

	// A ClusterResourcePlacement created later that selects the whole namespace
	// leaves the ResourcePlacement's ConfigMap out and says why.
	testenv.Create(t, c, &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a-all"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "team-a"}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"rp-3"}},
		},
	})
	testenv.Eventually(t, 30*time.Second, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := c.Get(ctx, types.NamespacedName{Name: "team-a-all"}, crp); err != nil {
			return err
		}
		cond := conditions.Get(crp.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionConflicted))
		if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != placementv1beta1.ReasonSelectedByEarlierPlacement ||
			!strings.Contains(cond.Message, "ConfigMap team-a/app-config placed by ResourcePlacement team-a/web") {
			return fmt.Errorf("Conflicted: %+v", cond)
		}
		for _, id := range crp.Status.SelectedResources {
			if id.Kind == "ConfigMap" && id.Name == "app-config" {
				return fmt.Errorf("the later placement still selects the ConfigMap: %+v", crp.Status.SelectedResources)
			}
		}
		if len(crp.Status.SelectedResources) != 2 {
			return fmt.Errorf("selected %+v, want the namespace and the unrelated ConfigMap", crp.Status.SelectedResources)
		}
		return nil
	})
	// The earlier ResourcePlacement is not affected.
	got := &placementv1beta1.ResourcePlacement{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: "team-a", Name: "web"}, got); err != nil {
		t.Fatal(err)
	}
	if cond := conditions.Get(got.Status.Conditions, placementv1beta1.ResourcePlacementConditionType(placementv1beta1.ConditionConflicted)); cond != nil {
		t.Errorf("the earlier placement reports a conflict: %+v", cond)
	}

	// Deleting the ResourcePlacement removes its bindings and Works.
	if err := c.Delete(ctx, rp); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, func() error {
		if err := c.Get(ctx, types.NamespacedName{Namespace: "team-a", Name: "web"}, &placementv1beta1.ResourcePlacement{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the placement is still there (%w)", err)
		}
		for _, m := range chosen {
			if _, _, _, _, err := rpWork(ctx, c, m, key); !apierrors.IsNotFound(err) {
				return fmt.Errorf("the Work on %s is still there (%w)", m, err)
			}
		}
		bindings, err := pipeline.ListBindings(ctx, c, key)
		if err != nil || len(bindings) != 0 {
			return fmt.Errorf("%d bindings left (%w)", len(bindings), err)
		}
		return nil
	})
}

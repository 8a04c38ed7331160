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
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// workManifests returns the kind/name of each manifest of a member's Work, and
// the data of the ConfigMaps in it by name.
func workManifests(ctx context.Context, c client.Client, member, placement string) ([]string, map[string]map[string]string, *placementv1beta1.Work, error) {
	work := &placementv1beta1.Work{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace(member), Name: placement + "-work"}, work); err != nil {
		return nil, nil, nil, err
	}
	var names []string
	data := map[string]map[string]string{}
	for _, m := range work.Spec.Workload.Manifests {
		var o struct {
			Kind     string
			Metadata metav1.ObjectMeta
			Data     map[string]string
		}
		if err := json.Unmarshal(m.Raw, &o); err != nil {
			return nil, nil, nil, err
		}
		names = append(names, o.Kind+"/"+o.Metadata.Name)
		if o.Kind == "ConfigMap" {
			data[o.Metadata.Name] = o.Data
		}
	}
	sort.Strings(names)
	return names, data, work, nil
}

// reportAvailable plays the agent: the Work is applied and available.
func reportAvailable(ctx context.Context, c client.Client, work *placementv1beta1.Work) error {
	conditions.Set(&work.Status.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, "all applied", work.Generation)
	conditions.Set(&work.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, placementv1beta1.ReasonAvailable, "all available", work.Generation)
	return c.Status().Update(ctx, work)
}

func bindingCondition(ctx context.Context, c client.Client, placement, cluster, typ string) (*metav1.Condition, *placementv1beta1.ClusterResourceBinding, error) {
	list := &placementv1beta1.ClusterResourceBindingList{}
	if err := c.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: placement}); err != nil {
		return nil, nil, err
	}
	for i := range list.Items {
		if b := &list.Items[i]; b.Spec.TargetCluster == cluster {
			if cond := conditions.Get(b.Status.Conditions, typ); cond != nil && cond.ObservedGeneration == b.Generation {
				return cond, b, nil
			}
			return nil, b, fmt.Errorf("binding %s has no current %s condition", b.Name, typ)
		}
	}
	return nil, nil, fmt.Errorf("no binding of %s on %s", placement, cluster)
}

// A ResourceOverride adds the member's name on env=dev members and deletes the
// object on zone=eu ones; an envelope ConfigMap's ResourceQuota and a
// ResourceEnvelope's ServiceAccount reach the members in place of the envelopes; a patch that cannot apply leaves the Work as it was and
// says which override, rule and path failed.
func TestOverridesAndEnvelopesReachTheWork(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	testenv.ReadyMember(t, c, "ov-dev", map[string]string{"env": "dev"})
	testenv.ReadyMember(t, c, "ov-eu", map[string]string{"env": "staging", "zone": "eu"})
	startHub(t)
	testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ov"}})
	testenv.Create(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ov", Name: "settings"}, Data: map[string]string{"k": "v"}})
	testenv.Create(t, c, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ov", Name: "quota-envelope", Annotations: map[string]string{placementv1beta1.AnnotationEnvelopeConfigMap: "true"}},
		Data:       map[string]string{"quota.yaml": "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: pods\n  namespace: ov\nspec:\n  hard:\n    pods: \"5\"\n"},
	})
	envelope := &placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: "ov", Name: "robot-envelope"},
		Data: map[string]placementv1beta1.ResourceContent{"sa": {RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"robot"}}`)}}}}
	testenv.Create(t, c, envelope)
	sel := func(l map[string]string) *placementv1beta1.ClusterSelector {
		return &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: l}}}}
	}
	ro := &placementv1beta1.ResourceOverride{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ov", Name: "per-member"},
		Spec: placementv1beta1.ResourceOverrideSpec{
			ResourceSelectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "settings"}},
			Policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{
				{ClusterSelector: sel(map[string]string{"env": "dev"}), OverrideType: placementv1beta1.JSONPatchOverrideType, JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{
					{Operator: placementv1beta1.JSONPatchOverrideOpAdd, Path: "/data/member", Value: &apiextensionsv1.JSON{Raw: []byte(`"${MEMBER-CLUSTER-NAME}"`)}},
				}},
				{ClusterSelector: sel(map[string]string{"zone": "eu"}), OverrideType: placementv1beta1.DeleteOverrideType},
			}},
		},
	}
	testenv.Create(t, c, ro)
	testenv.Create(t, c, &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "ov"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "ov"}},
			// Members of the other tests share the API server.
			Policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"ov-dev", "ov-eu"}},
		},
	})

	testenv.Eventually(t, 30*time.Second, func() error {
		names, data, work, err := workManifests(ctx, c, "ov-dev", "ov")
		if err != nil {
			return err
		}
		if want := "ConfigMap/settings Namespace/ov ResourceQuota/pods ServiceAccount/robot"; strings.Join(names, " ") != want {
			return fmt.Errorf("ov-dev's Work holds %v, want %s", names, want)
		}
		if got := data["settings"]["member"]; got != "ov-dev" {
			return fmt.Errorf("settings.data.member = %q on ov-dev", got)
		}
		cond, _, err := bindingCondition(ctx, c, "ov", "ov-dev", placementv1beta1.ConditionOverridden)
		if err != nil {
			return err
		}
		if cond.Status != metav1.ConditionTrue || cond.Reason != placementv1beta1.ReasonOverridden || !strings.Contains(cond.Message, "ov/per-member-0") {
			return fmt.Errorf("Overridden on ov-dev: %+v", cond)
		}
		return reportAvailable(ctx, c, work)
	})
	testenv.Eventually(t, 30*time.Second, func() error {
		names, _, work, err := workManifests(ctx, c, "ov-eu", "ov")
		if err != nil {
			return err
		}
		if want := "Namespace/ov ResourceQuota/pods ServiceAccount/robot"; strings.Join(names, " ") != want {
			return fmt.Errorf("ov-eu's Work holds %v, want %s", names, want)
		}
		return reportAvailable(ctx, c, work)
	})
	testenv.Eventually(t, 30*time.Second, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := c.Get(ctx, types.NamespacedName{Name: "ov"}, crp); err != nil {
			return err
		}
		for _, pcs := range crp.Status.PlacementStatuses {
			if len(pcs.ApplicableResourceOverrides) != 1 || pcs.ApplicableResourceOverrides[0].Name != "per-member-0" {
				return fmt.Errorf("%s lists overrides %v", pcs.ClusterName, pcs.ApplicableResourceOverrides)
			}
		}
		return nil
	})

	// A patch whose path does not exist: the dev member keeps its Work.
	if err := c.Get(ctx, client.ObjectKeyFromObject(ro), ro); err != nil {
		t.Fatal(err)
	}
	ro.Spec.Policy.OverrideRules[0].JSONPatchOverrides = append(ro.Spec.Policy.OverrideRules[0].JSONPatchOverrides,
		placementv1beta1.JSONPatchOverride{Operator: placementv1beta1.JSONPatchOverrideOpReplace, Path: "/data/missing", Value: &apiextensionsv1.JSON{Raw: []byte(`"x"`)}})
	if err := c.Update(ctx, ro); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		cond, b, err := bindingCondition(ctx, c, "ov", "ov-dev", placementv1beta1.ConditionOverridden)
		if err != nil {
			return err
		}
		if len(b.Spec.ResourceOverrideSnapshots) != 1 || b.Spec.ResourceOverrideSnapshots[0].Name != "per-member-1" {
			return fmt.Errorf("binding applies %v, want per-member-1", b.Spec.ResourceOverrideSnapshots)
		}
		want := "override ov/per-member-1 rule 1 path /data/missing on ConfigMap ov/settings"
		if cond.Status != metav1.ConditionFalse || cond.Reason != placementv1beta1.ReasonOverrideFailed || !strings.Contains(cond.Message, want) {
			return fmt.Errorf("Overridden on ov-dev: %+v, want False %s %q", cond, placementv1beta1.ReasonOverrideFailed, want)
		}
		return nil
	})
	testenv.Eventually(t, 30*time.Second, func() error {
		list := &eventsv1.EventList{}
		if err := c.List(ctx, list); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Regarding.Kind == "ClusterResourcePlacement" && e.Regarding.Name == "ov" && e.Reason == placementv1beta1.ReasonOverrideFailed &&
				strings.Contains(e.Note, "path /data/missing") {
				return nil
			}
		}
		return fmt.Errorf("no Warning event %s on the placement", placementv1beta1.ReasonOverrideFailed)
	})
	_, data, _, err := workManifests(ctx, c, "ov-dev", "ov")
	if err != nil {
		t.Fatal(err)
	}
	if data["settings"]["member"] != "ov-dev" {
		t.Errorf("the Work of ov-dev changed after a failed override: %v", data["settings"])
	}
}

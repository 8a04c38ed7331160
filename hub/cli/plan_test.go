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

package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	planv1beta1 "github.com/flotilla-io/flotilla/apis/plan/v1beta1"
)

func TestAddDocumentsSortsObjectsByKind(t *testing.T) {
	in := `apiVersion: placement.flotilla.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: web}
spec:
  resourceSelectors: [{version: v1, kind: Namespace, name: app}]
---
apiVersion: placement.flotilla.io/v1beta1
kind: ResourceOverride
metadata: {name: color, namespace: app}
spec:
  resourceSelectors: [{version: v1, kind: ConfigMap, name: web}]
`
	spec := &planv1beta1.PlacementPlanSpec{}
	if err := addDocuments(spec, "plan.yaml", strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	got := []string{spec.ClusterResourcePlacement.Name, spec.ResourceOverrides[0].Namespace + "/" + spec.ResourceOverrides[0].Name}
	if diff := cmp.Diff([]string{"web", "app/color"}, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}

func TestAddDocumentsRefusesWhatItCannotPlan(t *testing.T) {
	for name, in := range map[string]string{
		"a kind of another group": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		"a kind it does not plan": "apiVersion: placement.flotilla.io/v1beta1\nkind: Work\nmetadata: {name: x}\n",
		"an unknown field":        "apiVersion: placement.flotilla.io/v1beta1\nkind: ClusterResourcePlacement\nmetadata: {name: x}\nspec: {resourceSelector: []}\n",
	} {
		t.Run(name, func(t *testing.T) {
			err := addDocuments(&planv1beta1.PlacementPlanSpec{}, "plan.yaml", strings.NewReader(in))
			if err == nil || !strings.Contains(err.Error(), "plan.yaml: document 1") {
				t.Errorf("addDocuments = %v, want an error naming the document", err)
			}
		})
	}
}

// TestPrintPlanGolden pins the report of a policy edit with an override:
// one cluster kept and updated, one selected, one dropped, one not
// selected, a Secret hidden, and the waves.
func TestPrintPlanGolden(t *testing.T) {
	cm := placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "web"}
	secret := placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "Secret", Namespace: "app", Name: "db"}
	ns := placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "Namespace", Name: "app"}
	st := &planv1beta1.PlacementPlanStatus{
		Placement: "web", Exists: true,
		Scheduled: &metav1.Condition{Status: metav1.ConditionTrue, Reason: "SchedulingPolicyFulfilled", Message: "picked 2 clusters"},
		Resources: []placementv1beta1.ResourceIdentifier{ns, cm, secret}, ResourcesFrom: "resource snapshot web-3-snapshot (the placement's resourceSelectors are unchanged)",
		Clusters: []planv1beta1.ClusterPlan{
			{Name: "east-1", Decision: planv1beta1.DecisionKept, Reason: "kept: the placement is already on the cluster", Overrides: []string{"proposed:color"},
				ComparedWith: "the Work fleet-member-east-1/web-work the hub holds for the cluster now",
				Manifests: []planv1beta1.PlannedManifest{
					{ResourceIdentifier: ns, Change: planv1beta1.ChangeUnchanged, Member: planv1beta1.MemberUnknown, MemberDiff: "the member answered 403: namespaces \"app\" is forbidden"},
					{ResourceIdentifier: cm, Change: planv1beta1.ChangeUpdate, Object: &runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"app"},"data":{"color":"green"}}`)},
						Diff:   "--- now\n+++ planned\n@@ -1,2 +1,2 @@\n data:\n-  color: blue\n+  color: green\n",
						Member: planv1beta1.MemberDiffers, MemberDiff: "--- now\n+++ planned\n@@ -1,2 +1,2 @@\n data:\n-  color: red\n+  color: green\n"},
					{ResourceIdentifier: secret, Change: planv1beta1.ChangeUnchanged, Forbidden: `"carol" may not get secrets app/db on the hub`},
				}},
			{Name: "west-1", Decision: planv1beta1.DecisionSelected, Reason: "picked: matches the scheduling policy",
				MemberUnread: "not read: member \"west-1\" has no agent connected to this hub replica",
				Manifests:    []planv1beta1.PlannedManifest{{ResourceIdentifier: ns, Change: planv1beta1.ChangeCreate}, {ResourceIdentifier: cm, Change: planv1beta1.ChangeCreate}}},
			{Name: "east-2", Decision: planv1beta1.DecisionDropped, Reason: "no longer named by the PickFixed policy",
				Manifests: []planv1beta1.PlannedManifest{{ResourceIdentifier: cm, Change: planv1beta1.ChangeDelete}}},
			{Name: "dev-1", Decision: planv1beta1.DecisionNotSelected, Reason: "not named by the PickFixed policy"},
		},
		Rollout: &planv1beta1.RolloutPlan{Strategy: placementv1beta1.RollingUpdateRolloutStrategyType,
			Waves:   []planv1beta1.Wave{{Bind: []string{"west-1"}, Remove: []string{"east-2"}}, {Update: []string{"east-1"}}},
			Message: "assuming each cluster becomes available before the next wave; a cluster that does not holds the later waves"},
	}
	var out bytes.Buffer
	printPlan(&out, st, painter{}, true, true)
	golden(t, "plan", out.String())
}

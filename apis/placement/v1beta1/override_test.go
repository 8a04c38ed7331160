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

package v1beta1_test

import (
	"context"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// overrideKinds make overrides of both kinds from a policy.
var overrideKinds = []struct {
	name string
	new  func(policy *placementv1beta1.OverridePolicy) client.Object
}{
	{
		name: "ClusterResourceOverride",
		new: func(policy *placementv1beta1.OverridePolicy) client.Object {
			return &placementv1beta1.ClusterResourceOverride{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "cro-"},
				Spec: placementv1beta1.ClusterResourceOverrideSpec{
					Placement: &placementv1beta1.PlacementRef{Name: "crp-1"},
					ClusterResourceSelectors: []placementv1beta1.OverrideResourceSelector{
						{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "reader"},
					},
					Policy: policy,
				},
			}
		},
	},
	{
		name: "ResourceOverride",
		new: func(policy *placementv1beta1.OverridePolicy) client.Object {
			return &placementv1beta1.ResourceOverride{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "ro-", Namespace: testNamespace},
				Spec: placementv1beta1.ResourceOverrideSpec{
					ResourceSelectors: []placementv1beta1.OverrideResourceSelector{
						{Group: "apps", Version: "v1", Kind: "Deployment", Name: "web"},
					},
					Policy: policy,
				},
			}
		},
	},
}

func patch(op placementv1beta1.JSONPatchOverrideOperator, path, value string) placementv1beta1.JSONPatchOverride {
	p := placementv1beta1.JSONPatchOverride{Operator: op, Path: path}
	if value != "" {
		p.Value = &apiextensionsv1.JSON{Raw: []byte(value)}
	}
	return p
}

// patchRule returns a policy of one JSONPatch rule (of the default type) for clusters
// labelled env=prod.
func patchRule(patches ...placementv1beta1.JSONPatchOverride) *placementv1beta1.OverridePolicy {
	return &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
		ClusterSelector:    &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{labelTerm("env", "prod")}},
		JSONPatchOverrides: patches,
	}}}
}

func TestOverrideValidation(t *testing.T) {
	tests := []struct {
		name        string
		policy      *placementv1beta1.OverridePolicy
		wantRefusal string
	}{
		{
			name:   "a JSON patch of labels, annotations and spec is accepted",
			policy: patchRule(patch("add", "/metadata/labels/tier", `"gold"`), patch("replace", "/metadata/annotations", `{"a":"b"}`), patch("replace", "/spec/replicas", `3`)),
		},
		{
			name:   "a remove operation without a value is accepted",
			policy: patchRule(patch("remove", "/metadata/labels/tier", "")),
		},
		{
			name:   "a Delete rule for every cluster is accepted",
			policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{OverrideType: placementv1beta1.DeleteOverrideType}}},
		},
		{
			name:        "a remove operation with a value is refused",
			policy:      patchRule(patch("remove", "/metadata/labels/tier", `"gold"`)),
			wantRefusal: "a remove operation must not have a value",
		},
		{
			name:        "a replace operation without a value is refused",
			policy:      patchRule(patch("replace", "/spec/replicas", "")),
			wantRefusal: "add and replace operations require a value",
		},
		{
			name:        "an unknown operation is refused",
			policy:      patchRule(patch("move", "/spec/replicas", `3`)),
			wantRefusal: `Unsupported value: "move"`,
		},
		{
			name: "a Delete rule with patches is refused",
			policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
				OverrideType:       placementv1beta1.DeleteOverrideType,
				JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{patch("remove", "/spec/replicas", "")},
			}}},
			wantRefusal: "jsonPatchOverrides cannot be set when overrideType is Delete",
		},
		{
			name:        "a JSONPatch rule without patches is refused",
			policy:      patchRule(),
			wantRefusal: "jsonPatchOverrides are required when overrideType is JSONPatch",
		},
		{
			name:        "a path without a leading slash is refused",
			policy:      patchRule(patch("replace", "spec/replicas", `3`)),
			wantRefusal: "path must be a JSON pointer that starts with /",
		},
		{
			name:        "a path with a ~ that escapes nothing is refused",
			policy:      patchRule(patch("add", "/metadata/labels/app.kubernetes.io~2name", `"web"`)),
			wantRefusal: "in a path, ~ must be followed by 0 (for ~) or 1 (for /)",
		},
		{
			name:   "a path with ~1 for a slash in a label key is accepted",
			policy: patchRule(patch("add", "/metadata/labels/app.kubernetes.io~1name", `"web"`)),
		},
		{
			name:        "a patch of the status is refused",
			policy:      patchRule(patch("replace", "/status/phase", `"Ready"`)),
			wantRefusal: "path cannot change kind, apiVersion or status",
		},
		{
			name:        "a patch of the kind is refused",
			policy:      patchRule(patch("replace", "/kind", `"Secret"`)),
			wantRefusal: "path cannot change kind, apiVersion or status",
		},
		{
			name:   "a patch of a field that merely starts like a forbidden one is accepted",
			policy: patchRule(patch("add", "/kindness", `"yes"`)),
		},
		{
			name:        "a patch of the name is refused",
			policy:      patchRule(patch("replace", "/metadata/name", `"other"`)),
			wantRefusal: "path can only change labels and annotations in metadata",
		},
		{
			name:        "a patch of the whole metadata is refused",
			policy:      patchRule(patch("replace", "/metadata", `{}`)),
			wantRefusal: "path can only change labels and annotations in metadata",
		},
		{
			name: "a property sorter in a cluster selector is refused",
			policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
				ClusterSelector: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{
					PropertySorter: &placementv1beta1.PropertySorter{Name: clusterv1beta1.PropertyNodeCount, SortOrder: placementv1beta1.Descending},
				}}},
				OverrideType: placementv1beta1.DeleteOverrideType,
			}}},
			wantRefusal: "propertySorter is only allowed in preferredDuringSchedulingIgnoredDuringExecution terms",
		},
		{
			name:        "a policy without rules is refused",
			policy:      &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{}},
			wantRefusal: "spec.policy.overrideRules in body should have at least 1 items",
		},
	}
	for _, kind := range overrideKinds {
		for _, tc := range tests {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				err := env.Client.Create(context.Background(), kind.new(tc.policy))
				testenv.CheckValidation(t, err, tc.wantRefusal)
			})
		}
	}
}

func TestOverrideDefaults(t *testing.T) {
	o := overrideKinds[0].new(patchRule(patch("add", "/metadata/labels/tier", `"gold"`))).(*placementv1beta1.ClusterResourceOverride)
	if err := env.Client.Create(context.Background(), o); err != nil {
		t.Fatalf("failed to create the override: %v", err)
	}
	if got, want := o.Spec.Policy.OverrideRules[0].OverrideType, placementv1beta1.JSONPatchOverrideType; got != want {
		t.Errorf("override type is %q, want %q", got, want)
	}
}

func TestOverrideSelectorsNeedAName(t *testing.T) {
	ro := overrideKinds[1].new(patchRule(patch("add", "/metadata/labels/tier", `"gold"`))).(*placementv1beta1.ResourceOverride)
	ro.Spec.ResourceSelectors[0].Name = ""
	err := env.Client.Create(context.Background(), ro)
	testenv.CheckValidation(t, err, "spec.resourceSelectors[0].name in body should be at least 1 chars long")
}

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

package framework

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func requiredLabels(terms ...map[string]string) *placementv1beta1.PlacementPolicy {
	sel := &placementv1beta1.ClusterSelector{}
	for _, m := range terms {
		sel.ClusterSelectorTerms = append(sel.ClusterSelectorTerms, placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: m}})
	}
	return &placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: sel,
	}}}
}

func dyn(group, source string, kv ...string) DynamicSelector {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return DynamicSelector{Group: group, Source: source, MatchLabels: m}
}

func TestEffectiveSelectors(t *testing.T) {
	tests := []struct {
		name    string
		policy  *placementv1beta1.PlacementPolicy
		dynamic []DynamicSelector
		group   string
		mode    SelectorMergeMode
		want    []string // the terms' label selectors, as strings; nil for no requirement
	}{
		{
			name: "no selectors at all is no requirement",
			want: nil,
		},
		{
			name:   "the placement's own terms",
			policy: requiredLabels(map[string]string{"env": "dev"}, map[string]string{"zone": "eu"}),
			want:   []string{"env=dev", "zone=eu"},
		},
		{
			name:    "dynamic selectors alone form one term",
			dynamic: []DynamicSelector{dyn("", SourceResourceWorkflow, "zone", "eu")},
			want:    []string{"zone=eu"},
		},
		{
			name:    "dynamic selectors are ANDed into every term of the placement",
			policy:  requiredLabels(map[string]string{"env": "dev"}, map[string]string{"env": "test"}),
			dynamic: []DynamicSelector{dyn("", SourceResourceWorkflow, "zone", "eu")},
			want:    []string{"env=dev,zone=eu", "env=test,zone=eu"},
		},
		{
			name:    "on a key conflict the placement's own selector wins",
			policy:  requiredLabels(map[string]string{"env": "dev"}),
			dynamic: []DynamicSelector{dyn("", SourcePlacementWorkflow, "env", "prod", "tier", "gold")},
			want:    []string{"env=dev,tier=gold"},
		},
		{
			name:    "on a key conflict the placement workflow wins over the resource workflow, whatever the order",
			dynamic: []DynamicSelector{dyn("", SourceResourceWorkflow, "env", "prod"), dyn("", SourcePlacementWorkflow, "env", "staging")},
			want:    []string{"env=staging"},
		},
		{
			name:    "selectors of the same source are ANDed",
			dynamic: []DynamicSelector{dyn("", SourceResourceWorkflow, "env", "prod"), dyn("", SourceResourceWorkflow, "env", "dev")},
			want:    []string{"env=prod,env=dev"},
		},
		{
			name:    "merging without override keeps both sides of a conflict",
			policy:  requiredLabels(map[string]string{"env": "dev"}),
			dynamic: []DynamicSelector{dyn("", SourcePlacementWorkflow, "env", "prod")},
			mode:    MergeWithoutOverride,
			want:    []string{"env=dev,env=prod"},
		},
		{
			name:    "a group's own selectors replace the placement's label selectors for that group",
			policy:  requiredLabels(map[string]string{"promise": "label"}),
			dynamic: []DynamicSelector{dyn("scheduled-dir", SourcePlacementWorkflow, "workflow", "subdir"), dyn("", SourcePlacementWorkflow, "other", "x")},
			group:   "scheduled-dir",
			want:    []string{"workflow=subdir"},
		},
		{
			name:    "a group without selectors of its own is scheduled like the placement's resources",
			policy:  requiredLabels(map[string]string{"promise": "label"}),
			dynamic: []DynamicSelector{dyn("scheduled-dir", SourcePlacementWorkflow, "workflow", "subdir")},
			group:   "some-dir",
			want:    []string{"promise=label"},
		},
		{
			name:    "selectors of a group do not apply to the placement's resources as a whole",
			policy:  requiredLabels(map[string]string{"promise": "label"}),
			dynamic: []DynamicSelector{dyn("scheduled-dir", SourcePlacementWorkflow, "workflow", "subdir")},
			want:    []string{"promise=label"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			terms, err := EffectiveSelectors(tt.policy, tt.dynamic, tt.group, tt.mode)
			if err != nil {
				t.Fatalf("EffectiveSelectors() = %v", err)
			}
			var got []string
			for _, term := range terms {
				got = append(got, term.Labels.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("terms (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEffectiveSelectorsKeepPropertySelectorsWhenAGroupReplacesLabels(t *testing.T) {
	props := &placementv1beta1.PropertySelector{MatchExpressions: []placementv1beta1.PropertySelectorRequirement{{Name: "p", Operator: "Gt", Values: []string{"1"}}}}
	policy := &placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}, PropertySelector: props,
		}}},
	}}}
	terms, err := EffectiveSelectors(policy, []DynamicSelector{dyn("g", SourceResourceWorkflow, "zone", "eu")}, "g", "")
	if err != nil || len(terms) != 1 {
		t.Fatalf("EffectiveSelectors() = %v, %v", terms, err)
	}
	if terms[0].Labels.String() != "zone=eu" || terms[0].Properties != props || !terms[0].SelectsLabels() {
		t.Errorf("term = %v / %v", terms[0].Labels, terms[0].Properties)
	}
}

func TestEffectiveSelectorsRejectsInvalidLabels(t *testing.T) {
	if _, err := EffectiveSelectors(nil, []DynamicSelector{dyn("", "", "bad key!", "x")}, "", ""); err == nil {
		t.Errorf("EffectiveSelectors() with an invalid key succeeded")
	}
}

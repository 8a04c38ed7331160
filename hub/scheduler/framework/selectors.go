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
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Sources of dynamic selectors, in order of precedence (Kratix: the Promise's own
// destinationSelectors, then the Promise workflow's, then the resource workflow's).
// The placement's own selectors always come first; a source not listed here ranks
// after all of them.
const (
	// SourcePlacementWorkflow: selectors written by the placement-level workflow;
	// they apply to every later cycle of the placement.
	SourcePlacementWorkflow = "placement-workflow"
	// SourceResourceWorkflow: selectors written by the workflow of one resource
	// request.
	SourceResourceWorkflow = "resource-workflow"
)

// DynamicSelector is a cluster label selector produced at run time, such as a
// workflow's destination-selectors.yaml in Kratix.
type DynamicSelector struct {
	// Group is empty for a selector that applies to all of the placement's resources,
	// which adds to the placement's own label selectors; or the name of a group of
	// resources, for which the group's selectors replace the placement's own.
	Group string
	// MatchLabels are equality requirements on cluster labels, all of which must hold.
	MatchLabels map[string]string
	// Source is who produced the selector: SourcePlacementWorkflow or
	// SourceResourceWorkflow. It decides precedence on a key conflict.
	Source string
}

// SelectorMergeMode is how dynamic selectors combine with the placement's own.
type SelectorMergeMode string

const (
	// MergeByPrecedence (the default, also for ""): requirements on a label key that a
	// higher-precedence selector already constrains are dropped, so the placement's
	// own selectors win over the placement workflow's, which win over the resource
	// workflow's. Selectors of the same source are ANDed.
	MergeByPrecedence SelectorMergeMode = "Precedence"
	// MergeWithoutOverride (Kratix's older cluster-selectors.yaml): every requirement
	// is ANDed and nothing is overridden, so env=dev from the placement and env=prod
	// from a workflow select no cluster at all.
	MergeWithoutOverride SelectorMergeMode = "WithoutOverride"
)

// SelectorTerm is one required cluster selector term after dynamic selectors were
// merged in. A cluster matches the placement's required selector if it matches any
// term; it matches a term if it matches both Labels and Properties.
type SelectorTerm struct {
	// Labels are the term's label requirements; never nil, labels.Everything() when
	// there are none.
	Labels labels.Selector
	// Properties are the term's property requirements, from the placement's own
	// term; nil when there are none.
	Properties *placementv1beta1.PropertySelector
}

// SelectsLabels reports whether the term has label requirements, that is, whether
// it explicitly selects clusters by their labels (see strictMatchLabels).
func (t SelectorTerm) SelectsLabels() bool { return !t.Labels.Empty() }

// EffectiveSelectors returns the required cluster selector terms that decide which
// clusters the placement's resources of group go to: the placement's own required
// cluster affinity terms (ORed) combined with the dynamic selectors. nil means no
// requirement: every cluster matches (except, for strictlabels, strict ones).
//
//   - For group "" (all resources), or a group without selectors of its own, the
//     dynamic selectors without a group are ANDed into every term of the placement's
//     own; with no terms of its own they form the only term.
//   - For a group that has selectors of its own, those replace the label selectors of
//     the placement's own terms (their property selectors stay); the selectors
//     without a group do not apply.
//   - On a conflict — two requirements on one label key — mode decides: with
//     MergeByPrecedence the one of higher precedence wins (the placement's own, then
//     SourcePlacementWorkflow, then SourceResourceWorkflow, then any other source;
//     equal precedence ANDs); with MergeWithoutOverride both are kept, which no
//     cluster can meet when their values differ.
func EffectiveSelectors(policy *placementv1beta1.PlacementPolicy, dynamic []DynamicSelector, group string, mode SelectorMergeMode) ([]SelectorTerm, error) {
	own := requiredTerms(policy)
	applicable, replace := applicableDynamic(dynamic, group)
	if len(own) == 0 && len(applicable) == 0 {
		return nil, nil
	}
	if len(own) == 0 {
		own = []placementv1beta1.ClusterSelectorTerm{{}}
	}
	out := make([]SelectorTerm, 0, len(own))
	for i := range own {
		t, err := mergeTerm(&own[i], applicable, replace, mode)
		if err != nil {
			return nil, fmt.Errorf("failed to build cluster selector term %d: %w", i, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// requiredTerms returns the policy's required cluster selector terms.
func requiredTerms(policy *placementv1beta1.PlacementPolicy) []placementv1beta1.ClusterSelectorTerm {
	if policy == nil || policy.Affinity == nil || policy.Affinity.ClusterAffinity == nil ||
		policy.Affinity.ClusterAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	return policy.Affinity.ClusterAffinity.RequiredDuringSchedulingIgnoredDuringExecution.ClusterSelectorTerms
}

// applicableDynamic returns the dynamic selectors that apply to group, sorted by
// precedence, and whether they replace the placement's own label selectors.
func applicableDynamic(dynamic []DynamicSelector, group string) ([]DynamicSelector, bool) {
	pick := func(g string) []DynamicSelector {
		var out []DynamicSelector
		for _, d := range dynamic {
			if d.Group == g {
				out = append(out, d)
			}
		}
		return out
	}
	var out []DynamicSelector
	replace := false
	if group != "" {
		out = pick(group)
		replace = len(out) > 0
	}
	if !replace {
		out = pick("")
	}
	sort.SliceStable(out, func(i, j int) bool { return sourceRank(out[i].Source) < sourceRank(out[j].Source) })
	return out, replace
}

// sourceRank orders sources by precedence, highest first.
func sourceRank(source string) int {
	switch source {
	case SourcePlacementWorkflow:
		return 1
	case SourceResourceWorkflow:
		return 2
	default:
		return 3
	}
}

// mergeTerm combines one of the placement's terms with the dynamic selectors.
func mergeTerm(term *placementv1beta1.ClusterSelectorTerm, dynamic []DynamicSelector, replace bool, mode SelectorMergeMode) (SelectorTerm, error) {
	sel := labels.Everything()
	constrained := map[string]bool{}
	if !replace && term.LabelSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err != nil {
			return SelectorTerm{}, err
		}
		sel = s
		for k := range term.LabelSelector.MatchLabels {
			constrained[k] = true
		}
		for _, e := range term.LabelSelector.MatchExpressions {
			constrained[e.Key] = true
		}
	}
	var reqs []labels.Requirement
	for start := 0; start < len(dynamic); {
		end := start
		for end < len(dynamic) && sourceRank(dynamic[end].Source) == sourceRank(dynamic[start].Source) {
			end++
		}
		// Selectors of one precedence: keep what the higher ones do not constrain.
		for _, d := range dynamic[start:end] {
			for _, k := range sortedKeys(d.MatchLabels) {
				if mode != MergeWithoutOverride && constrained[k] {
					continue
				}
				r, err := labels.NewRequirement(k, selection.Equals, []string{d.MatchLabels[k]})
				if err != nil {
					return SelectorTerm{}, err
				}
				reqs = append(reqs, *r)
			}
		}
		for _, d := range dynamic[start:end] {
			for k := range d.MatchLabels {
				constrained[k] = true
			}
		}
		start = end
	}
	if len(reqs) > 0 {
		sel = sel.Add(reqs...)
	}
	return SelectorTerm{Labels: sel, Properties: term.PropertySelector}, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

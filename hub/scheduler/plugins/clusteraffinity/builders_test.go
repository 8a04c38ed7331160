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

package clusteraffinity

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

func clusterWithLabels(name string, kv ...string) clusterv1beta1.MemberCluster {
	return ft.Cluster(name, ft.Labels(kv...))
}

func clusterWithProperty(name, property, value string) clusterv1beta1.MemberCluster {
	return ft.Cluster(name, ft.Property(property, value))
}

// requiring returns a policy whose required cluster affinity has the terms.
func requiring(terms ...placementv1beta1.ClusterSelectorTerm) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: terms},
	}}}
}

// preferring returns a policy whose preferred cluster affinity has the terms.
func preferring(terms ...placementv1beta1.PreferredClusterSelector) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: terms,
	}}}
}

func weighted(weight int32, term placementv1beta1.ClusterSelectorTerm) placementv1beta1.PreferredClusterSelector {
	return placementv1beta1.PreferredClusterSelector{Weight: weight, Preference: term}
}

// labelTerm is a term with matchLabels kv.
func labelTerm(kv ...string) placementv1beta1.ClusterSelectorTerm {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: m}}
}

// exprTerm is a term with one match expression.
func exprTerm(key string, op metav1.LabelSelectorOperator, values ...string) placementv1beta1.ClusterSelectorTerm {
	return placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}},
	}}
}

// propTerm is a term with one property requirement.
func propTerm(name string, op placementv1beta1.PropertySelectorOperator, value string) placementv1beta1.ClusterSelectorTerm {
	return placementv1beta1.ClusterSelectorTerm{PropertySelector: &placementv1beta1.PropertySelector{
		MatchExpressions: []placementv1beta1.PropertySelectorRequirement{{Name: name, Operator: op, Values: []string{value}}},
	}}
}

// and merges terms into one (everything ANDed).
func and(terms ...placementv1beta1.ClusterSelectorTerm) placementv1beta1.ClusterSelectorTerm {
	out := placementv1beta1.ClusterSelectorTerm{}
	for _, t := range terms {
		if t.LabelSelector != nil {
			if out.LabelSelector == nil {
				out.LabelSelector = &metav1.LabelSelector{}
			}
			for k, v := range t.LabelSelector.MatchLabels {
				if out.LabelSelector.MatchLabels == nil {
					out.LabelSelector.MatchLabels = map[string]string{}
				}
				out.LabelSelector.MatchLabels[k] = v
			}
			out.LabelSelector.MatchExpressions = append(out.LabelSelector.MatchExpressions, t.LabelSelector.MatchExpressions...)
		}
		if t.PropertySelector != nil {
			if out.PropertySelector == nil {
				out.PropertySelector = &placementv1beta1.PropertySelector{}
			}
			out.PropertySelector.MatchExpressions = append(out.PropertySelector.MatchExpressions, t.PropertySelector.MatchExpressions...)
		}
		if t.PropertySorter != nil {
			out.PropertySorter = t.PropertySorter
		}
	}
	return out
}

func sortedBy(name string, order placementv1beta1.PropertySortOrder) placementv1beta1.ClusterSelectorTerm {
	return placementv1beta1.ClusterSelectorTerm{PropertySorter: &placementv1beta1.PropertySorter{Name: name, SortOrder: order}}
}

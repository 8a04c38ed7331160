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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// PropertyValue returns the value of a cluster property: the reported property of
// that name if there is one, else the resource property derived from the cluster's
// resource usage. ok is false if the cluster has no such property or its value is
// not a quantity.
func PropertyValue(mc *clusterv1beta1.MemberCluster, name string) (q resource.Quantity, ok bool) {
	if p, found := mc.Status.Properties[name]; found {
		q, err := resource.ParseQuantity(p.Value)
		return q, err == nil
	}
	u := &mc.Status.ResourceUsage
	var list corev1.ResourceList
	var res corev1.ResourceName
	switch name {
	case clusterv1beta1.PropertyTotalCPU:
		list, res = u.Capacity, corev1.ResourceCPU
	case clusterv1beta1.PropertyTotalMemory:
		list, res = u.Capacity, corev1.ResourceMemory
	case clusterv1beta1.PropertyAllocatableCPU:
		list, res = u.Allocatable, corev1.ResourceCPU
	case clusterv1beta1.PropertyAllocatableMemory:
		list, res = u.Allocatable, corev1.ResourceMemory
	case clusterv1beta1.PropertyAvailableCPU:
		list, res = u.Available, corev1.ResourceCPU
	case clusterv1beta1.PropertyAvailableMemory:
		list, res = u.Available, corev1.ResourceMemory
	default:
		return q, false
	}
	q, ok = list[res]
	return q, ok
}

// PropertyOperatorHolds reports whether a property selector operator holds for
// cmp, the comparison of the cluster's value with the required one (-1, 0, +1).
func PropertyOperatorHolds(op placementv1beta1.PropertySelectorOperator, cmp int) bool {
	switch op {
	case placementv1beta1.PropertySelectorGreaterThan:
		return cmp > 0
	case placementv1beta1.PropertySelectorGreaterThanOrEqualTo:
		return cmp >= 0
	case placementv1beta1.PropertySelectorEqualTo:
		return cmp == 0
	case placementv1beta1.PropertySelectorNotEqualTo:
		return cmp != 0
	case placementv1beta1.PropertySelectorLessThan:
		return cmp < 0
	case placementv1beta1.PropertySelectorLessThanOrEqualTo:
		return cmp <= 0
	}
	return false
}

// MatchesClusterSelector reports whether a cluster matches a cluster selector the
// way the scheduler's required cluster affinity does: any term (ORed), and within
// a term both its label selector and every property requirement. A nil selector,
// or one without terms, matches every cluster. It is for callers outside a
// scheduling cycle (overrides); the scheduler's plugin caches property values.
func MatchesClusterSelector(mc *clusterv1beta1.MemberCluster, sel *placementv1beta1.ClusterSelector) (bool, error) {
	if sel == nil || len(sel.ClusterSelectorTerms) == 0 {
		return true, nil
	}
	for i := range sel.ClusterSelectorTerms {
		ok, err := matchesTerm(mc, &sel.ClusterSelectorTerms[i])
		if err != nil {
			return false, fmt.Errorf("cluster selector term %d: %w", i+1, err)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

func matchesTerm(mc *clusterv1beta1.MemberCluster, term *placementv1beta1.ClusterSelectorTerm) (bool, error) {
	if term.LabelSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err != nil {
			return false, err
		}
		if !s.Matches(labels.Set(mc.Labels)) {
			return false, nil
		}
	}
	if term.PropertySelector == nil {
		return true, nil
	}
	for _, e := range term.PropertySelector.MatchExpressions {
		if len(e.Values) != 1 {
			return false, fmt.Errorf("property %s: operator %s needs exactly one value, got %d", e.Name, e.Operator, len(e.Values))
		}
		want, err := resource.ParseQuantity(e.Values[0])
		if err != nil {
			return false, fmt.Errorf("property %s: value %q is not a quantity: %w", e.Name, e.Values[0], err)
		}
		got, ok := PropertyValue(mc, e.Name)
		if !ok || !PropertyOperatorHolds(e.Operator, got.Cmp(want)) {
			return false, nil
		}
	}
	return true, nil
}

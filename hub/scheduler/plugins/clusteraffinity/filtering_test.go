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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

const (
	gt = placementv1beta1.PropertySelectorGreaterThan
	ge = placementv1beta1.PropertySelectorGreaterThanOrEqualTo
	eq = placementv1beta1.PropertySelectorEqualTo
	ne = placementv1beta1.PropertySelectorNotEqualTo
	lt = placementv1beta1.PropertySelectorLessThan
	le = placementv1beta1.PropertySelectorLessThanOrEqualTo

	nodes = clusterv1beta1.PropertyNodeCount
)

func TestFilterByLabels(t *testing.T) {
	clusters := []clusterv1beta1.MemberCluster{
		clusterWithLabels("dev-eu", "env", "dev", "zone", "eu"),
		clusterWithLabels("dev-us", "env", "dev", "zone", "us"),
		clusterWithLabels("prod-eu", "env", "prod", "zone", "eu"),
		clusterWithLabels("bare"),
	}
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		want   []string // clusters that pass
	}{
		{
			name:   "a policy without affinity selects every cluster",
			policy: nil,
			want:   []string{"bare", "dev-eu", "dev-us", "prod-eu"},
		},
		{
			name:   "a required term with no terms selects every cluster",
			policy: requiring(),
			want:   []string{"bare", "dev-eu", "dev-us", "prod-eu"},
		},
		{
			name:   "an empty term selects every cluster",
			policy: requiring(placementv1beta1.ClusterSelectorTerm{}),
			want:   []string{"bare", "dev-eu", "dev-us", "prod-eu"},
		},
		{
			name:   "matchLabels selects the clusters with all of the labels",
			policy: requiring(labelTerm("env", "dev", "zone", "eu")),
			want:   []string{"dev-eu"},
		},
		{
			name:   "terms are ORed",
			policy: requiring(labelTerm("env", "prod"), labelTerm("zone", "us")),
			want:   []string{"dev-us", "prod-eu"},
		},
		{
			name:   "In selects clusters whose label has one of the values",
			policy: requiring(exprTerm("zone", metav1.LabelSelectorOpIn, "us", "asia")),
			want:   []string{"dev-us"},
		},
		{
			name:   "NotIn selects clusters whose label has none of the values, and those without the label",
			policy: requiring(exprTerm("zone", metav1.LabelSelectorOpNotIn, "eu")),
			want:   []string{"bare", "dev-us"},
		},
		{
			name:   "Exists selects clusters with the label",
			policy: requiring(exprTerm("env", metav1.LabelSelectorOpExists)),
			want:   []string{"dev-eu", "dev-us", "prod-eu"},
		},
		{
			name:   "DoesNotExist selects clusters without the label",
			policy: requiring(exprTerm("env", metav1.LabelSelectorOpDoesNotExist)),
			want:   []string{"bare"},
		},
		{
			name:   "matchLabels and matchExpressions of one term are ANDed",
			policy: requiring(and(labelTerm("env", "dev"), exprTerm("zone", metav1.LabelSelectorOpNotIn, "us"))),
			want:   []string{"dev-eu"},
		},
		{
			name:   "the built-in cluster name label selects a cluster by name",
			policy: requiring(labelTerm(clusterv1beta1.LabelClusterName, "prod-eu")),
			want:   []string{"prod-eu"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := passing(ft.RunFilter(t, New(), ft.Input(tt.policy, clusters...)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("clusters passing (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterByProperties(t *testing.T) {
	clusters := []clusterv1beta1.MemberCluster{
		clusterWithProperty("two", nodes, "2"),
		clusterWithProperty("three", nodes, "3"),
		clusterWithProperty("four", nodes, "4"),
		ft.Cluster("unreported"),
		clusterWithProperty("garbled", nodes, "three"),
	}
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		want   []string
	}{
		{name: "Gt selects larger values", policy: requiring(propTerm(nodes, gt, "3")), want: []string{"four"}},
		{name: "Ge selects larger or equal values", policy: requiring(propTerm(nodes, ge, "3")), want: []string{"four", "three"}},
		{name: "Eq selects equal values", policy: requiring(propTerm(nodes, eq, "3")), want: []string{"three"}},
		{name: "Ne selects other values of clusters that report the property", policy: requiring(propTerm(nodes, ne, "3")), want: []string{"four", "two"}},
		{name: "Lt selects smaller values", policy: requiring(propTerm(nodes, lt, "3")), want: []string{"two"}},
		{name: "Le selects smaller or equal values", policy: requiring(propTerm(nodes, le, "3")), want: []string{"three", "two"}},
		{name: "values compare as quantities", policy: requiring(propTerm(nodes, eq, "3000m")), want: []string{"three"}},
		{
			name:   "labels and properties of one term are ANDed",
			policy: requiring(and(propTerm(nodes, ge, "3"), exprTerm(clusterv1beta1.LabelClusterName, metav1.LabelSelectorOpNotIn, "four"))),
			want:   []string{"three"},
		},
		{
			name:   "two property requirements of one term are ANDed",
			policy: requiring(and(propTerm(nodes, gt, "2"), propTerm(nodes, lt, "4"))),
			want:   []string{"three"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := passing(ft.RunFilter(t, New(), ft.Input(tt.policy, clusters...)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("clusters passing (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterByResourceProperties(t *testing.T) {
	clusters := []clusterv1beta1.MemberCluster{
		ft.Cluster("small", ft.Resources(corev1.ResourceCPU, "8", "7", "1"), ft.Resources(corev1.ResourceMemory, "16Gi", "15Gi", "2Gi")),
		ft.Cluster("large", ft.Resources(corev1.ResourceCPU, "64", "60", "30"), ft.Resources(corev1.ResourceMemory, "256Gi", "250Gi", "100Gi")),
		ft.Cluster("unreported"),
	}
	tests := []struct {
		name     string
		property string
		op       placementv1beta1.PropertySelectorOperator
		value    string
		want     []string
	}{
		{name: "total CPU is the capacity", property: clusterv1beta1.PropertyTotalCPU, op: ge, value: "8", want: []string{"large", "small"}},
		{name: "allocatable CPU is the allocatable amount", property: clusterv1beta1.PropertyAllocatableCPU, op: eq, value: "7", want: []string{"small"}},
		{name: "available CPU is the available amount", property: clusterv1beta1.PropertyAvailableCPU, op: gt, value: "1500m", want: []string{"large"}},
		{name: "total memory is the capacity", property: clusterv1beta1.PropertyTotalMemory, op: lt, value: "100Gi", want: []string{"small"}},
		{name: "allocatable memory is the allocatable amount", property: clusterv1beta1.PropertyAllocatableMemory, op: eq, value: "250Gi", want: []string{"large"}},
		{name: "available memory is the available amount", property: clusterv1beta1.PropertyAvailableMemory, op: ge, value: "2Gi", want: []string{"large", "small"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := passing(ft.RunFilter(t, New(), ft.Input(requiring(propTerm(tt.property, tt.op, tt.value)), clusters...)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("clusters passing (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterSaysWhyAClusterDoesNotMatch(t *testing.T) {
	tests := []struct {
		name    string
		policy  *placementv1beta1.PlacementPolicy
		cluster clusterv1beta1.MemberCluster
		want    string
	}{
		{
			name:    "labels of the only term",
			policy:  requiring(labelTerm("env", "prod")),
			cluster: clusterWithLabels("c", "env", "dev"),
			want:    "cluster labels do not match the required selector env=prod",
		},
		{
			name:    "a property the cluster does not report",
			policy:  requiring(propTerm(nodes, ge, "3")),
			cluster: ft.Cluster("c"),
			want:    "cluster does not report property flotilla.io/node-count as a quantity",
		},
		{
			name:    "a property value out of range",
			policy:  requiring(propTerm(nodes, ge, "3")),
			cluster: clusterWithProperty("c", nodes, "2"),
			want:    "property flotilla.io/node-count is 2, required Ge 3",
		},
		{
			name:    "every term of several",
			policy:  requiring(labelTerm("env", "prod"), propTerm(nodes, ge, "3")),
			cluster: clusterWithProperty("c", nodes, "2"),
			want: "cluster matches none of the 2 required cluster selector terms " +
				"(term 1: labels do not match env=prod; term 2: property flotilla.io/node-count is 2, required Ge 3)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ft.RunFilter(t, New(), ft.Input(tt.policy, tt.cluster))["c"]
			if got.Code() != framework.ClusterMismatch {
				t.Errorf("Filter() code = %v, want ClusterMismatch", got.Code())
			}
			if diff := cmp.Diff(tt.want, got.Message()); diff != "" {
				t.Errorf("Filter() message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterAppliesDynamicSelectors(t *testing.T) {
	clusters := []clusterv1beta1.MemberCluster{
		clusterWithLabels("dev-eu", "env", "dev", "zone", "eu"),
		clusterWithLabels("dev-us", "env", "dev", "zone", "us"),
	}
	in := ft.Input(requiring(labelTerm("env", "dev")), clusters...)
	in.DynamicSelectors = []framework.DynamicSelector{{MatchLabels: map[string]string{"zone": "us"}, Source: framework.SourceResourceWorkflow}}
	if diff := cmp.Diff([]string{"dev-us"}, passing(ft.RunFilter(t, New(), in))); diff != "" {
		t.Errorf("clusters passing (-want +got):\n%s", diff)
	}
}

func TestDynamicSelectorsDoNotApplyToPickFixed(t *testing.T) {
	policy := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"dev"}}
	in := ft.Input(policy, clusterWithLabels("dev", "env", "dev"))
	in.DynamicSelectors = []framework.DynamicSelector{{MatchLabels: map[string]string{"env": "prod"}}}
	if diff := cmp.Diff([]string{"dev"}, passing(ft.RunFilter(t, New(), in))); diff != "" {
		t.Errorf("clusters passing (-want +got):\n%s", diff)
	}
}

func TestPreFilterRejectsAnInvalidPolicy(t *testing.T) {
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
	}{
		{name: "a property value that is not a quantity", policy: requiring(propTerm(nodes, ge, "many"))},
		{name: "an unknown property operator", policy: requiring(propTerm(nodes, "Near", "3"))},
		{name: "an unknown label operator", policy: requiring(exprTerm("env", "Like", "dev"))},
		{
			name: "a property requirement with two values",
			policy: requiring(placementv1beta1.ClusterSelectorTerm{PropertySelector: &placementv1beta1.PropertySelector{
				MatchExpressions: []placementv1beta1.PropertySelectorRequirement{{Name: nodes, Operator: ge, Values: []string{"1", "2"}}},
			}}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ft.Input(tt.policy, ft.Cluster("c"))
			state := framework.NewCycleState(&in)
			if _, st := New().PreFilter(t.Context(), state, tt.policy, state.Clusters()); !st.IsError() {
				t.Errorf("PreFilter() = %v, want an error status", st)
			}
		})
	}
}

func TestPropertyValue(t *testing.T) {
	mc := ft.Cluster("c", ft.Property(nodes, "3"), ft.Property(clusterv1beta1.PropertyAvailableCPU, "5"),
		ft.Resources(corev1.ResourceCPU, "8", "7", "6"))
	tests := []struct {
		name     string
		property string
		want     string
		wantOK   bool
	}{
		{name: "a reported property", property: nodes, want: "3", wantOK: true},
		{name: "a reported property wins over the one derived from resource usage", property: clusterv1beta1.PropertyAvailableCPU, want: "5", wantOK: true},
		{name: "a resource property is derived from resource usage", property: clusterv1beta1.PropertyAllocatableCPU, want: "7", wantOK: true},
		{name: "a resource the cluster does not report", property: clusterv1beta1.PropertyTotalMemory, wantOK: false},
		{name: "an unknown property", property: "example.com/colour", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, ok := PropertyValue(&mc, tt.property)
			if ok != tt.wantOK {
				t.Fatalf("PropertyValue() ok = %v, want %v", ok, tt.wantOK)
			}
			if ok && q.String() != tt.want {
				t.Errorf("PropertyValue() = %s, want %s", q.String(), tt.want)
			}
		})
	}
}

// passing returns the sorted names of the clusters whose status is success.
func passing(statuses map[string]*framework.Status) []string {
	var out []string
	for name, st := range statuses {
		if st.IsSuccess() {
			out = append(out, name)
		}
	}
	sortStrings(out)
	return out
}

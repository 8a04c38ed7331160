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

package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ClusterResourcePlacementDisruptionBudget limits how many clusters a
// ClusterResourcePlacement of the same name may lose to evictions at a time. Exactly
// one of maxUnavailable and minAvailable is set.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=flotilla
// +kubebuilder:printcolumn:name="MAX-UNAVAILABLE",type=string,JSONPath=`.spec.maxUnavailable`
// +kubebuilder:printcolumn:name="MIN-AVAILABLE",type=string,JSONPath=`.spec.minAvailable`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterResourcePlacementDisruptionBudget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the budget.
	// +required
	Spec PlacementDisruptionBudgetSpec `json:"spec"`
}

// PlacementDisruptionBudgetSpec is a disruption budget.
//
// +kubebuilder:validation:XValidation:rule="has(self.maxUnavailable) != has(self.minAvailable)",message="exactly one of maxUnavailable and minAvailable must be set"
type PlacementDisruptionBudgetSpec struct {
	// MaxUnavailable is how many of the placement's clusters may be unavailable after
	// an eviction: an absolute number, or a percentage of the clusters the placement
	// targets (for PickAll, of those it is on).
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? self.matches('^(100|[1-9]?[0-9])%$') : self >= 0",message="must be a non-negative integer or a percentage from 0% to 100%"
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MinAvailable is how many of the placement's clusters must stay available after
	// an eviction: an absolute number, or a percentage of the clusters the placement
	// targets.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? self.matches('^(100|[1-9]?[0-9])%$') : self >= 0",message="must be a non-negative integer or a percentage from 0% to 100%"
	// +optional
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`
}

// ClusterResourcePlacementDisruptionBudgetList is a list of
// ClusterResourcePlacementDisruptionBudgets.
//
// +kubebuilder:object:root=true
type ClusterResourcePlacementDisruptionBudgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the budgets.
	Items []ClusterResourcePlacementDisruptionBudget `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterResourcePlacementDisruptionBudget{}, &ClusterResourcePlacementDisruptionBudgetList{})
}

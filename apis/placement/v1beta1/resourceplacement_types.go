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
)

// ResourcePlacement places namespaced resources from its own namespace on member
// clusters, into the namespace of the same name there, which it creates on members
// that lack it (and never removes). It works like a ClusterResourcePlacement, through
// the same controllers; its conditions use the ResourcePlacement prefix. Staged
// update runs (strategy type External), reportBack and upsyncSelectors are for
// ClusterResourcePlacements only and are refused here.
//
// +kubebuilder:validation:XValidation:rule="self.spec.resourceSelectors.all(s, s.kind != 'Namespace' || (has(s.group) && size(s.group) > 0))",message="a ResourcePlacement selects objects of its own namespace; it cannot select Namespaces (its own namespace is brought along; use a ClusterResourcePlacement for others)"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.strategy) || !has(self.spec.strategy.type) || self.spec.strategy.type != 'External'",message="strategy type External (staged update runs) is for ClusterResourcePlacements only; use RollingUpdate"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.reportBack)",message="reportBack is for ClusterResourcePlacements only"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.upsyncSelectors) || size(self.spec.upsyncSelectors) == 0",message="upsyncSelectors are for ClusterResourcePlacements only"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=rp,categories=flotilla
// +kubebuilder:printcolumn:name="GEN",type=integer,JSONPath=`.metadata.generation`
// +kubebuilder:printcolumn:name="SCHEDULED",type=string,JSONPath=`.status.conditions[?(@.type=="ResourcePlacementScheduled")].status`
// +kubebuilder:printcolumn:name="SCHEDULED-GEN",type=integer,JSONPath=`.status.conditions[?(@.type=="ResourcePlacementScheduled")].observedGeneration`
// +kubebuilder:printcolumn:name="AVAILABLE",type=string,JSONPath=`.status.conditions[?(@.type=="ResourcePlacementAvailable")].status`
// +kubebuilder:printcolumn:name="AVAILABLE-GEN",type=integer,JSONPath=`.status.conditions[?(@.type=="ResourcePlacementAvailable")].observedGeneration`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="TYPE",type=string,JSONPath=`.spec.policy.placementType`,priority=1
// +kubebuilder:printcolumn:name="WORK-SYNCHRONIZED",type=string,JSONPath=`.status.conditions[?(@.type=="ResourcePlacementWorkSynchronized")].status`,priority=1
type ResourcePlacement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to place, where and how.
	// +required
	Spec PlacementSpec `json:"spec"`

	// Status is the observed state of the placement, written by the hub.
	// +optional
	// +kubebuilder:default={}
	Status PlacementStatus `json:"status,omitempty"`
}

// GetPlacementSpec returns the placement's spec.
func (p *ResourcePlacement) GetPlacementSpec() *PlacementSpec { return &p.Spec }

// GetPlacementStatus returns the placement's status.
func (p *ResourcePlacement) GetPlacementStatus() *PlacementStatus { return &p.Status }

// PlacementConditionType returns the ResourcePlacement-level condition type for a
// per-cluster condition type; see ResourcePlacementConditionType.
func (p *ResourcePlacement) PlacementConditionType(perCluster string) string {
	return ResourcePlacementConditionType(perCluster)
}

// ResourcePlacementList is a list of ResourcePlacements.
//
// +kubebuilder:object:root=true
type ResourcePlacementList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the placements.
	Items []ResourcePlacement `json:"items"`
}

var _ PlacementObj = &ResourcePlacement{}

func init() {
	SchemeBuilder.Register(&ResourcePlacement{}, &ResourcePlacementList{})
}

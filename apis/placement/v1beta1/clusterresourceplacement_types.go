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

// ClusterResourcePlacement places cluster-scoped resources, and whole namespaces with
// everything in them, on member clusters.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=crp,categories=flotilla
// +kubebuilder:printcolumn:name="GEN",type=integer,JSONPath=`.metadata.generation`
// +kubebuilder:printcolumn:name="SCHEDULED",type=string,JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementScheduled")].status`
// +kubebuilder:printcolumn:name="SCHEDULED-GEN",type=integer,JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementScheduled")].observedGeneration`
// +kubebuilder:printcolumn:name="AVAILABLE",type=string,JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementAvailable")].status`
// +kubebuilder:printcolumn:name="AVAILABLE-GEN",type=integer,JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementAvailable")].observedGeneration`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="TYPE",type=string,JSONPath=`.spec.policy.placementType`,priority=1
// +kubebuilder:printcolumn:name="WORK-SYNCHRONIZED",type=string,JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementWorkSynchronized")].status`,priority=1
type ClusterResourcePlacement struct {
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
func (p *ClusterResourcePlacement) GetPlacementSpec() *PlacementSpec { return &p.Spec }

// GetPlacementStatus returns the placement's status.
func (p *ClusterResourcePlacement) GetPlacementStatus() *PlacementStatus { return &p.Status }

// PlacementConditionType returns the ClusterResourcePlacement-level condition type for
// a per-cluster condition type; see ClusterResourcePlacementConditionType.
func (p *ClusterResourcePlacement) PlacementConditionType(perCluster string) string {
	return ClusterResourcePlacementConditionType(perCluster)
}

// ClusterResourcePlacementList is a list of ClusterResourcePlacements.
//
// +kubebuilder:object:root=true
type ClusterResourcePlacementList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the placements.
	Items []ClusterResourcePlacement `json:"items"`
}

var _ PlacementObj = &ClusterResourcePlacement{}

func init() {
	SchemeBuilder.Register(&ClusterResourcePlacement{}, &ClusterResourcePlacementList{})
}

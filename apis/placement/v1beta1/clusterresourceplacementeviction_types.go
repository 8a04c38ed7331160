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

// ClusterResourcePlacementEviction asks the hub to remove a ClusterResourcePlacement's
// resources from one member cluster, if the placement's disruption budget allows. It
// is acted on once: Valid says whether the request makes sense, Executed whether the
// resources were evicted. Eviction does not apply to PickFixed placements.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=flotilla
// +kubebuilder:printcolumn:name="VALID",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].status`
// +kubebuilder:printcolumn:name="EXECUTED",type=string,JSONPath=`.status.conditions[?(@.type=="Executed")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterResourcePlacementEviction struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the placement and the cluster. It cannot be changed.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
	// +required
	Spec PlacementEvictionSpec `json:"spec"`

	// Status is the outcome of the eviction.
	// +optional
	Status PlacementEvictionStatus `json:"status,omitempty"`
}

// PlacementEvictionSpec names what to evict.
type PlacementEvictionSpec struct {
	// PlacementName is the ClusterResourcePlacement to evict.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	PlacementName string `json:"placementName"`

	// ClusterName is the member cluster to evict it from.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	ClusterName string `json:"clusterName"`
}

// PlacementEvictionStatus is the outcome of an eviction.
type PlacementEvictionStatus struct {
	// Conditions describe the eviction: Valid and Executed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterResourcePlacementEvictionList is a list of ClusterResourcePlacementEvictions.
//
// +kubebuilder:object:root=true
type ClusterResourcePlacementEvictionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the evictions.
	Items []ClusterResourcePlacementEviction `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterResourcePlacementEviction{}, &ClusterResourcePlacementEvictionList{})
}

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

// Location is a named group of member clusters, such as a cloud region. A placement
// that sets locationSelectors first picks one Location whose labels match (and sticks
// to it), then applies the rest of its policy to that Location's clusters only.
// The Location's own labels are what placements select it by; its instanceSelector
// says which MemberClusters belong to it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=flotilla
// +kubebuilder:printcolumn:name="INSTANCES",type=integer,JSONPath=`.status.instances`,description="Member clusters in the location"
// +kubebuilder:printcolumn:name="AVAILABLE",type=integer,JSONPath=`.status.availableInstances`,description="Member clusters in the location that are joined, connected and healthy"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Location struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the location.
	// +required
	Spec LocationSpec `json:"spec"`

	// Status is the observed state of the location, written by the hub.
	// +optional
	Status LocationStatus `json:"status,omitempty"`
}

// LocationSpec is the desired state of a Location.
type LocationSpec struct {
	// InstanceSelector selects, by their labels, the MemberClusters that belong to the
	// location. An empty selector selects every member cluster.
	// +required
	InstanceSelector metav1.LabelSelector `json:"instanceSelector"`
}

// LocationStatus is the observed state of a Location.
type LocationStatus struct {
	// Instances is the number of member clusters the instance selector matches.
	// +optional
	Instances int32 `json:"instances,omitempty"`

	// AvailableInstances is the number of those clusters that are joined, connected
	// and healthy.
	// +optional
	AvailableInstances int32 `json:"availableInstances,omitempty"`

	// Conditions describe the state of the location.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// LocationList is a list of Locations.
//
// +kubebuilder:object:root=true
type LocationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the locations.
	Items []Location `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Location{}, &LocationList{})
}

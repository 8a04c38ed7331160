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

// ResourceOverride changes namespaced resources in its own namespace per member
// cluster when they are placed; it works like a ClusterResourceOverride.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories=flotilla
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceOverride struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is which resources to change, where and how.
	// +required
	Spec ResourceOverrideSpec `json:"spec"`

	// Status says which generation of the override the hub has snapshotted.
	// +kubebuilder:default={}
	// +optional
	Status OverrideStatus `json:"status,omitempty"`
}

// ResourceOverrideSpec is the desired state of a ResourceOverride.
type ResourceOverrideSpec struct {
	// Placement limits the override to the resources placed by this placement (a
	// ResourcePlacement in the override's namespace); unset means any placement that
	// selects them.
	// +optional
	Placement *PlacementRef `json:"placement,omitempty"`

	// ResourceSelectors select the resources to change, by name, in the override's
	// namespace.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +required
	ResourceSelectors []OverrideResourceSelector `json:"resourceSelectors"`

	// Policy is how the resources are changed on which clusters.
	// +required
	Policy *OverridePolicy `json:"policy"`
}

// ResourceOverrideList is a list of ResourceOverrides.
//
// +kubebuilder:object:root=true
type ResourceOverrideList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the overrides.
	Items []ResourceOverride `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ResourceOverride{}, &ResourceOverrideList{})
}

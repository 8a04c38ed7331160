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

// ResourceSnapshot is an immutable copy of (part of) the resources a ResourcePlacement
// selects. It lives in the placement's namespace and works like a
// ClusterResourceSnapshot.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories=flotilla
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the selected resources. It cannot be changed.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
	// +required
	Spec ResourceSnapshotSpec `json:"spec"`

	// Status is the observed state of the snapshot.
	// +optional
	Status ResourceSnapshotStatus `json:"status,omitempty"`
}

// GetResourceSnapshotSpec returns the snapshot's spec.
func (s *ResourceSnapshot) GetResourceSnapshotSpec() *ResourceSnapshotSpec { return &s.Spec }

// GetResourceSnapshotStatus returns the snapshot's status.
func (s *ResourceSnapshot) GetResourceSnapshotStatus() *ResourceSnapshotStatus {
	return &s.Status
}

// ResourceSnapshotList is a list of ResourceSnapshots.
//
// +kubebuilder:object:root=true
type ResourceSnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the snapshots.
	Items []ResourceSnapshot `json:"items"`
}

var _ ResourceSnapshotObj = &ResourceSnapshot{}

func init() {
	SchemeBuilder.Register(&ResourceSnapshot{}, &ResourceSnapshotList{})
}

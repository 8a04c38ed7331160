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
	"k8s.io/apimachinery/pkg/runtime"
)

// ClusterResourceSnapshot is an immutable copy of (part of) the resources a
// ClusterResourcePlacement selects. Every change to the selected resources makes a new
// set of snapshots with the next resource index; a set has more than one snapshot when
// the resources do not fit in one object.
//
// Labels: placement.flotilla.io/placement-name, placement.flotilla.io/resource-index
// and placement.flotilla.io/is-latest-snapshot. The first snapshot of a set carries the
// annotations placement.flotilla.io/resource-hash and
// placement.flotilla.io/number-of-resource-snapshots.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=flotilla
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterResourceSnapshot struct {
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

// ResourceSnapshotSpec holds selected resources.
type ResourceSnapshotSpec struct {
	// SelectedResources are the resources, as they were on the hub when selected
	// (without status and server-set metadata).
	// +optional
	SelectedResources []ResourceContent `json:"selectedResources,omitempty"`
}

// ResourceContent is a whole Kubernetes object.
type ResourceContent struct {
	// RawExtension holds the object.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:EmbeddedResource
	runtime.RawExtension `json:",inline"`
}

// ResourceSnapshotStatus is the observed state of a resource snapshot.
type ResourceSnapshotStatus struct {
	// Conditions describe the state of the snapshot.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GetResourceSnapshotSpec returns the snapshot's spec.
func (s *ClusterResourceSnapshot) GetResourceSnapshotSpec() *ResourceSnapshotSpec {
	return &s.Spec
}

// GetResourceSnapshotStatus returns the snapshot's status.
func (s *ClusterResourceSnapshot) GetResourceSnapshotStatus() *ResourceSnapshotStatus {
	return &s.Status
}

// ResourceSnapshotObj is implemented by ClusterResourceSnapshot and ResourceSnapshot.
//
// +kubebuilder:object:generate=false
type ResourceSnapshotObj interface {
	metav1.Object
	runtime.Object

	// GetResourceSnapshotSpec returns the snapshot's spec.
	GetResourceSnapshotSpec() *ResourceSnapshotSpec
	// GetResourceSnapshotStatus returns the snapshot's status, for reading or changing
	// in place.
	GetResourceSnapshotStatus() *ResourceSnapshotStatus
}

// ClusterResourceSnapshotList is a list of ClusterResourceSnapshots.
//
// +kubebuilder:object:root=true
type ClusterResourceSnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the snapshots.
	Items []ClusterResourceSnapshot `json:"items"`
}

var _ ResourceSnapshotObj = &ClusterResourceSnapshot{}

func init() {
	SchemeBuilder.Register(&ClusterResourceSnapshot{}, &ClusterResourceSnapshotList{})
}

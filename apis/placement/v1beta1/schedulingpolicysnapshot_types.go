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

// SchedulingPolicySnapshot is an immutable copy of a ResourcePlacement's policy. It
// lives in the placement's namespace and works like a ClusterSchedulingPolicySnapshot.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories=flotilla
// +kubebuilder:printcolumn:name="SCHEDULED",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type SchedulingPolicySnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the policy. It cannot be changed.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
	// +required
	Spec SchedulingPolicySnapshotSpec `json:"spec"`

	// Status is the scheduler's decisions for the policy.
	// +optional
	Status SchedulingPolicySnapshotStatus `json:"status,omitempty"`
}

// GetPolicySnapshotSpec returns the snapshot's spec.
func (s *SchedulingPolicySnapshot) GetPolicySnapshotSpec() *SchedulingPolicySnapshotSpec {
	return &s.Spec
}

// GetPolicySnapshotStatus returns the snapshot's status.
func (s *SchedulingPolicySnapshot) GetPolicySnapshotStatus() *SchedulingPolicySnapshotStatus {
	return &s.Status
}

// SchedulingPolicySnapshotList is a list of SchedulingPolicySnapshots.
//
// +kubebuilder:object:root=true
type SchedulingPolicySnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the snapshots.
	Items []SchedulingPolicySnapshot `json:"items"`
}

var _ PolicySnapshotObj = &SchedulingPolicySnapshot{}

func init() {
	SchemeBuilder.Register(&SchedulingPolicySnapshot{}, &SchedulingPolicySnapshotList{})
}

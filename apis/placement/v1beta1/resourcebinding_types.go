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

// ResourceBinding binds a ResourcePlacement to one member cluster. It lives in the
// placement's namespace and works like a ClusterResourceBinding.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories=flotilla
// +kubebuilder:printcolumn:name="TARGET",type=string,JSONPath=`.spec.targetCluster`,description="The member cluster"
// +kubebuilder:printcolumn:name="STATE",type=string,JSONPath=`.spec.state`
// +kubebuilder:printcolumn:name="WORK-SYNCHRONIZED",type=string,JSONPath=`.status.conditions[?(@.type=="WorkSynchronized")].status`
// +kubebuilder:printcolumn:name="APPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="AVAILABLE",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="RESOURCE-SNAPSHOT",type=string,JSONPath=`.spec.resourceSnapshotName`,priority=1,description="The resource snapshot placed on the cluster"
// +kubebuilder:printcolumn:name="POLICY-SNAPSHOT",type=string,JSONPath=`.spec.schedulingPolicySnapshotName`,priority=1,description="The scheduling policy snapshot under which the scheduler last picked or kept the cluster"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the binding's target and the resources to place there.
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// Status is the state of the resources on the target cluster.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// GetBindingSpec returns the binding's spec.
func (b *ResourceBinding) GetBindingSpec() *ResourceBindingSpec { return &b.Spec }

// GetBindingStatus returns the binding's status.
func (b *ResourceBinding) GetBindingStatus() *ResourceBindingStatus { return &b.Status }

// ResourceBindingList is a list of ResourceBindings.
//
// +kubebuilder:object:root=true
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the bindings.
	Items []ResourceBinding `json:"items"`
}

var _ BindingObj = &ResourceBinding{}

func init() {
	SchemeBuilder.Register(&ResourceBinding{}, &ResourceBindingList{})
}

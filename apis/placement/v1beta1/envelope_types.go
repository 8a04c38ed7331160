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

// ClusterResourceEnvelope carries manifests (cluster-scoped or namespaced) that must
// not take effect on the hub: a placement that selects it places the manifests in
// its data on the members, never the envelope itself.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=flotilla
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterResourceEnvelope struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Data holds the manifests, one whole object per key.
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=100
	// +required
	Data map[string]ResourceContent `json:"data"`
}

// ClusterResourceEnvelopeList is a list of ClusterResourceEnvelopes.
//
// +kubebuilder:object:root=true
type ClusterResourceEnvelopeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the envelopes.
	Items []ClusterResourceEnvelope `json:"items"`
}

// ResourceEnvelope carries manifests of objects in its own namespace that must not
// take effect on the hub; it works like a ClusterResourceEnvelope.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories=flotilla
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceEnvelope struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Data holds the manifests, one whole object per key.
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=100
	// +required
	Data map[string]ResourceContent `json:"data"`
}

// ResourceEnvelopeList is a list of ResourceEnvelopes.
//
// +kubebuilder:object:root=true
type ResourceEnvelopeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the envelopes.
	Items []ResourceEnvelope `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterResourceEnvelope{}, &ClusterResourceEnvelopeList{}, &ResourceEnvelope{}, &ResourceEnvelopeList{})
}

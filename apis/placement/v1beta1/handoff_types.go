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

// This file holds state hand-off: values a cluster reported through
// statusFeedback that the hub keeps past that cluster's binding and gives to the
// copy that replaces it, as the override variable ${PLACEMENT-HANDOFF-<name>}.

// MaxHandOffValueLength is the longest reported value the hub keeps for a
// hand-off rule; a longer one is not kept (the previous value stays).
const MaxHandOffValueLength = 1024

// StateHandOffRule names one statusFeedback value that the hub keeps in
// status.handOff and freezes onto every binding it creates for a new cluster.
type StateHandOffRule struct {
	// Name names the value: the override variable ${PLACEMENT-HANDOFF-<name>}
	// and the entry of status.handOff.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// Feedback is the reported value: one placed object and the name of one
	// of the jsonPaths of a statusFeedback rule of its kind.
	// +required
	Feedback HandOffFeedback `json:"feedback"`
}

// HandOffFeedback names one statusFeedback value of one placed object.
type HandOffFeedback struct {
	// Group is the API group of the object; empty for the core group.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Group string `json:"group,omitempty"`

	// Version, when set, is the only API version whose reports count.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Version string `json:"version,omitempty"`

	// Kind is the kind of the object, such as ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Kind string `json:"kind"`

	// Namespace is the namespace of the object; empty for a cluster-scoped
	// object.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name is the name of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// JSONPathName is the name of the statusFeedback JSONPath rule whose value
	// is handed off.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	JSONPathName string `json:"jsonPathName"`
}

// HandOffValue is the value of one hand-off rule: in a placement's status the
// last one a cluster reported, on a binding the one frozen when the hub created
// the binding.
type HandOffValue struct {
	// Name is the hand-off rule's name.
	// +required
	Name string `json:"name"`

	// Value is the value; empty on a binding created before any cluster
	// reported one.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Value string `json:"value,omitempty"`

	// Cluster is the member cluster that reported the value.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Cluster string `json:"cluster,omitempty"`

	// ObservationTime is when the cluster read the value.
	// +optional
	ObservationTime *metav1.Time `json:"observationTime,omitempty"`
}

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

// Labels and finalizers of override snapshots.
const (
	// LabelOverrideIndex holds the index (revision) of an override snapshot: "0", "1",
	// and so on. The latest snapshot of an override also carries
	// LabelIsLatestSnapshot=true.
	LabelOverrideIndex = "placement.flotilla.io/override-index"

	// LabelOverrideName holds the name of the ClusterResourceOverride or
	// ResourceOverride an override snapshot copies.
	LabelOverrideName = "placement.flotilla.io/override-name"

	// OverrideSnapshotCleanupFinalizer holds an override until its snapshots are
	// deleted, so that bindings stop using it.
	OverrideSnapshotCleanupFinalizer = "placement.flotilla.io/override-snapshot-cleanup"
)

// ClusterResourceOverrideSnapshot is an immutable copy of a ClusterResourceOverride's
// spec: every change of the override makes a new snapshot with the next index, and
// bindings name the snapshots they apply, so that an override rolls out like a
// resource change. Its name is <override>-<index>.
//
// Labels: placement.flotilla.io/override-name, placement.flotilla.io/override-index
// and placement.flotilla.io/is-latest-snapshot.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=flotilla
// +kubebuilder:printcolumn:name="OVERRIDE",type=string,JSONPath=`.metadata.labels.placement\.flotilla\.io/override-name`
// +kubebuilder:printcolumn:name="INDEX",type=string,JSONPath=`.metadata.labels.placement\.flotilla\.io/override-index`
// +kubebuilder:printcolumn:name="LATEST",type=string,JSONPath=`.metadata.labels.placement\.flotilla\.io/is-latest-snapshot`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterResourceOverrideSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the copied override. It cannot be changed.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
	// +required
	Spec ClusterResourceOverrideSnapshotSpec `json:"spec"`
}

// ClusterResourceOverrideSnapshotSpec holds a copy of a ClusterResourceOverride.
type ClusterResourceOverrideSnapshotSpec struct {
	// OverrideSpec is the override's spec when the snapshot was taken.
	// +required
	OverrideSpec ClusterResourceOverrideSpec `json:"overrideSpec"`

	// OverrideHash is the sha256 hash of OverrideSpec.
	// +kubebuilder:validation:MinLength=1
	// +required
	OverrideHash string `json:"overrideHash"`
}

// ClusterResourceOverrideSnapshotList is a list of ClusterResourceOverrideSnapshots.
//
// +kubebuilder:object:root=true
type ClusterResourceOverrideSnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the snapshots.
	Items []ClusterResourceOverrideSnapshot `json:"items"`
}

// ResourceOverrideSnapshot is an immutable copy of a ResourceOverride's spec, in the
// override's namespace; it works like a ClusterResourceOverrideSnapshot.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories=flotilla
// +kubebuilder:printcolumn:name="OVERRIDE",type=string,JSONPath=`.metadata.labels.placement\.flotilla\.io/override-name`
// +kubebuilder:printcolumn:name="INDEX",type=string,JSONPath=`.metadata.labels.placement\.flotilla\.io/override-index`
// +kubebuilder:printcolumn:name="LATEST",type=string,JSONPath=`.metadata.labels.placement\.flotilla\.io/is-latest-snapshot`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceOverrideSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the copied override. It cannot be changed.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
	// +required
	Spec ResourceOverrideSnapshotSpec `json:"spec"`
}

// ResourceOverrideSnapshotSpec holds a copy of a ResourceOverride.
type ResourceOverrideSnapshotSpec struct {
	// OverrideSpec is the override's spec when the snapshot was taken.
	// +required
	OverrideSpec ResourceOverrideSpec `json:"overrideSpec"`

	// OverrideHash is the sha256 hash of OverrideSpec.
	// +kubebuilder:validation:MinLength=1
	// +required
	OverrideHash string `json:"overrideHash"`
}

// ResourceOverrideSnapshotList is a list of ResourceOverrideSnapshots.
//
// +kubebuilder:object:root=true
type ResourceOverrideSnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the snapshots.
	Items []ResourceOverrideSnapshot `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterResourceOverrideSnapshot{}, &ClusterResourceOverrideSnapshotList{},
		&ResourceOverrideSnapshot{}, &ResourceOverrideSnapshotList{})
}

// AnnotationEnvelopeConfigMap, set to "true" on a ConfigMap, makes it an envelope:
// each value of its data is a manifest (YAML or JSON) that members receive instead
// of the ConfigMap, so the objects inside never take effect on the hub.
const AnnotationEnvelopeConfigMap = "placement.flotilla.io/envelope-configmap"

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
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterResourceOverride changes cluster-scoped resources (and Namespaces) per member
// cluster when they are placed: a JSON patch, or not placing them at all, for the
// clusters its rules select.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=flotilla
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterResourceOverride struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is which resources to change, where and how.
	// +required
	Spec ClusterResourceOverrideSpec `json:"spec"`

	// Status says which generation of the override the hub has snapshotted.
	// +kubebuilder:default={}
	// +optional
	Status OverrideStatus `json:"status,omitempty"`
}

// OverrideStatus is the observed state of a ClusterResourceOverride or a
// ResourceOverride.
type OverrideStatus struct {
	// ObservedGeneration is the metadata.generation of the override the hub last
	// took a snapshot of, which rollouts use from then on. It is 0 until the hub
	// first does, so that tools reading kstatus conventions (Flux, kubectl
	// wait, cli-utils) see a new or changed override as in progress until then.
	// +kubebuilder:default=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// LatestSnapshot is the name of the override snapshot taken of that
	// generation.
	// +optional
	LatestSnapshot string `json:"latestSnapshot,omitempty"`
}

// ClusterResourceOverrideSpec is the desired state of a ClusterResourceOverride.
type ClusterResourceOverrideSpec struct {
	// Placement limits the override to the resources placed by this
	// ClusterResourcePlacement; unset means any placement that selects them.
	// +optional
	Placement *PlacementRef `json:"placement,omitempty"`

	// ClusterResourceSelectors select the cluster-scoped resources to change, by name.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +required
	ClusterResourceSelectors []OverrideResourceSelector `json:"clusterResourceSelectors"`

	// Policy is how the resources are changed on which clusters.
	// +required
	Policy *OverridePolicy `json:"policy"`
}

// PlacementRef refers to a placement; a ResourceOverride refers to a ResourcePlacement
// in its own namespace.
type PlacementRef struct {
	// Name is the placement's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// OverrideResourceSelector selects one resource by group, version, kind and name.
type OverrideResourceSelector struct {
	// Group is the API group of the resource; empty for the core group.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Group string `json:"group,omitempty"`

	// Version is the API version of the resource, such as v1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Version string `json:"version"`

	// Kind is the kind of the resource.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Kind string `json:"kind"`

	// Name is the name of the resource.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// OverridePolicy is a list of override rules.
type OverridePolicy struct {
	// OverrideRules are applied in order; a later rule sees the result of earlier ones.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +required
	OverrideRules []OverrideRule `json:"overrideRules"`
}

// OverrideType is how an override rule changes a resource.
// +kubebuilder:validation:Enum=JSONPatch;Delete
type OverrideType string

const (
	// JSONPatchOverrideType applies the rule's JSON patch to the resource.
	JSONPatchOverrideType OverrideType = "JSONPatch"
	// DeleteOverrideType does not place the resource on the selected clusters (and
	// removes it from them if it was placed).
	DeleteOverrideType OverrideType = "Delete"
)

// OverrideRule changes the resources on the clusters it selects.
//
// +kubebuilder:validation:XValidation:rule="!has(self.overrideType) || self.overrideType != 'JSONPatch' || (has(self.jsonPatchOverrides) && size(self.jsonPatchOverrides) > 0)",message="jsonPatchOverrides are required when overrideType is JSONPatch"
// +kubebuilder:validation:XValidation:rule="!has(self.overrideType) || self.overrideType != 'Delete' || !has(self.jsonPatchOverrides) || size(self.jsonPatchOverrides) == 0",message="jsonPatchOverrides cannot be set when overrideType is Delete"
type OverrideRule struct {
	// ClusterSelector selects the clusters the rule applies to; unset means every
	// cluster.
	// +optional
	ClusterSelector *ClusterSelector `json:"clusterSelector,omitempty"`

	// OverrideType is how the resources are changed.
	// +kubebuilder:default=JSONPatch
	// +optional
	OverrideType OverrideType `json:"overrideType,omitempty"`

	// JSONPatchOverrides are the JSON patch operations to apply, in order; required for
	// JSONPatch and not allowed for Delete.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	JSONPatchOverrides []JSONPatchOverride `json:"jsonPatchOverrides,omitempty"`
}

// JSONPatchOverrideOperator is a JSON patch (RFC 6902) operation.
// +kubebuilder:validation:Enum=add;remove;replace
type JSONPatchOverrideOperator string

const (
	// JSONPatchOverrideOpAdd adds a value.
	JSONPatchOverrideOpAdd JSONPatchOverrideOperator = "add"
	// JSONPatchOverrideOpRemove removes a value.
	JSONPatchOverrideOpRemove JSONPatchOverrideOperator = "remove"
	// JSONPatchOverrideOpReplace replaces a value.
	JSONPatchOverrideOpReplace JSONPatchOverrideOperator = "replace"
)

// JSONPatchOverride is one JSON patch operation.
//
// +kubebuilder:validation:XValidation:rule="self.op != 'remove' || !has(dyn(self).value)",message="a remove operation must not have a value"
// +kubebuilder:validation:XValidation:rule="self.op == 'remove' || has(dyn(self).value)",message="add and replace operations require a value"
type JSONPatchOverride struct {
	// Operator is the operation.
	// +required
	Operator JSONPatchOverrideOperator `json:"op"`

	// Path is the JSON pointer (RFC 6901) of the value to change, such as
	// /metadata/labels/tier. It cannot touch kind, apiVersion or status, nor metadata
	// other than labels and annotations.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="path must be a JSON pointer that starts with /"
	// +kubebuilder:validation:XValidation:rule="!self.matches('~([^01]|$)')",message="in a path, ~ must be followed by 0 (for ~) or 1 (for /)"
	// +kubebuilder:validation:XValidation:rule="!(self.startsWith('/kind') && (size(self) == 5 || self.startsWith('/kind/'))) && !(self.startsWith('/apiVersion') && (size(self) == 11 || self.startsWith('/apiVersion/'))) && !(self.startsWith('/status') && (size(self) == 7 || self.startsWith('/status/')))",message="path cannot change kind, apiVersion or status"
	// +kubebuilder:validation:XValidation:rule="!(self.startsWith('/metadata') && (size(self) == 9 || self.startsWith('/metadata/'))) || (self.startsWith('/metadata/labels') && (size(self) == 16 || self.startsWith('/metadata/labels/'))) || (self.startsWith('/metadata/annotations') && (size(self) == 21 || self.startsWith('/metadata/annotations/')))",message="path can only change labels and annotations in metadata"
	// +required
	Path string `json:"path"`

	// Value is the value to add or replace with; not allowed for remove.
	// +optional
	Value *apiextensionsv1.JSON `json:"value,omitempty"`
}

// ClusterResourceOverrideList is a list of ClusterResourceOverrides.
//
// +kubebuilder:object:root=true
type ClusterResourceOverrideList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the overrides.
	Items []ClusterResourceOverride `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterResourceOverride{}, &ClusterResourceOverrideList{})
}

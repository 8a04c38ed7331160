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

// Work is a set of resources for the agent of one member cluster to apply. It lives in
// the cluster's hub namespace, flotilla-member-<cluster>, and carries the labels
// placement.flotilla.io/placement-name and placement.flotilla.io/parent-binding.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories=flotilla
// +kubebuilder:printcolumn:name="APPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="AVAILABLE",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Work struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the resources to apply and how.
	// +required
	Spec WorkSpec `json:"spec"`

	// Status is the state of the resources on the member cluster, written by the agent.
	// +optional
	Status WorkStatus `json:"status,omitempty"`
}

// WorkSpec is the desired state of a Work.
type WorkSpec struct {
	// Workload is the resources to apply.
	// +optional
	Workload WorkloadTemplate `json:"workload,omitempty"`

	// ApplyStrategy is how the resources are applied; unset means the defaults of
	// ApplyStrategy.
	// +optional
	ApplyStrategy *ApplyStrategy `json:"applyStrategy,omitempty"`

	// DeleteStrategy is what happens to the applied resources when the Work is
	// deleted; unset means they are deleted.
	// +optional
	DeleteStrategy *DeleteStrategy `json:"deleteStrategy,omitempty"`

	// StatusFeedback asks the agent to report values of the applied objects, in
	// status.manifestConditions[].feedback; copied from the placement.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	StatusFeedback []StatusFeedbackRule `json:"statusFeedback,omitempty"`

	// AvailabilityRules tell the agent how to judge the availability of kinds;
	// copied from the placement.
	// +kubebuilder:validation:MaxItems=50
	// +optional
	AvailabilityRules []AvailabilityRule `json:"availabilityRules,omitempty"`

	// ReportBack Mirror asks the agent to report the status of every applied
	// object (status.manifestConditions[].reportedStatus); copied from the
	// placement.
	// +optional
	ReportBack ReportBackMode `json:"reportBack,omitempty"`

	// UpsyncSelectors select objects born on the member, in the namespaces the
	// Work places, for the agent to mirror to the hub; copied from the placement.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	UpsyncSelectors []UpsyncSelector `json:"upsyncSelectors,omitempty"`

	// Fencing, copied from a fenced placement (policy.fencing), tells the
	// agent to stop the Work's workloads when it is cut off from the hub for
	// longer than the lease.
	// +optional
	Fencing *FencingPolicy `json:"fencing,omitempty"`
}

// WorkloadTemplate is the resources of a Work.
type WorkloadTemplate struct {
	// Manifests are the resources, applied in order.
	// +optional
	Manifests []Manifest `json:"manifests,omitempty"`
}

// Manifest is a whole Kubernetes object to apply.
type Manifest struct {
	// RawExtension holds the object.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:EmbeddedResource
	runtime.RawExtension `json:",inline"`
}

// WorkStatus is the observed state of a Work.
type WorkStatus struct {
	// Conditions summarise the manifests: Applied and Available (DiffReported
	// instead of Applied when the apply strategy is ReportDiff).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ManifestConditions holds the state of each manifest.
	// +optional
	ManifestConditions []ManifestCondition `json:"manifestConditions,omitempty"`
}

// ManifestCondition is the state of one manifest of a Work.
type ManifestCondition struct {
	// Identifier identifies the manifest and the resource it became.
	// +required
	Identifier WorkResourceIdentifier `json:"identifier"`

	// Conditions describe the resource: Applied and Available.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// DiffDetails describes how the resource on the member cluster differs from the
	// manifest, when the apply strategy is ReportDiff or a take-over was refused.
	// +optional
	DiffDetails *DiffDetails `json:"diffDetails,omitempty"`

	// DriftDetails describes how the resource drifted on the member cluster, when it
	// is left drifted (whenToApply IfNotDrifted).
	// +optional
	DriftDetails *DriftDetails `json:"driftDetails,omitempty"`

	// DriftCorrections records the drifts of the resource the agent reverted
	// (whenToApply Always).
	// +optional
	DriftCorrections *DriftCorrections `json:"driftCorrections,omitempty"`

	// ReportedStatus is the status of the object on the member cluster, when the
	// Work's reportBack is Mirror; unset when larger than 16 KiB.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	ReportedStatus *runtime.RawExtension `json:"reportedStatus,omitempty"`

	// Feedback holds the values the Work's statusFeedback asks for.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Feedback []FeedbackValue `json:"feedback,omitempty"`
}

// WorkResourceIdentifier identifies a manifest of a Work and the resource it became.
type WorkResourceIdentifier struct {
	// Ordinal is the index of the manifest in spec.workload.manifests.
	// +required
	Ordinal int `json:"ordinal"`

	// Group is the API group of the resource; empty for the core group.
	// +optional
	Group string `json:"group,omitempty"`

	// Version is the API version of the resource.
	// +optional
	Version string `json:"version,omitempty"`

	// Kind is the kind of the resource.
	// +optional
	Kind string `json:"kind,omitempty"`

	// Resource is the plural resource name, such as deployments.
	// +optional
	Resource string `json:"resource,omitempty"`

	// Namespace is the namespace of the resource; empty for cluster-scoped resources.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name is the name of the resource.
	// +optional
	Name string `json:"name,omitempty"`
}

// DiffDetails describes how a resource on a member cluster differs from its manifest.
type DiffDetails struct {
	// ObservationTime is when the difference was last observed.
	// +optional
	ObservationTime *metav1.Time `json:"observationTime,omitempty"`

	// ObservedInMemberClusterGeneration is the generation of the resource on the member
	// cluster that was compared; unset if the resource does not exist there.
	// +optional
	ObservedInMemberClusterGeneration *int64 `json:"observedInMemberClusterGeneration,omitempty"`

	// ObservedDiffs are the differing fields. At most 100 are listed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	ObservedDiffs []PatchDetail `json:"observedDiffs,omitempty"`
}

// WorkList is a list of Works.
//
// +kubebuilder:object:root=true
type WorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Works.
	Items []Work `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Work{}, &WorkList{})
}

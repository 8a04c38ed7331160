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

// PlacementSpec is the desired state of a ClusterResourcePlacement or a
// ResourcePlacement: which resources to place, on which clusters, and how to roll
// them out.
//
// +kubebuilder:validation:XValidation:rule="(has(self.policy) && has(self.policy.placementType) ? self.policy.placementType : 'PickAll') == (has(oldSelf.policy) && has(oldSelf.policy.placementType) ? oldSelf.policy.placementType : 'PickAll')",message="placementType is immutable; create a new placement to change it",fieldPath=".policy.placementType"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.policy) || !has(oldSelf.policy.tolerations) || (has(self.policy) && has(self.policy.tolerations) && oldSelf.policy.tolerations.all(t, t in self.policy.tolerations))",message="existing tolerations cannot be changed or removed, only new ones added; create a new placement to change or remove a toleration",fieldPath=".policy.tolerations"
// +kubebuilder:validation:XValidation:rule="!has(self.stateHandOff) || size(self.stateHandOff) == 0 || (has(self.policy) && has(self.policy.placementType) && self.policy.placementType == 'PickN')",message="stateHandOff hands values from a cluster the placement leaves to the one the scheduler picks in its place, which only PickN placements do: set policy.placementType PickN",fieldPath=".stateHandOff"
// +kubebuilder:validation:XValidation:rule="!has(self.stateHandOff) || self.stateHandOff.all(h, has(self.statusFeedback) && self.statusFeedback.exists(f, f.kind == h.feedback.kind && (has(f.group) && size(f.group) > 0 ? f.group : 'core') == (has(h.feedback.group) && size(h.feedback.group) > 0 ? h.feedback.group : 'core') && f.jsonPaths.exists(p, p.name == h.feedback.jsonPathName)))",message="every stateHandOff rule must name, in feedback.jsonPathName, a jsonPaths entry of a statusFeedback rule of the same group and kind",fieldPath=".stateHandOff"
// +kubebuilder:validation:XValidation:rule="!has(self.reportBack) || (has(self.policy) && has(self.policy.placementType) && ((self.policy.placementType == 'PickFixed' && has(self.policy.clusterNames) && size(self.policy.clusterNames) == 1) || (self.policy.placementType == 'PickN' && has(self.policy.numberOfClusters) && self.policy.numberOfClusters == 1)))",message="reportBack Mirror needs a placement on exactly one cluster: placementType PickFixed with one clusterName, or PickN with numberOfClusters 1",fieldPath=".reportBack"
type PlacementSpec struct {
	// ResourceSelectors select the resources to place; a resource is placed if any
	// selector matches it. For a ClusterResourcePlacement they select cluster-scoped
	// resources, and selecting a Namespace brings every object in it. For a
	// ResourcePlacement they select objects in the placement's own namespace.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +required
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`

	// SchedulerName names the scheduler that places this placement. Empty means the
	// built-in scheduler; any other name leaves scheduling to an external scheduler,
	// which creates the bindings itself.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// Policy decides which member clusters the resources go to. When omitted, it
	// defaults to placementType PickAll: every eligible cluster.
	// +kubebuilder:default={}
	// +optional
	Policy *PlacementPolicy `json:"policy,omitempty"`

	// Strategy decides how changes are rolled out to the selected clusters, applied
	// there and removed from there.
	// +kubebuilder:default={}
	// +optional
	Strategy RolloutStrategy `json:"strategy,omitempty"`

	// StatusFeedback asks the agents to report values of the placed objects, per
	// cluster, in status.placementStatuses[].feedback.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	StatusFeedback []StatusFeedbackRule `json:"statusFeedback,omitempty"`

	// StateHandOff carries statusFeedback values from a cluster the placement
	// leaves to the cluster that replaces it: the hub keeps the last value each
	// rule names in status.handOff, freezes the values it knows onto every
	// binding it creates, and the overrides of that binding's cluster read them
	// as ${PLACEMENT-HANDOFF-<name>}. Only for PickN placements.
	// +kubebuilder:validation:MaxItems=10
	// +listType=map
	// +listMapKey=name
	// +optional
	StateHandOff []StateHandOffRule `json:"stateHandOff,omitempty"`

	// ReportBack Mirror copies the status of every placed object on the member
	// cluster onto the same object on the hub (kinds with a status subresource),
	// for a placement on exactly one cluster.
	// +optional
	ReportBack ReportBackMode `json:"reportBack,omitempty"`

	// AvailabilityRules tell the agents how to judge the availability of kinds they
	// cannot judge themselves (custom resources), or override how they judge one:
	// one CEL expression per kind.
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:XValidation:rule="self.all(r, self.exists_one(o, o.kind == r.kind && (has(o.group) ? o.group : '') == (has(r.group) ? r.group : '')))",message="at most one availability rule per kind"
	// +optional
	AvailabilityRules []AvailabilityRule `json:"availabilityRules,omitempty"`

	// UpsyncSelectors select objects born on member clusters, inside the
	// namespaces this placement places there, to mirror to the hub under the same
	// namespace and name, labelled placement.flotilla.io/upsynced-from: <cluster>.
	// An object is mirrored from one cluster only: the same object on a second
	// cluster is reported as a conflict (the Upsynced condition), not merged.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	UpsyncSelectors []UpsyncSelector `json:"upsyncSelectors,omitempty"`

	// RevisionHistoryLimit is how many old resource and scheduling policy snapshots
	// are kept, for inspection and rollback.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`
}

// ResourceSelector selects resources on the hub by group, version and kind, and
// optionally by name or by labels (not both). With neither, it selects every resource
// of that kind.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.name) && size(self.name) > 0 && has(self.labelSelector))",message="name and labelSelector are mutually exclusive"
// +kubebuilder:validation:XValidation:rule="!((!has(self.group) || size(self.group) == 0) && self.kind == 'Namespace' && has(self.name) && (self.name.startsWith('kube-') || self.name == 'flotilla-system' || self.name.startsWith('flotilla-member-')))",message="the namespace is reserved (kube-*, flotilla-system, flotilla-member-*) and is never placed"
type ResourceSelector struct {
	// Group is the API group of the resources; empty for the core group.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Group string `json:"group,omitempty"`

	// Version is the API version of the resources, such as v1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Version string `json:"version"`

	// Kind is the kind of the resources, such as Namespace or ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Kind string `json:"kind"`

	// Name selects the single resource with this name.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`

	// LabelSelector selects the resources whose labels match.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// PlacementStatus is the observed state of a ClusterResourcePlacement or a
// ResourcePlacement.
type PlacementStatus struct {
	// ObservedGeneration is the metadata.generation this status was computed
	// for. It is 0 until the hub first writes the status, so that tools reading
	// kstatus conventions (Flux, kubectl wait, cli-utils) see the object as in
	// progress, not current, before the hub has looked at it.
	// +kubebuilder:default=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// SelectedResources are the resources the placement currently selects.
	// +optional
	SelectedResources []ResourceIdentifier `json:"selectedResources,omitempty"`

	// ObservedResourceIndex is the index of the newest resource snapshot, that is the
	// revision of the selected resources being rolled out.
	// +optional
	ObservedResourceIndex string `json:"observedResourceIndex,omitempty"`

	// PlacementStatuses holds one entry per selected cluster, plus one without a
	// clusterName for every PickN slot that could not be filled.
	// +optional
	PlacementStatuses []PerClusterPlacementStatus `json:"placementStatuses,omitempty"`

	// HandOff holds, per spec.stateHandOff rule, the last value a cluster
	// reported for it. It outlives the cluster's binding: it is what a binding
	// created for a new cluster is given.
	// +kubebuilder:validation:MaxItems=10
	// +listType=map
	// +listMapKey=name
	// +optional
	HandOff []HandOffValue `json:"handOff,omitempty"`

	// RolloutAnalysis is the progress of spec.strategy.rollingUpdate.analysis:
	// the resource snapshot and the wave being judged, and the clusters moved to
	// it. Written by the rollout controller; absent without an analysis.
	// +optional
	RolloutAnalysis *RolloutAnalysisStatus `json:"rolloutAnalysis,omitempty"`

	// Conditions summarise the placement over all its clusters. Their types are the
	// per-cluster types with a ClusterResourcePlacement (or ResourcePlacement) prefix,
	// such as ClusterResourcePlacementScheduled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PerClusterPlacementStatus is the state of a placement on one cluster.
type PerClusterPlacementStatus struct {
	// ClusterName is the member cluster. It is empty for a PickN slot that the
	// scheduler could not fill; the Scheduled condition then says why.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`

	// ObservedResourceIndex is the index of the resource snapshot rolled out to the
	// cluster.
	// +optional
	ObservedResourceIndex string `json:"observedResourceIndex,omitempty"`

	// ApplicableResourceOverrides are the ResourceOverrides applied to the resources
	// on this cluster.
	// +optional
	ApplicableResourceOverrides []NamespacedName `json:"applicableResourceOverrides,omitempty"`

	// ApplicableClusterResourceOverrides are the names of the ClusterResourceOverrides
	// applied to the resources on this cluster.
	// +optional
	ApplicableClusterResourceOverrides []string `json:"applicableClusterResourceOverrides,omitempty"`

	// FailedPlacements are the resources that failed to apply or are not available
	// on the cluster. At most 100 are listed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	FailedPlacements []FailedResourcePlacement `json:"failedPlacements,omitempty"`

	// DiffedPlacements are the resources whose state on the cluster differs from the
	// hub, reported when the apply strategy is ReportDiff. At most 100 are listed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	DiffedPlacements []DiffedResourcePlacement `json:"diffedPlacements,omitempty"`

	// DriftedPlacements are the resources changed on the cluster, in fields the hub
	// manages, and left so because whenToApply is IfNotDrifted. At most 100 are
	// listed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	DriftedPlacements []DriftedResourcePlacement `json:"driftedPlacements,omitempty"`

	// Feedback holds the values that spec.statusFeedback asks for, per resource.
	// At most 100 resources are listed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Feedback []ResourceFeedback `json:"feedback,omitempty"`

	// Conditions describe the placement on this cluster: Scheduled, RolloutStarted,
	// Overridden, WorkSynchronized, Applied and Available (DiffReported instead of
	// Applied when the apply strategy is ReportDiff).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ResourceIdentifier identifies a resource on the hub.
type ResourceIdentifier struct {
	// Group is the API group of the resource; empty for the core group.
	// +optional
	Group string `json:"group,omitempty"`

	// Version is the API version of the resource.
	// +optional
	Version string `json:"version,omitempty"`

	// Kind is the kind of the resource.
	// +required
	Kind string `json:"kind"`

	// Name is the name of the resource.
	// +required
	Name string `json:"name"`

	// Namespace is the namespace of the resource; empty for cluster-scoped resources.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// FailedResourcePlacement is a resource that failed to apply or is not available on a
// member cluster.
type FailedResourcePlacement struct {
	// ResourceIdentifier identifies the resource.
	ResourceIdentifier `json:",inline"`

	// Condition is the failed condition of the resource (Applied or Available).
	// +required
	Condition metav1.Condition `json:"condition"`
}

// DiffedResourcePlacement is a resource whose state on a member cluster differs from
// its state on the hub.
type DiffedResourcePlacement struct {
	// ResourceIdentifier identifies the resource.
	ResourceIdentifier `json:",inline"`

	// ObservationTime is when the difference was last observed.
	// +optional
	ObservationTime *metav1.Time `json:"observationTime,omitempty"`

	// ObservedDiffs are the differing fields. At most 100 are listed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	ObservedDiffs []PatchDetail `json:"observedDiffs,omitempty"`
}

// PatchDetail is one field that differs between the hub and a member cluster.
type PatchDetail struct {
	// Path is the JSON pointer of the field, such as /spec/replicas.
	// +required
	Path string `json:"path"`

	// ValueInMember is the field's value on the member cluster; empty if unset there.
	// +optional
	ValueInMember string `json:"valueInMember,omitempty"`

	// ValueInHub is the field's value on the hub; empty if unset there.
	// +optional
	ValueInHub string `json:"valueInHub,omitempty"`
}

// NamespacedName refers to a namespaced object.
type NamespacedName struct {
	// Name is the object's name.
	// +required
	Name string `json:"name"`

	// Namespace is the object's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// PlacementObj is implemented by ClusterResourcePlacement and ResourcePlacement, so
// that controllers can handle both alike.
//
// +kubebuilder:object:generate=false
type PlacementObj interface {
	metav1.Object
	runtime.Object

	// GetPlacementSpec returns the placement's spec, for reading or changing in place.
	GetPlacementSpec() *PlacementSpec
	// GetPlacementStatus returns the placement's status, for reading or changing in
	// place.
	GetPlacementStatus() *PlacementStatus
	// PlacementConditionType returns the placement-level condition type that
	// summarises the given per-cluster condition type, such as
	// ClusterResourcePlacementScheduled for Scheduled.
	PlacementConditionType(perCluster string) string
}

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

// This file holds what a placement asks the agents to watch and report beyond
// applying: drift (whenToApply), member-side values (statusFeedback) and custom
// availability rules, with the types that carry the answers back through Works and
// bindings to the placement's status.

// WhenToApply is what the agent does when an applied object drifts: someone changed,
// on the member cluster, a field the hub manages.
// +kubebuilder:validation:Enum=Always;IfNotDrifted
type WhenToApply string

const (
	// WhenToApplyAlways reverts drifts: the agent applies the hub's object again
	// within seconds and records the correction.
	WhenToApplyAlways WhenToApply = "Always"
	// WhenToApplyIfNotDrifted leaves drifted objects alone and reports them (Applied
	// False, reason FoundDrifts, with every drifted field in driftedPlacements) until
	// the member matches the hub again or the hub's object changes and is applied.
	WhenToApplyIfNotDrifted WhenToApply = "IfNotDrifted"
)

// StatusFeedbackRule asks the agents to report values of the placed objects of one
// kind, per cluster, in status.placementStatuses[].feedback.
type StatusFeedbackRule struct {
	// Group is the API group of the kind; empty for the core group.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Group string `json:"group,omitempty"`

	// Version, when set, is the only API version of the kind the rule reads,
	// such as v1: the rule applies to the objects the placement applies at that
	// version (the paths are written for one version's schema). Empty: every
	// version of the kind.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Version string `json:"version,omitempty"`

	// Kind is the kind, such as Deployment.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Kind string `json:"kind"`

	// JSONPaths are the values to report, each a kubectl-style JSONPath over the
	// object on the member cluster, such as .status.readyReplicas. A path that does
	// not parse is reported with the parser's message in place of its value.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +listType=map
	// +listMapKey=name
	// +required
	JSONPaths []JSONPathRule `json:"jsonPaths"`
}

// JSONPathRule names one value to report.
type JSONPathRule struct {
	// Name is the name the value is reported under.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?$`
	// +required
	Name string `json:"name"`

	// Path is the JSONPath of the value, such as .status.readyReplicas or
	// {.status.conditions[?(@.type=="Ready")].status}.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Path string `json:"path"`
}

// AvailabilityRule tells the agents how to judge the availability of one kind: a CEL
// expression over the object (self) that is true when the object is available, such
// as self.status.phase == "Ready". It replaces the agent's built-in judgement of that
// kind. An expression that does not compile, or does not return a bool, makes the
// objects of that kind Available=False with reason AvailabilityRuleInvalid and the
// compiler's message; one that fails at run time (a missing field) counts as not
// available yet, with the error as the message.
type AvailabilityRule struct {
	// Group is the API group of the kind; empty for the core group.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Group string `json:"group,omitempty"`

	// Kind is the kind, such as Database.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Kind string `json:"kind"`

	// Expression is the CEL expression, over self (the object as found on the member
	// cluster), that is true when the object is available.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +required
	Expression string `json:"expression"`
}

// DriftedResourcePlacement is a placed resource whose state on a member cluster was
// changed there, in fields the hub manages, and left so (whenToApply IfNotDrifted).
type DriftedResourcePlacement struct {
	// ResourceIdentifier identifies the resource.
	ResourceIdentifier `json:",inline"`

	// ObservationTime is when the drift was last observed.
	// +optional
	ObservationTime *metav1.Time `json:"observationTime,omitempty"`

	// FirstDriftedObservedTime is when the agent first saw the resource drifted.
	// +optional
	FirstDriftedObservedTime *metav1.Time `json:"firstDriftedObservedTime,omitempty"`

	// TargetClusterObservedGeneration is the generation of the resource on the
	// member cluster that was compared.
	// +optional
	TargetClusterObservedGeneration *int64 `json:"targetClusterObservedGeneration,omitempty"`

	// ObservedDrifts are the drifted fields. At most 100 are listed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	ObservedDrifts []PatchDetail `json:"observedDrifts,omitempty"`
}

// DriftDetails describes how a resource on a member cluster drifted from the state
// the agent applied.
type DriftDetails struct {
	// ObservationTime is when the drift was last observed.
	// +optional
	ObservationTime *metav1.Time `json:"observationTime,omitempty"`

	// FirstDriftedObservedTime is when the agent first saw the resource drifted.
	// +optional
	FirstDriftedObservedTime *metav1.Time `json:"firstDriftedObservedTime,omitempty"`

	// ObservedInMemberClusterGeneration is the generation of the resource on the
	// member cluster that was compared.
	// +optional
	ObservedInMemberClusterGeneration *int64 `json:"observedInMemberClusterGeneration,omitempty"`

	// ObservedDrifts are the drifted fields. At most 100 are listed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	ObservedDrifts []PatchDetail `json:"observedDrifts,omitempty"`
}

// DriftCorrections records the drifts the agent reverted on one resource
// (whenToApply Always).
type DriftCorrections struct {
	// Count is how many times the agent reverted a drift of the resource since it
	// started.
	// +required
	Count int64 `json:"count"`

	// LastCorrectionTime is when it last did.
	// +optional
	LastCorrectionTime *metav1.Time `json:"lastCorrectionTime,omitempty"`

	// LastDriftedPaths are the fields it reverted last time (at most 20).
	// +kubebuilder:validation:MaxItems=20
	// +optional
	LastDriftedPaths []string `json:"lastDriftedPaths,omitempty"`
}

// FeedbackValue is one value a statusFeedback rule asked for.
type FeedbackValue struct {
	// Name is the name of the JSONPath rule.
	// +required
	Name string `json:"name"`

	// Value is the value found, rendered as kubectl's -o jsonpath renders it; empty
	// when the path matched nothing.
	// +optional
	Value string `json:"value,omitempty"`

	// Error is why no value could be read, such as a path that does not parse.
	// +optional
	Error string `json:"error,omitempty"`
}

// ResourceFeedback holds the feedback values of one placed resource on one cluster.
type ResourceFeedback struct {
	// ResourceIdentifier identifies the resource.
	ResourceIdentifier `json:",inline"`

	// ObservationTime is when the values were read.
	// +optional
	ObservationTime *metav1.Time `json:"observationTime,omitempty"`

	// Values are the values, one per JSONPath rule.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Values []FeedbackValue `json:"values,omitempty"`
}

// DiffReported reports, for a placement whose apply strategy is ReportDiff (which
// uses it instead of Applied), whether the agent compared the resources with the
// member cluster. It is also a condition of Works.
const (
	// ConditionDiffReported is the type of the DiffReported condition.
	ConditionDiffReported = "DiffReported"

	// ReasonDiffReported (True): the resources were compared; the diffed placements
	// list those that differ (none when the member matches the hub).
	ReasonDiffReported = "DiffReported"
	// ReasonDiffReportFailed (False): some resources could not be compared; the
	// failed placements list them.
	ReasonDiffReportFailed = "DiffReportFailed"
	// ReasonDiffReportPending (Unknown): the agent has not compared the latest Work
	// yet.
	ReasonDiffReportPending = "DiffReportPending"
)

// More reasons of Applied and Available.
const (
	// ReasonFoundDrifts (Applied False): resources were changed on the member cluster
	// and whenToApply is IfNotDrifted, so they are left drifted; the drifted
	// placements list every drifted field.
	ReasonFoundDrifts = "FoundDrifts"
	// ReasonAvailabilityRuleInvalid (Available False): the placement's availability
	// rule for the resource's kind does not compile; the message says why.
	ReasonAvailabilityRuleInvalid = "AvailabilityRuleInvalid"
)

// Placement-level DiffReported condition types (ReportDiff placements).
const (
	ConditionClusterResourcePlacementDiffReported = clusterResourcePlacementConditionPrefix + ConditionDiffReported
	ConditionResourcePlacementDiffReported        = resourcePlacementConditionPrefix + ConditionDiffReported
)

// UpsyncSelector selects objects born on member clusters, inside the namespaces a
// placement places there, to mirror to the hub (kcp's upsync).
type UpsyncSelector struct {
	// Group is the API group of the kind; empty for the core group.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Group string `json:"group,omitempty"`

	// Version is the API version of the kind, such as v1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Version string `json:"version"`

	// Kind is the kind, such as ConfigMap. It must be namespaced.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Kind string `json:"kind"`

	// LabelSelector selects the objects by their labels; unset selects every
	// object of the kind.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// Labels and annotations of upsynced objects on the hub.
const (
	// LabelUpsyncedFrom holds, on an object mirrored to the hub, the member cluster
	// it was born on. Only that cluster's mirror may change or remove it.
	LabelUpsyncedFrom = "placement.flotilla.io/upsynced-from"
	// AnnotationUpsyncedWork holds, on an object mirrored to the hub, the Work
	// whose upsync selectors matched it.
	AnnotationUpsyncedWork = "placement.flotilla.io/upsynced-work"
)

// Upsynced reports, per cluster, whether the objects the placement's upsync
// selectors match on the cluster are mirrored to the hub. It is a condition of
// bindings, written by the hub as the agent mirrors objects.
const (
	// ConditionUpsynced is the type of the Upsynced condition.
	ConditionUpsynced = "Upsynced"

	// ReasonUpsynced (True): every matching object is mirrored.
	ReasonUpsynced = "Upsynced"
	// ReasonUpsyncConflict (False): an object of the same name exists on the hub
	// and is not mirrored from this cluster (it is the hub's, or another
	// cluster's mirror); it is left as it is.
	ReasonUpsyncConflict = "UpsyncConflict"
	// ReasonUpsyncNotServed (False): the member does not serve the kind of an
	// upsync selector, or the kind is cluster-scoped.
	ReasonUpsyncNotServed = "UpsyncNotServed"
	// ReasonUpsyncRefused (False): the hub refused an object the agent sent, such
	// as one outside the placed namespaces.
	ReasonUpsyncRefused = "UpsyncRefused"
)

// ReportBackMode is what a placement copies back from its member cluster onto the
// hub's objects.
// +kubebuilder:validation:Enum=Mirror
type ReportBackMode string

const (
	// ReportBackMirror copies the status of every placed object on the member
	// cluster onto the same object on the hub (its status subresource), for a
	// placement on exactly one cluster.
	ReportBackMirror ReportBackMode = "Mirror"
)

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

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Limits of a plan. A request over MaxRequestBytes is refused (413); a plan
// renders at most MaxManifestsPerCluster manifests of at most
// MaxManifestBytesPerCluster bytes in all for each cluster and says when it
// left some out (ClusterPlan.ManifestsTruncated).
const (
	// MaxRequestBytes bounds the body of a create.
	MaxRequestBytes = 3 << 20
	// MaxManifestsPerCluster bounds the manifests rendered per cluster.
	MaxManifestsPerCluster = 100
	// MaxManifestBytesPerCluster bounds their size per cluster.
	MaxManifestBytesPerCluster = 256 << 10
	// MaxPlannedClusters bounds the clusters whose manifests are rendered;
	// the decisions cover every cluster.
	MaxPlannedClusters = 50
)

// PlacementPlan asks the hub what a placement, or an edit of a placement or
// of an override, would do, without doing it. It is create-only and never
// stored: the answer is the created object's status.
// +kubebuilder:object:root=true
type PlacementPlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the proposed change.
	Spec PlacementPlanSpec `json:"spec"`

	// Status is the hub's answer.
	// +optional
	Status PlacementPlanStatus `json:"status,omitempty"`
}

// PlacementPlanSpec is a proposed change: a placement (new, or an edit of one
// that exists), and overrides (new, or edits of ones that exist). Exactly one
// placement is planned: the one given, or, with overrides only, the one
// Placement names.
type PlacementPlanSpec struct {
	// ClusterResourcePlacement is a proposed ClusterResourcePlacement, as it
	// would be applied (an existing one of the same name is replaced).
	// +optional
	ClusterResourcePlacement *placementv1beta1.ClusterResourcePlacement `json:"clusterResourcePlacement,omitempty"`

	// ResourcePlacement is a proposed ResourcePlacement, as it would be
	// applied (an existing one of the same namespace and name is replaced).
	// +optional
	ResourcePlacement *placementv1beta1.ResourcePlacement `json:"resourcePlacement,omitempty"`

	// Placement names an existing placement to plan when only overrides are
	// proposed: a ClusterResourcePlacement by name, a ResourcePlacement by
	// namespace and name.
	// +optional
	Placement *PlacementReference `json:"placement,omitempty"`

	// ClusterResourceOverrides are proposed ClusterResourceOverrides; each
	// replaces the latest snapshot of the one of the same name.
	// +optional
	ClusterResourceOverrides []placementv1beta1.ClusterResourceOverride `json:"clusterResourceOverrides,omitempty"`

	// ResourceOverrides are proposed ResourceOverrides; each replaces the
	// latest snapshot of the one of the same namespace and name.
	// +optional
	ResourceOverrides []placementv1beta1.ResourceOverride `json:"resourceOverrides,omitempty"`

	// StagedUpdateStrategyName names a ClusterStagedUpdateStrategy: the plan
	// then gives the stages a staged update run with it would take, instead of
	// the rolling update's waves.
	// +optional
	StagedUpdateStrategyName string `json:"stagedUpdateStrategyName,omitempty"`
}

// PlacementReference names a placement: a ClusterResourcePlacement when
// Namespace is empty, a ResourcePlacement otherwise.
type PlacementReference struct {
	Name string `json:"name"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// Decision is what a plan does with a cluster.
type Decision string

const (
	// DecisionSelected: the placement is not on the cluster and would be.
	DecisionSelected Decision = "Selected"
	// DecisionKept: the placement is on the cluster and would stay.
	DecisionKept Decision = "Kept"
	// DecisionDropped: the placement is on the cluster and would leave it.
	DecisionDropped Decision = "Dropped"
	// DecisionNotSelected: the placement is not on the cluster and would not be.
	DecisionNotSelected Decision = "NotSelected"
)

// Change is how a rendered manifest differs from what the cluster gets now.
type Change string

const (
	// ChangeCreate: the cluster gets no such object from the placement now.
	ChangeCreate Change = "Create"
	// ChangeUpdate: the cluster gets the object, with other content.
	ChangeUpdate Change = "Update"
	// ChangeUnchanged: the cluster gets exactly this now.
	ChangeUnchanged Change = "Unchanged"
	// ChangeDelete: the cluster gets the object now and would not.
	ChangeDelete Change = "Delete"
)

// PlacementPlanStatus is the hub's answer.
type PlacementPlanStatus struct {
	// Placement is the planned placement: "name" for a
	// ClusterResourcePlacement, "namespace/name" for a ResourcePlacement.
	Placement string `json:"placement,omitempty"`

	// Exists is true when the placement exists on the hub: Kept and Dropped
	// are then relative to where it is now.
	Exists bool `json:"exists,omitempty"`

	// Scheduled is the outcome of the scheduling cycle, as the placement's
	// Scheduled condition would say it.
	// +optional
	Scheduled *metav1.Condition `json:"scheduled,omitempty"`

	// Resources are the hub objects the placement would place, before
	// envelopes are unwrapped.
	// +optional
	Resources []placementv1beta1.ResourceIdentifier `json:"resources,omitempty"`

	// ResourcesFrom says where Resources come from: the placement's latest
	// resource snapshot (its resourceSelectors are unchanged) or a fresh
	// selection on the hub.
	ResourcesFrom string `json:"resourcesFrom,omitempty"`

	// Clusters holds a plan for every member cluster, and for every cluster a
	// PickFixed policy names that does not exist: the selected ones first, then
	// the dropped ones, then the others, each sorted by name.
	// +optional
	Clusters []ClusterPlan `json:"clusters,omitempty"`

	// Rollout is the order the change would reach the clusters in.
	// +optional
	Rollout *RolloutPlan `json:"rollout,omitempty"`

	// Warnings are what the user should know about the plan (a proposed
	// override that cannot be applied, clusters left out of rendering, ...).
	// +optional
	Warnings []string `json:"warnings,omitempty"`
}

// ClusterPlan is what the plan does on one cluster.
type ClusterPlan struct {
	// Name is the member cluster's name.
	Name string `json:"name"`

	// Decision is what the plan does with the cluster.
	Decision Decision `json:"decision"`

	// Reason says why, as the scheduler records it.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Scheduler is the scheduler's decision: the filters the cluster passed,
	// the one that rejected it, and its scores.
	// +optional
	Scheduler *placementv1beta1.ClusterDecision `json:"scheduler,omitempty"`

	// Overrides are the overrides that change what the cluster gets: snapshot
	// names, or "proposed:<name>" for a proposed one.
	// +optional
	Overrides []string `json:"overrides,omitempty"`

	// RenderError says why what the cluster would get cannot be rendered (an
	// envelope that cannot be read, an override that cannot be applied): the
	// cluster would keep what it has.
	// +optional
	RenderError string `json:"renderError,omitempty"`

	// Manifests are what the cluster would get, for a Selected or Kept
	// cluster, and the objects it would lose, for a Dropped one.
	// +optional
	Manifests []PlannedManifest `json:"manifests,omitempty"`

	// ManifestsTruncated is true when Manifests leaves some out (the limits
	// of a plan).
	// +optional
	ManifestsTruncated bool `json:"manifestsTruncated,omitempty"`

	// ComparedWith says what Change and Diff compare with: the Work the hub
	// holds for the cluster now (what it last sent the member).
	// +optional
	ComparedWith string `json:"comparedWith,omitempty"`

	// MemberUnread says why the objects on the member cluster itself were
	// not read (the member is not connected, the user may not reach it
	// through the API proxy, ...): PlannedManifest.Member is then empty.
	// +optional
	MemberUnread string `json:"memberUnread,omitempty"`
}

// MemberState is how a planned object compares with the object the member
// cluster holds now, read through the tunnel as the user.
type MemberState string

const (
	// MemberSame: the member's object has the planned values in every field
	// the plan sets.
	MemberSame MemberState = "Same"
	// MemberDiffers: some field the plan sets has another value there.
	MemberDiffers MemberState = "Differs"
	// MemberAbsent: the member has no such object.
	MemberAbsent MemberState = "Absent"
	// MemberUnknown: the object could not be read; MemberDiff says why.
	MemberUnknown MemberState = "Unknown"
)

// PlannedManifest is one object a cluster would get.
type PlannedManifest struct {
	placementv1beta1.ResourceIdentifier `json:",inline"`

	// Change is how it differs from what the cluster gets now.
	Change Change `json:"change"`

	// Object is the object as the cluster would get it; absent when
	// Forbidden.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Object *runtime.RawExtension `json:"object,omitempty"`

	// Diff is a unified diff, in YAML, from the object the cluster gets now
	// to this one (Update only; absent when Forbidden).
	// +optional
	Diff string `json:"diff,omitempty"`

	// Forbidden says why Object and Diff are left out: the user may not get
	// the hub object it comes from.
	// +optional
	Forbidden string `json:"forbidden,omitempty"`

	// Member is how the object compares with the one on the member cluster
	// now, in the fields the plan sets (fields the member's API server or
	// controllers set are not compared); empty when not read.
	// +optional
	Member MemberState `json:"member,omitempty"`

	// MemberDiff is a unified diff, in YAML, from the member's object (the
	// fields the plan sets) to the planned one (Differs), or why the object
	// could not be read (Unknown).
	// +optional
	MemberDiff string `json:"memberDiff,omitempty"`
}

// RolloutPlan is the order a change would reach the clusters in.
type RolloutPlan struct {
	// Strategy is RollingUpdate or External (a staged update run).
	Strategy placementv1beta1.RolloutStrategyType `json:"strategy"`

	// Waves are the rolling update's waves, assuming each cluster becomes
	// available as soon as it is updated: the clusters in a wave move at once,
	// and each wave waits for the one before.
	// +optional
	Waves []Wave `json:"waves,omitempty"`

	// Stages are the stages of a staged update run with the strategy
	// spec.stagedUpdateStrategyName names.
	// +optional
	Stages []Stage `json:"stages,omitempty"`

	// Message says what the plan assumes, or why it has no waves or stages.
	// +optional
	Message string `json:"message,omitempty"`
}

// Wave is the clusters a rolling update moves at once.
type Wave struct {
	// Bind are the clusters that get the placement.
	// +optional
	Bind []string `json:"bind,omitempty"`
	// Update are the clusters that move to the new resources.
	// +optional
	Update []string `json:"update,omitempty"`
	// Remove are the clusters the placement leaves.
	// +optional
	Remove []string `json:"remove,omitempty"`
}

// Stage is one stage of a staged update run.
type Stage struct {
	Name string `json:"name"`
	// Clusters are the stage's clusters in the order the run updates them.
	// +optional
	Clusters []string `json:"clusters,omitempty"`
	// AfterStageTasks are the tasks that gate the next stage.
	// +optional
	AfterStageTasks []placementv1beta1.AfterStageTaskType `json:"afterStageTasks,omitempty"`
}

func init() {
	SchemeBuilder.Register(&PlacementPlan{})
}

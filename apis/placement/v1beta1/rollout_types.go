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
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RolloutStrategyType is who rolls changes out to the selected clusters.
// +kubebuilder:validation:Enum=RollingUpdate;External
type RolloutStrategyType string

const (
	// RollingUpdateRolloutStrategyType rolls changes out a few clusters at a time,
	// within maxUnavailable and maxSurge.
	RollingUpdateRolloutStrategyType RolloutStrategyType = "RollingUpdate"
	// ExternalRolloutStrategyType leaves the rollout to an external controller, which
	// moves bindings to the new resource snapshot itself.
	ExternalRolloutStrategyType RolloutStrategyType = "External"
)

// RolloutStrategy is how a placement rolls changes out, applies resources on member
// clusters and removes them from there.
type RolloutStrategy struct {
	// Type is who rolls changes out.
	// +kubebuilder:default=RollingUpdate
	// +optional
	Type RolloutStrategyType `json:"type,omitempty"`

	// RollingUpdate configures the RollingUpdate type.
	// +kubebuilder:default={}
	// +optional
	RollingUpdate *RollingUpdateConfig `json:"rollingUpdate,omitempty"`

	// ApplyStrategy is how resources are applied on member clusters.
	// +kubebuilder:default={}
	// +optional
	ApplyStrategy *ApplyStrategy `json:"applyStrategy,omitempty"`

	// DeleteStrategy is what happens to placed resources when they are removed from a
	// cluster.
	// +kubebuilder:default={}
	// +optional
	DeleteStrategy *DeleteStrategy `json:"deleteStrategy,omitempty"`
}

// RollingUpdateConfig configures a rolling update: KubeFleet's semantics. Bindings
// move to a new resource snapshot in waves; at least (target - maxUnavailable)
// clusters stay available and at most (target + maxSurge) hold resources, where a
// cluster is unavailable from the moment it is updated until its resources are
// Available there.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.maxUnavailable) && has(self.maxSurge) && (type(self.maxUnavailable) == int ? self.maxUnavailable == 0 : self.maxUnavailable == '0%') && (type(self.maxSurge) == int ? self.maxSurge == 0 : self.maxSurge == '0%'))",message="maxUnavailable and maxSurge cannot both be 0: no cluster could ever be updated, added or removed"
// +kubebuilder:validation:XValidation:rule="!has(self.maxUnavailable) || (has(self.maxSurge) && (type(self.maxSurge) == int ? self.maxSurge == 0 : self.maxSurge == '0%')) || (type(self.maxUnavailable) == int ? self.maxUnavailable != 0 : self.maxUnavailable != '0%')",message="maxUnavailable 0 lets no cluster be updated in place (maxSurge only adds clusters): set maxUnavailable to at least 1"
type RollingUpdateConfig struct {
	// MaxUnavailable is how many of the target clusters may be unavailable during the
	// update: an absolute number or a percentage of the target number of clusters
	// (rounded down, but at least one).
	// +kubebuilder:default="25%"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? self.matches('^(100|[1-9]?[0-9])%$') : self >= 0",message="must be a non-negative integer or a percentage from 0% to 100%"
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MaxSurge is how many clusters beyond the target number may hold the resources
	// during the update: an absolute number or a percentage of the target number of
	// clusters (rounded up).
	// +kubebuilder:default="25%"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? self.matches('^(100|[1-9]?[0-9])%$') : self >= 0",message="must be a non-negative integer or a percentage from 0% to 100%"
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// UnavailablePeriodSeconds is how long to wait after applying resources whose
	// availability cannot be tracked before treating them as available. At most
	// 86400 (a day).
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +optional
	UnavailablePeriodSeconds *int32 `json:"unavailablePeriodSeconds,omitempty"`

	// MaintenanceWindows, when set, are the only times the rolling update binds a
	// newly scheduled cluster or updates a cluster to the latest resources; while
	// they are all closed those clusters wait (RolloutStarted=False,
	// OutsideMaintenanceWindow, saying when the next window opens). Removing
	// resources from a cluster the placement no longer has (after an eviction, a
	// failover or a policy change) never waits for a window. At most 8.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	MaintenanceWindows []MaintenanceWindow `json:"maintenanceWindows,omitempty"`

	// Analysis, when set, judges each wave of the rolling update, with the same
	// checks as a staged update run's Analysis task: once the clusters of a wave
	// run a new resource snapshot Available, no other cluster is bound or
	// updated until the analysis passes over that wave's clusters (the cel
	// checks' clusters, the prometheus checks' {{clusters}}). When it fails,
	// onFailure Pause holds the rollout where it is; Rollback returns every
	// cluster the rollout moved to the snapshot to the snapshot it ran before
	// (within maxUnavailable) and marks the snapshot failed
	// (AnnotationFailedAnalysis), so that the rollout does not take it again
	// until the resources change. status.rolloutAnalysis shows the progress, the
	// placement's RolloutAnalysis condition the verdict.
	// +optional
	Analysis *Analysis `json:"analysis,omitempty"`
}

// RolloutAnalysisStatus is the progress of a rolling update's analysis
// (spec.strategy.rollingUpdate.analysis) over the rollout of one resource
// snapshot.
type RolloutAnalysisStatus struct {
	// ResourceSnapshotName is the resource snapshot whose rollout is judged.
	// +required
	ResourceSnapshotName string `json:"resourceSnapshotName"`

	// Wave is the number of the wave being judged, or judged last: 1 for the
	// first wave of the snapshot, 0 before it.
	// +optional
	Wave int32 `json:"wave,omitempty"`

	// Clusters are the clusters of that wave: the clusters the rollout moved to
	// the snapshot together.
	// +optional
	Clusters []string `json:"clusters,omitempty"`

	// Analysis counts the rounds of that wave's analysis and keeps its last
	// failure (the check, the clusters it is false on and their values).
	// +optional
	Analysis *AnalysisStatus `json:"analysis,omitempty"`

	// Moved are the clusters the rollout moved to the snapshot, each with the
	// snapshot it ran before: what a rollback returns it to.
	// +listType=map
	// +listMapKey=clusterName
	// +optional
	Moved []MovedCluster `json:"moved,omitempty"`
}

// MovedCluster is a cluster a rolling update moved to a resource snapshot.
type MovedCluster struct {
	// ClusterName is the member cluster.
	// +required
	ClusterName string `json:"clusterName"`

	// PreviousResourceSnapshotName is the resource snapshot the cluster ran
	// before; empty when it ran none (the rollout bound it to its first).
	// +optional
	PreviousResourceSnapshotName string `json:"previousResourceSnapshotName,omitempty"`
}

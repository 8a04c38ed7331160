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

// ClusterSchedulingPolicySnapshot is an immutable copy of a ClusterResourcePlacement's
// policy. Every policy change makes a new one with the next policy index; the
// scheduler schedules against the latest and records in its status every cluster it
// considered, whether it was selected and why — the answer to "why is (or isn't) my
// placement on that cluster".
//
// Labels: placement.flotilla.io/placement-name, placement.flotilla.io/policy-index and
// placement.flotilla.io/is-latest-snapshot. Annotations:
// placement.flotilla.io/placement-generation and, for PickN,
// placement.flotilla.io/number-of-clusters.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=flotilla
// +kubebuilder:printcolumn:name="SCHEDULED",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterSchedulingPolicySnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the policy. It cannot be changed.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
	// +required
	Spec SchedulingPolicySnapshotSpec `json:"spec"`

	// Status is the scheduler's decisions for the policy.
	// +optional
	Status SchedulingPolicySnapshotStatus `json:"status,omitempty"`
}

// SchedulingPolicySnapshotSpec holds a placement's policy.
type SchedulingPolicySnapshotSpec struct {
	// Policy is a copy of the placement's policy.
	// +optional
	Policy *PlacementPolicy `json:"policy,omitempty"`

	// PolicyHash is the sha256 hash of the policy, to find out cheaply whether the
	// placement's policy changed.
	// +required
	PolicyHash []byte `json:"policyHash"`
}

// SchedulingPolicySnapshotStatus is the scheduler's decisions for a policy.
type SchedulingPolicySnapshotStatus struct {
	// ObservedPlacementGeneration is the generation of the placement that the
	// decisions were made for.
	// +optional
	ObservedPlacementGeneration int64 `json:"observedPlacementGeneration,omitempty"`

	// Conditions describe the scheduling: Scheduled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// TargetClusters holds the scheduler's decisions: every selected cluster first,
	// then up to 20 of those left out (the best ranked), with the reason.
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	TargetClusters []ClusterDecision `json:"targetClusters,omitempty"`
}

// ClusterDecision is the scheduler's decision about one cluster.
type ClusterDecision struct {
	// ClusterName is the member cluster.
	// +required
	ClusterName string `json:"clusterName"`

	// Selected is whether the cluster was picked.
	// +required
	Selected bool `json:"selected"`

	// ClusterScore is the cluster's score, when the policy ranks clusters (PickN).
	// +optional
	ClusterScore *ClusterScore `json:"clusterScore,omitempty"`

	// Reason says, in words, why the cluster was or was not picked.
	// +optional
	Reason string `json:"reason,omitempty"`

	// FilteredBy is the name of the scheduler plugin that left the cluster out, if one
	// did.
	// +optional
	FilteredBy string `json:"filteredBy,omitempty"`

	// PassedFilters names the scheduler plugins whose filter the cluster passed, in
	// the order they ran. A plugin the policy gave nothing to check is not listed;
	// for a cluster left out, FilteredBy names the plugin that rejected it, and the
	// filters after that one did not run.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	PassedFilters []string `json:"passedFilters,omitempty"`

	// Location is the Location the placement is kept in (policy.locationSelectors),
	// when the cluster is one of its instances.
	// +optional
	Location string `json:"location,omitempty"`
}

// ClusterScore is the score of a cluster; clusters are ranked by preference score
// first (clusterPreferences), then by topology spread score, then by affinity score.
type ClusterScore struct {
	// AffinityScore is the sum of the weights of the preferred affinity terms the
	// cluster meets.
	// +optional
	AffinityScore *int32 `json:"affinityScore,omitempty"`

	// TopologySpreadScore is how well picking the cluster keeps the topology spread
	// constraints; higher is better.
	// +optional
	TopologySpreadScore *int32 `json:"topologySpreadScore,omitempty"`

	// PreferenceScore is the rank of the cluster's group in the policy's
	// clusterPreferences: the number of groups for the first group, one less for
	// the next, and so on. It outweighs the other scores. Absent when the policy
	// has no clusterPreferences.
	// +optional
	PreferenceScore *int32 `json:"preferenceScore,omitempty"`
}

// GetPolicySnapshotSpec returns the snapshot's spec.
func (s *ClusterSchedulingPolicySnapshot) GetPolicySnapshotSpec() *SchedulingPolicySnapshotSpec {
	return &s.Spec
}

// GetPolicySnapshotStatus returns the snapshot's status.
func (s *ClusterSchedulingPolicySnapshot) GetPolicySnapshotStatus() *SchedulingPolicySnapshotStatus {
	return &s.Status
}

// PolicySnapshotObj is implemented by ClusterSchedulingPolicySnapshot and
// SchedulingPolicySnapshot.
//
// +kubebuilder:object:generate=false
type PolicySnapshotObj interface {
	metav1.Object
	runtime.Object

	// GetPolicySnapshotSpec returns the snapshot's spec.
	GetPolicySnapshotSpec() *SchedulingPolicySnapshotSpec
	// GetPolicySnapshotStatus returns the snapshot's status, for reading or changing in
	// place.
	GetPolicySnapshotStatus() *SchedulingPolicySnapshotStatus
}

// ClusterSchedulingPolicySnapshotList is a list of ClusterSchedulingPolicySnapshots.
//
// +kubebuilder:object:root=true
type ClusterSchedulingPolicySnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the snapshots.
	Items []ClusterSchedulingPolicySnapshot `json:"items"`
}

var _ PolicySnapshotObj = &ClusterSchedulingPolicySnapshot{}

func init() {
	SchemeBuilder.Register(&ClusterSchedulingPolicySnapshot{}, &ClusterSchedulingPolicySnapshotList{})
}

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

// ClusterResourceBinding binds a ClusterResourcePlacement to one member cluster: the
// scheduler creates one for every cluster it picks, and the hub turns it into Works in
// the cluster's namespace. It carries the label placement.flotilla.io/placement-name.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=flotilla
// +kubebuilder:printcolumn:name="TARGET",type=string,JSONPath=`.spec.targetCluster`,description="The member cluster"
// +kubebuilder:printcolumn:name="STATE",type=string,JSONPath=`.spec.state`
// +kubebuilder:printcolumn:name="WORK-SYNCHRONIZED",type=string,JSONPath=`.status.conditions[?(@.type=="WorkSynchronized")].status`
// +kubebuilder:printcolumn:name="APPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="AVAILABLE",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="RESOURCE-SNAPSHOT",type=string,JSONPath=`.spec.resourceSnapshotName`,priority=1,description="The resource snapshot placed on the cluster"
// +kubebuilder:printcolumn:name="POLICY-SNAPSHOT",type=string,JSONPath=`.spec.schedulingPolicySnapshotName`,priority=1,description="The scheduling policy snapshot under which the scheduler last picked or kept the cluster"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the binding's target and the resources to place there.
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// Status is the state of the resources on the target cluster.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// BindingState is the lifecycle state of a binding.
// +kubebuilder:validation:Enum=Scheduled;Bound;Unscheduled
type BindingState string

const (
	// BindingStateScheduled: the scheduler picked the cluster; the rollout has not yet
	// started placing resources there.
	BindingStateScheduled BindingState = "Scheduled"
	// BindingStateBound: resources are being placed on, or are on, the cluster.
	BindingStateBound BindingState = "Bound"
	// BindingStateUnscheduled: the cluster is no longer picked; the resources are
	// removed from it (as the delete strategy says) and the binding is then deleted.
	BindingStateUnscheduled BindingState = "Unscheduled"
)

// ResourceBindingSpec is the desired state of a ClusterResourceBinding or a
// ResourceBinding.
type ResourceBindingSpec struct {
	// State is the lifecycle state of the binding.
	// +required
	State BindingState `json:"state"`

	// TargetCluster is the member cluster the resources go to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	TargetCluster string `json:"targetCluster"`

	// ResourceSnapshotName is the name of the resource snapshot (the first of its
	// set) to place on the cluster. The rollout moves it to newer snapshots.
	// +optional
	ResourceSnapshotName string `json:"resourceSnapshotName,omitempty"`

	// SchedulingPolicySnapshotName is the scheduling policy snapshot under which
	// the scheduler last picked or kept the cluster: it moves to the newest
	// snapshot each time the scheduler confirms the decision under a changed
	// policy. A record for people and tools (`kubectl get ... -o wide` shows it);
	// the scheduler writes it and nothing else acts on it.
	// +optional
	SchedulingPolicySnapshotName string `json:"schedulingPolicySnapshotName,omitempty"`

	// ClusterDecision is the scheduler's decision for the cluster.
	// +optional
	ClusterDecision ClusterDecision `json:"clusterDecision,omitempty"`

	// ResourceOverrideSnapshots are the ResourceOverrides applied to the resources on
	// the cluster.
	// +optional
	ResourceOverrideSnapshots []NamespacedName `json:"resourceOverrideSnapshots,omitempty"`

	// ClusterResourceOverrideSnapshots are the names of the ClusterResourceOverrides
	// applied to the resources on the cluster.
	// +optional
	ClusterResourceOverrideSnapshots []string `json:"clusterResourceOverrideSnapshots,omitempty"`

	// ApplyStrategy is how the resources are applied on the cluster, copied from the
	// placement.
	// +optional
	ApplyStrategy *ApplyStrategy `json:"applyStrategy,omitempty"`

	// HandOff are the placement's state hand-off values as the hub knew them
	// when it created the binding, one per stateHandOff rule (empty values
	// when no cluster had reported one). They never change afterwards, so the
	// copy on this cluster is not rewritten each time it reports a new value.
	// The cluster's overrides read them as ${PLACEMENT-HANDOFF-<name>}.
	// +kubebuilder:validation:MaxItems=10
	// +listType=map
	// +listMapKey=name
	// +optional
	HandOff []HandOffValue `json:"handOff,omitempty"`
}

// ResourceBindingStatus is the observed state of a ClusterResourceBinding or a
// ResourceBinding.
type ResourceBindingStatus struct {
	// FailedPlacements are the resources that failed to apply or are not available on
	// the cluster. At most 100 are listed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	FailedPlacements []FailedResourcePlacement `json:"failedPlacements,omitempty"`

	// DiffedPlacements are the resources whose state on the cluster differs from the
	// hub, reported when the apply strategy is ReportDiff. At most 100 are listed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	DiffedPlacements []DiffedResourcePlacement `json:"diffedPlacements,omitempty"`

	// DriftedPlacements are the resources changed on the cluster and left so
	// (whenToApply IfNotDrifted). At most 100 are listed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	DriftedPlacements []DriftedResourcePlacement `json:"driftedPlacements,omitempty"`

	// Feedback holds the values the placement's statusFeedback asks for, per
	// resource. At most 100 resources are listed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Feedback []ResourceFeedback `json:"feedback,omitempty"`

	// Conditions describe the binding: RolloutStarted, Overridden, WorkSynchronized,
	// Applied and Available.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GetBindingSpec returns the binding's spec.
func (b *ClusterResourceBinding) GetBindingSpec() *ResourceBindingSpec { return &b.Spec }

// GetBindingStatus returns the binding's status.
func (b *ClusterResourceBinding) GetBindingStatus() *ResourceBindingStatus { return &b.Status }

// BindingObj is implemented by ClusterResourceBinding and ResourceBinding.
//
// +kubebuilder:object:generate=false
type BindingObj interface {
	metav1.Object
	runtime.Object

	// GetBindingSpec returns the binding's spec, for reading or changing in place.
	GetBindingSpec() *ResourceBindingSpec
	// GetBindingStatus returns the binding's status, for reading or changing in place.
	GetBindingStatus() *ResourceBindingStatus
}

// ClusterResourceBindingList is a list of ClusterResourceBindings.
//
// +kubebuilder:object:root=true
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the bindings.
	Items []ClusterResourceBinding `json:"items"`
}

var _ BindingObj = &ClusterResourceBinding{}

func init() {
	SchemeBuilder.Register(&ClusterResourceBinding{}, &ClusterResourceBindingList{})
}

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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MemberCluster is a cluster that has joined, or is joining, the fleet. It is named
// after the cluster; the name must be a DNS label of at most 47 characters so that the
// cluster's hub namespace, flotilla-member-<name>, is a valid namespace name.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=mc,categories=flotilla
// +kubebuilder:printcolumn:name="JOINED",type=string,JSONPath=`.status.conditions[?(@.type=="Joined")].status`,description="Whether the cluster has joined the fleet"
// +kubebuilder:printcolumn:name="CONNECTED",type=string,JSONPath=`.status.conditions[?(@.type=="AgentConnected")].status`,description="Whether the agent holds a tunnel to the hub"
// +kubebuilder:printcolumn:name="HEALTHY",type=string,JSONPath=`.status.conditions[?(@.type=="Healthy")].status`,description="Whether the cluster's API server is healthy"
// +kubebuilder:printcolumn:name="NODES",type=string,JSONPath=`.status.properties.flotilla\.io/node-count.value`,description="Number of nodes reported by the agent"
// +kubebuilder:printcolumn:name="AVAILABLE-CPU",type=string,JSONPath=`.status.resourceUsage.available.cpu`,description="CPU available for new workloads"
// +kubebuilder:printcolumn:name="AVAILABLE-MEMORY",type=string,JSONPath=`.status.resourceUsage.available.memory`,description="Memory available for new workloads"
// +kubebuilder:printcolumn:name="LAST-RECORDED",type=date,JSONPath=`.status.lastHeartbeatTime`,description="The heartbeat the hub last recorded in status (on a connection, disconnection or change; a connected agent is live whatever its age)"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 47 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="name must be a DNS label (lower-case letters, digits and '-') of at most 47 characters, so that the namespace flotilla-member-<name> is valid"
type MemberCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the member cluster. Every field has a default, so
	// it may be omitted.
	// +kubebuilder:default={}
	// +optional
	Spec MemberClusterSpec `json:"spec,omitempty"`

	// Status is the observed state of the member cluster, written by the hub.
	// +optional
	// +kubebuilder:default={}
	Status MemberClusterStatus `json:"status,omitempty"`
}

// MemberClusterSpec is the desired state of a MemberCluster.
type MemberClusterSpec struct {
	// StrictMatchLabels, when true, makes the cluster eligible only for placements whose
	// cluster selectors explicitly match its labels: a placement without any label
	// selector (for example a plain PickAll) skips it. Clusters named by a PickFixed
	// placement are always eligible.
	// +kubebuilder:default=false
	// +optional
	StrictMatchLabels bool `json:"strictMatchLabels,omitempty"`

	// Taints repel placements that do not tolerate them. A taint is identified by its
	// key and effect. The hub adds and removes the automatic taints
	// cluster.flotilla.io/unreachable and cluster.flotilla.io/not-ready itself.
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Taints []Taint `json:"taints,omitempty"`

	// HeartbeatPeriodSeconds is how often the agent sends a heartbeat to the hub.
	// The hub considers the agent gone after several missed heartbeats.
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600
	// +optional
	HeartbeatPeriodSeconds int32 `json:"heartbeatPeriodSeconds,omitempty"`
}

// TaintEffect is what a taint does to placements that do not tolerate it.
// +kubebuilder:validation:Enum=NoSchedule;NoExecute
type TaintEffect string

const (
	// TaintEffectNoSchedule keeps new placements that do not tolerate the taint off the
	// cluster; resources already placed there stay.
	TaintEffectNoSchedule TaintEffect = "NoSchedule"

	// TaintEffectNoExecute also evicts placements that do not tolerate the taint from
	// the cluster.
	TaintEffectNoExecute TaintEffect = "NoExecute"
)

// Taint marks a member cluster so that only placements tolerating it are scheduled
// there.
type Taint struct {
	// Key is the taint key, a qualified name such as example.com/maintenance.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	// +required
	Key string `json:"key"`

	// Value is the taint value; it may be empty.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Value string `json:"value,omitempty"`

	// Effect is what the taint does to placements that do not tolerate it.
	// +required
	Effect TaintEffect `json:"effect"`

	// TimeAdded is when the taint was added. The hub sets it on the taints it adds.
	// +optional
	TimeAdded *metav1.Time `json:"timeAdded,omitempty"`
}

// MemberClusterStatus is the observed state of a MemberCluster.
type MemberClusterStatus struct {
	// ObservedGeneration is the metadata.generation this status was computed
	// for. It is 0 until the hub first writes the status, so that tools reading
	// kstatus conventions (Flux, kubectl wait, cli-utils) see the object as in
	// progress, not current, before the hub has looked at it.
	// +kubebuilder:default=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions describe the cluster's membership (Joined), the agent's connection to
	// the hub (AgentConnected) and the cluster's health (Healthy).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// AgentVersion is the version of the Flotilla agent running in the cluster.
	// +optional
	AgentVersion string `json:"agentVersion,omitempty"`

	// KubernetesVersion is the version of the cluster's API server, such as v1.37.1.
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// Provider is the cloud or distribution the cluster runs on, when the agent can
	// tell (for example aws, azure, gcp, kind or kwok).
	// +optional
	Provider string `json:"provider,omitempty"`

	// LastHeartbeatTime is the time of the heartbeat the hub last recorded in
	// this status: at a connection, a disconnection (the last heartbeat
	// received), or when health or a property changed beyond its threshold.
	// It is not refreshed while nothing changes, so its age says nothing about
	// a connected agent: while AgentConnected is True the hub replica named in
	// agentSession holds a live session (it ends one after heartbeatMisses
	// missed heartbeats) and renews its Lease, and the leader records the
	// members of a replica whose Lease expired as disconnected.
	// +optional
	LastHeartbeatTime *metav1.Time `json:"lastHeartbeatTime,omitempty"`

	// Properties are the named, non-resource properties the agent reports, such as
	// flotilla.io/node-count. Placements can select and sort clusters by them.
	// +optional
	Properties map[string]PropertyValue `json:"properties,omitempty"`

	// ResourceUsage is the cluster's compute capacity and how much of it is left.
	// +optional
	ResourceUsage ResourceUsage `json:"resourceUsage,omitempty"`

	// AgentSession describes the agent's current tunnel to the hub, if any.
	// +optional
	AgentSession *AgentSession `json:"agentSession,omitempty"`

	// Identity is the member certificate the hub accepts (identity_types.go).
	// +optional
	Identity *MemberIdentity `json:"identity,omitempty"`
}

// PropertyValue is the value of a cluster property.
type PropertyValue struct {
	// Value is the property value. Properties that placements compare (with Gt, Le and
	// so on) hold a Kubernetes quantity, such as "3" or "1500m".
	// +required
	Value string `json:"value"`

	// ObservationTime is when the hub recorded the value. The hub writes a
	// value again only when it changes beyond its threshold (counts and names:
	// any change; resource quantities: more than 5%), so while the agent is
	// connected the value is current within that threshold, whatever its age.
	// +optional
	ObservationTime *metav1.Time `json:"observationTime,omitempty"`
}

// ResourceUsage is the compute capacity of a member cluster, summed over its nodes.
type ResourceUsage struct {
	// Capacity is the total capacity of the cluster's nodes.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`

	// Allocatable is the part of the capacity that is available to pods.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`

	// Available is the allocatable amount not yet requested by running pods.
	// +optional
	Available corev1.ResourceList `json:"available,omitempty"`

	// ObservationTime is when the hub recorded the usage; it is written again
	// when a quantity moves by more than 5% (see Properties' ObservationTime).
	// +optional
	ObservationTime *metav1.Time `json:"observationTime,omitempty"`
}

// AgentSession describes the agent's tunnel to the hub.
type AgentSession struct {
	// HubReplica is the name of the hub replica (pod) that holds the agent's tunnel;
	// requests for the cluster are routed through it.
	// +optional
	HubReplica string `json:"hubReplica,omitempty"`

	// ConnectedSince is when the current tunnel was established.
	// +optional
	ConnectedSince *metav1.Time `json:"connectedSince,omitempty"`

	// Generation identifies the session: the time the replica accepted it, in
	// Unix nanoseconds, so a newer session has a larger generation. A replica
	// writes the member's connection status only while this names its own
	// session, so that a late write of a replica that lost the session cannot
	// overwrite the newer session's status.
	// +optional
	Generation int64 `json:"generation,omitempty"`
}

// MemberClusterList is a list of MemberClusters.
//
// +kubebuilder:object:root=true
type MemberClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the member clusters.
	Items []MemberCluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MemberCluster{}, &MemberClusterList{})
}

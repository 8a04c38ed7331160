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

// Namespaces on the hub.
const (
	// HubNamespace is the namespace the hub runs in and keeps its own state in.
	HubNamespace = "flotilla-system"

	// MemberNamespacePrefix prefixes the hub namespace of every member cluster; see
	// MemberNamespace.
	MemberNamespacePrefix = "flotilla-member-"
)

// MemberNamespace returns the hub namespace that belongs to the member cluster named
// cluster, where the Work destined for it is kept: flotilla-member-<cluster>.
func MemberNamespace(cluster string) string {
	return MemberNamespacePrefix + cluster
}

// Built-in labels that the hub keeps on every MemberCluster, so that placements can
// select clusters by them without anyone labelling the clusters by hand.
const (
	// LabelClusterName holds the MemberCluster's name.
	LabelClusterName = "cluster.flotilla.io/name"

	// LabelKubernetesVersion holds the member cluster's Kubernetes minor version, such
	// as "1.37".
	LabelKubernetesVersion = "cluster.flotilla.io/kubernetes-version"

	// LabelProvider holds the cloud or distribution the member cluster runs on, when the
	// agent can tell.
	LabelProvider = "cluster.flotilla.io/provider"
)

// Keys of the taints the hub adds to and removes from MemberClusters by itself. Each
// is added with both the NoSchedule and the NoExecute effect.
const (
	// TaintUnreachable is set while the hub receives no heartbeats from the agent.
	TaintUnreachable = "cluster.flotilla.io/unreachable"

	// TaintNotReady is set while the member cluster's API server is unhealthy.
	TaintNotReady = "cluster.flotilla.io/not-ready"
)

// Cordoning and draining: `hub cordon|drain|uncordon <cluster>`.
const (
	// TaintCordoned (effect NoSchedule) is set by `hub cordon` and `hub drain`, and
	// removed by `hub uncordon`: no new placement goes to the cluster, and the ones
	// already there stay (unless drained).
	TaintCordoned = "cluster.flotilla.io/cordoned"

	// LabelDrained holds, on the ClusterResourcePlacementEvictions `hub drain`
	// creates, the name of the cluster being drained; `hub uncordon` deletes them.
	LabelDrained = "cluster.flotilla.io/drained"
)

// The hub joined as a member of its own fleet (`agent join --hub-as-member`), so that
// placements can place placements (compound placements).
const (
	// LabelHub, with the value "true", marks the MemberCluster that is the hub
	// itself. The join endpoint sets it for a member that joins with
	// --hub-as-member and refuses it as a user label on any other: placements
	// select the hub by it.
	LabelHub = "cluster.flotilla.io/hub"

	// TaintHub (value "true", effect NoSchedule) is set by the join endpoint on the
	// hub joined as a member, so that only placements that tolerate it land there:
	// a PickAll placement of an app must not put the app onto the hub by accident.
	// Remove it (kubectl edit mc hub) to make the hub an ordinary target.
	TaintHub = "cluster.flotilla.io/hub"
)

// Names of the properties the agent reports in MemberClusterStatus.Properties.
// Placements can compare and sort clusters by them (propertySelector, propertySorter).
const (
	// PropertyNodeCount is the number of nodes in the cluster.
	PropertyNodeCount = "flotilla.io/node-count"

	// PropertyKubernetesVersion is the cluster's Kubernetes version, such as v1.37.1.
	PropertyKubernetesVersion = "flotilla.io/kubernetes-version"

	// PropertyTotalCPU is the total CPU capacity of the cluster's nodes.
	PropertyTotalCPU = "resources.flotilla.io/total-cpu"
	// PropertyTotalMemory is the total memory capacity of the cluster's nodes.
	PropertyTotalMemory = "resources.flotilla.io/total-memory"

	// PropertyAllocatableCPU is the CPU of the cluster's nodes that pods may use.
	PropertyAllocatableCPU = "resources.flotilla.io/allocatable-cpu"
	// PropertyAllocatableMemory is the memory of the cluster's nodes that pods may use.
	PropertyAllocatableMemory = "resources.flotilla.io/allocatable-memory"

	// PropertyAvailableCPU is the allocatable CPU not yet requested by pods.
	PropertyAvailableCPU = "resources.flotilla.io/available-cpu"
	// PropertyAvailableMemory is the allocatable memory not yet requested by pods.
	PropertyAvailableMemory = "resources.flotilla.io/available-memory"
)

// Finalizers on cluster.flotilla.io objects.
const (
	// MemberClusterFinalizer keeps a MemberCluster until the hub has removed what it
	// placed on the cluster and deleted the cluster's hub namespace.
	MemberClusterFinalizer = "cluster.flotilla.io/member-cluster-cleanup"

	// AnnotationLeftCleanly marks a MemberCluster whose agent ran `agent leave`:
	// the member already removed everything the hub placed there, so the hub need
	// not wait for confirmations while it removes the member's records.
	AnnotationLeftCleanly = "cluster.flotilla.io/left-cleanly"
)

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

// Condition types and reasons of a MemberCluster. Each condition carries the
// observedGeneration of the MemberCluster it was computed for.

// Joined reports whether the cluster is a member of the fleet: its hub namespace exists
// and its agent has registered. It becomes False while the cluster leaves.
const (
	// ConditionJoined is the type of the Joined condition.
	ConditionJoined = "Joined"

	// ReasonJoined (True): the cluster is a member of the fleet.
	ReasonJoined = "Joined"
	// ReasonJoining (Unknown): the hub has accepted the cluster and is waiting for its
	// agent to register for the first time.
	ReasonJoining = "Joining"
	// ReasonLeaving (False): the MemberCluster is being deleted and the hub is cleaning
	// up what it placed there.
	ReasonLeaving = "Leaving"
	// ReasonLeft (False): the cluster has left the fleet.
	ReasonLeft = "Left"
)

// AgentConnected reports whether the cluster's agent holds a tunnel to the hub and
// sends heartbeats.
const (
	// ConditionAgentConnected is the type of the AgentConnected condition.
	ConditionAgentConnected = "AgentConnected"

	// ReasonAgentConnected (True): the agent holds a tunnel and its heartbeats arrive.
	ReasonAgentConnected = "AgentConnected"
	// ReasonAgentNeverConnected (Unknown): no agent has connected for this cluster yet.
	ReasonAgentNeverConnected = "AgentNeverConnected"
	// ReasonAgentDisconnected (False): the agent closed its tunnel.
	ReasonAgentDisconnected = "AgentDisconnected"
	// ReasonHeartbeatTimeout (False): the tunnel may still be open, but no heartbeat
	// arrived for several heartbeat periods. The hub taints the cluster
	// cluster.flotilla.io/unreachable.
	ReasonHeartbeatTimeout = "HeartbeatTimeout"
	// ReasonHubReplicaLost (False): the hub replica that held the tunnel stopped
	// renewing its Lease; the leader recorded the agent as disconnected until it
	// connects to another replica.
	ReasonHubReplicaLost = "HubReplicaLost"
	// ReasonVersionSkew (False): the hub refused the agent because their versions
	// are further apart than VERSIONING.md supports; the message names both
	// versions and which to upgrade.
	ReasonVersionSkew = "VersionSkew"
)

// Healthy reports whether the member cluster's API server is healthy, as seen by its
// agent.
const (
	// ConditionHealthy is the type of the Healthy condition.
	ConditionHealthy = "Healthy"

	// ReasonHealthy (True): the member API server reports ready.
	ReasonHealthy = "Healthy"
	// ReasonUnhealthy (False): the member API server is not ready. The hub taints the
	// cluster cluster.flotilla.io/not-ready.
	ReasonUnhealthy = "Unhealthy"
	// ReasonHealthUnknown (Unknown): the agent is not connected, so health cannot be
	// observed.
	ReasonHealthUnknown = "HealthUnknown"
)

// Condition type and reasons of a Location.
const (
	// ConditionLocationReady is the type of a Location's Ready condition: its
	// instance counts are current.
	ConditionLocationReady = "Ready"

	// ReasonInstancesCounted (True): status.instances and availableInstances are current.
	ReasonInstancesCounted = "InstancesCounted"
	// ReasonInvalidInstanceSelector (False): the instance selector cannot be evaluated.
	ReasonInvalidInstanceSelector = "InvalidInstanceSelector"
)

// Ready, Reconciling and Stalled are the conditions tools following the kstatus
// conventions read (Flux's health checks, kubectl wait, cli-utils; see
// docs/how-to/gitops.md), computed from Joined, AgentConnected and Healthy by
// every writer of the status, with the top-level status.observedGeneration.
// Their reasons are the reasons of the condition that decides them.
const (
	// ConditionReady is True when the cluster is joined, its agent connected
	// and its API server healthy; False or Unknown, with the deciding
	// condition's reason, otherwise.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the cluster is joining, leaving, or
	// waiting for its agent to connect or report; it is absent otherwise.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True while the cluster cannot take part in the fleet
	// until someone acts: its agent disconnected, stopped sending heartbeats
	// or was refused for version skew, or its API server is unhealthy. It is
	// absent otherwise.
	ConditionStalled = "Stalled"
)

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

// EvictionRequested is the failover controller's word, on a binding, on whether
// the placement must leave the binding's cluster because of a NoExecute taint it
// does not tolerate or because its resources there stayed unavailable too long
// (policy.unavailableEvictionSeconds). The scheduler reads it: True excludes the
// cluster (a PickN placement gets a replacement, and the binding stays until the
// replacement is available or the eviction's graceful timeout passes); False
// explains why the placement stays despite such a taint. Absent means neither.
const (
	// ConditionEvictionRequested is the type of a binding's EvictionRequested condition.
	ConditionEvictionRequested = "EvictionRequested"

	// ReasonTaintNotTolerated (True): a NoExecute taint's toleration ran out.
	ReasonTaintNotTolerated = "TaintNotTolerated"
	// ReasonUnavailableTooLong (True): the resources were not available on a
	// healthy cluster for longer than policy.unavailableEvictionSeconds.
	ReasonUnavailableTooLong = "UnavailableTooLong"
	// ReasonKeptDespiteTaint (False): the cluster has a NoExecute taint the
	// placement does not tolerate, but it stays: PickFixed placements are never
	// moved, a PickAll placement has nowhere else to go from a merely unreachable
	// cluster, or evictions are paused while most of the fleet is unreachable.
	ReasonKeptDespiteTaint = "KeptDespiteTaint"
)

// FailbackRequested is the failback controller's word, on a binding, that the
// placement moves from the binding's cluster back to a more preferred one
// (policy.failback). The scheduler reads it: True excludes the binding's
// cluster and every other cluster but the target, so the placement gets a copy
// on the target; the binding stays, with no time limit, until that copy is
// Available. Absent means no failback from this cluster.
const (
	// ConditionFailbackRequested is the type of a binding's FailbackRequested condition.
	ConditionFailbackRequested = "FailbackRequested"

	// ReasonFailingBack (True): the placement moves from this cluster to the
	// cluster the message names.
	ReasonFailingBack = "FailingBack"
)

// Failback is the placement-level condition (ClusterResourcePlacementFailback,
// ResourcePlacementFailback) of a placement with policy.failback: whether it is
// moving back to a more preferred cluster, waiting to, or held back. The
// failback controller writes it; it is absent without policy.failback.
const (
	// ConditionFailback is the per-kind suffix of the Failback condition type.
	ConditionFailback = "Failback"

	// ReasonFailbackInProgress (True): the placement is moving back; the new
	// copy is not Available yet or the old one not removed yet.
	ReasonFailbackInProgress = "FailbackInProgress"
	// ReasonFailbackWaiting (False): a more preferred cluster is eligible but
	// still in its stabilization window, or failback.maxConcurrent placements
	// are moving back across the fleet; the message names the cluster and
	// until when.
	ReasonFailbackWaiting = "FailbackWaiting"
	// ReasonFailbackHeldBack (False): the more preferred cluster failed
	// repeatedly and is held out for a back-off; the message says until when.
	ReasonFailbackHeldBack = "FailbackHeldBack"
	// ReasonFailbackNotNeeded (False): the placement is on the most preferred
	// clusters that are eligible now.
	ReasonFailbackNotNeeded = "FailbackNotNeeded"
)

// Fencing is the placement-level condition (ClusterResourcePlacementFencing,
// ResourcePlacementFencing) of a placement with policy.fencing: whether the
// hub holds the placement back from starting on another cluster because the
// copy it is leaving is not known stopped yet. The fencing controller writes
// it; it is absent without policy.fencing.
const (
	// ConditionFencing is the per-kind suffix of the Fencing condition type.
	ConditionFencing = "Fencing"

	// ReasonFencingWaiting (True): the placement leaves a cluster whose copy
	// is not known stopped; no other cluster gets it until that cluster's
	// agent confirms the removal or the fencing lease runs out. The message
	// names the cluster and until when.
	ReasonFencingWaiting = "FencingWaiting"
	// ReasonFencingClear (False): no copy the placement left is waiting to
	// stop; the placement may start wherever the scheduler picks.
	ReasonFencingClear = "FencingClear"
)

// Fenced is the agent's word, on a Work's status, that it stopped the Work's
// workloads itself because it was cut off from the hub for longer than the
// Work's fencing lease (spec.fencing).
const (
	// ConditionFenced is the type of a Work's Fenced condition.
	ConditionFenced = "Fenced"

	// ReasonFencedCutOff (True): the agent was cut off from the hub for longer
	// than the lease and stopped the workloads; the message says when and how.
	ReasonFencedCutOff = "CutOffFromHub"
)

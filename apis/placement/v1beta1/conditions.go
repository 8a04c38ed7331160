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

// Condition types and reasons of the placement.flotilla.io kinds. Every condition
// carries the observedGeneration of the object it was computed for.
//
// Placements, bindings and Works share the per-cluster condition types below. A
// placement reports them once per cluster (status.placementStatuses[].conditions) and
// once summarised over all its clusters (status.conditions), where each type gets the
// placement kind as a prefix: Scheduled becomes ClusterResourcePlacementScheduled on a
// ClusterResourcePlacement and ResourcePlacementScheduled on a ResourcePlacement; see
// ClusterResourcePlacementConditionType and ResourcePlacementConditionType. The
// per-cluster reasons are used for the summary as well; its message says for how many
// clusters.

// Scheduled reports whether the scheduler has placed the placement on its clusters.
// Per cluster it is True for a picked cluster and False for a PickN slot that
// could not be filled.
const (
	// ConditionScheduled is the type of the per-cluster Scheduled condition, and of
	// the Scheduled condition of scheduling policy snapshots.
	ConditionScheduled = "Scheduled"

	// ReasonScheduled (True, per cluster): the scheduler picked the cluster; the
	// message gives the cluster's scores.
	ReasonScheduled = "Scheduled"
	// ReasonMisplaced (False, per cluster): the cluster no longer satisfies the policy
	// but keeps the resources, because the policy's required terms are ignored during
	// execution.
	ReasonMisplaced = "Misplaced"
	// ReasonEvicting (False, per cluster): the placement is being evicted from the
	// cluster (a NoExecute taint ran out); its resources stay until the replacement
	// elsewhere is available or the graceful timeout passes.
	ReasonEvicting = "Evicting"
	// ReasonSchedulingPolicyFulfilled (True, summary): every cluster the policy asks
	// for was found.
	ReasonSchedulingPolicyFulfilled = "SchedulingPolicyFulfilled"
	// ReasonSchedulingPolicyUnfulfilled (False, summary): fewer clusters were found than
	// the policy asks for; the message says why the others were left out.
	ReasonSchedulingPolicyUnfulfilled = "SchedulingPolicyUnfulfilled"
	// ReasonScheduleFailed (False, summary): no cluster fits the policy; the message
	// says, per cluster, what filtered it out (affinity, taint, strict labels,
	// unhealthy, location).
	ReasonScheduleFailed = "ScheduleFailed"
	// ReasonInvalidResourceSelectors (False, summary): the placement's resource
	// selectors cannot be answered (an unknown kind, a namespaced kind selected
	// by a ClusterResourcePlacement, or a reserved namespace: kube-*,
	// flotilla-system or flotilla-member-*, which are never placed); the message
	// says which selector.
	ReasonInvalidResourceSelectors = "InvalidResourceSelectors"
	// ReasonSchedulePending (Unknown): the scheduler has not yet handled the latest
	// policy.
	ReasonSchedulePending = "SchedulePending"
	// ReasonWaitingForExternalScheduler (Unknown): spec.schedulerName names another
	// scheduler, which has not yet scheduled the latest policy.
	ReasonWaitingForExternalScheduler = "WaitingForExternalScheduler"
)

// RolloutStarted reports whether the rollout has started moving the clusters to the
// latest resources.
const (
	// ConditionRolloutStarted is the type of the RolloutStarted condition.
	ConditionRolloutStarted = "RolloutStarted"

	// ReasonRolloutStarted (True): the cluster is being moved to the latest resources.
	ReasonRolloutStarted = "RolloutStarted"
	// ReasonRolloutNotStartedYet (False): the rolling update holds the cluster back for now,
	// within maxUnavailable and maxSurge.
	ReasonRolloutNotStartedYet = "RolloutNotStartedYet"
	// ReasonRolloutControlledExternally (Unknown): the strategy type is External and the
	// external controller has not yet moved the cluster to the latest resources.
	ReasonRolloutControlledExternally = "RolloutControlledExternally"
	// ReasonRolloutPending (Unknown): the cluster is not scheduled yet.
	ReasonRolloutPending = "RolloutPending"
)

// Overridden reports whether the overrides that select the resources were applied to
// them for the cluster.
const (
	// ConditionOverridden is the type of the Overridden condition.
	ConditionOverridden = "Overridden"

	// ReasonOverridden (True): the matching overrides were applied; the message
	// names them.
	ReasonOverridden = "OverriddenSucceeded"
	// ReasonNoOverrideSpecified (True): no override selects the resources for the
	// cluster.
	ReasonNoOverrideSpecified = "NoOverrideSpecified"
	// ReasonOverrideFailed (False): an override could not be applied, for example
	// because its JSON patch does not fit the resource or names an unknown variable;
	// the message names the override, the rule, the path and the error. Nothing new
	// is sent to the cluster meanwhile.
	ReasonOverrideFailed = "OverriddenFailed"
)

// WorkSynchronized reports whether the cluster's Works hold the latest (overridden)
// resources.
const (
	// ConditionWorkSynchronized is the type of the WorkSynchronized condition.
	ConditionWorkSynchronized = "WorkSynchronized"

	// ReasonWorkSynchronized (True): the Works are up to date.
	ReasonWorkSynchronized = "WorkSynchronized"
	// ReasonWorkNotSynchronized (False): the Works could not be created or updated; the
	// message says why.
	ReasonWorkNotSynchronized = "WorkNotSynchronized"
	// ReasonWorkSyncPending (Unknown): the rollout has not reached the cluster yet.
	ReasonWorkSyncPending = "WorkSyncPending"
	// ReasonEnvelopeInvalid (False, of Overridden and WorkSynchronized): a manifest
	// in an envelope cannot be read, so neither can overrides apply inside it; the
	// message names the envelope and the key. The Works keep what they held.
	ReasonEnvelopeInvalid = "EnvelopeInvalid"
	// ReasonOverrideFailedNotSynchronized (False): an override could not be applied
	// (see Overridden); the Works keep what they held.
	ReasonOverrideFailedNotSynchronized = "OverrideFailed"
)

// Applied reports whether the resources were applied on the member cluster. It is
// also a condition of Works and of each of their manifests.
const (
	// ConditionApplied is the type of the Applied condition.
	ConditionApplied = "Applied"

	// ReasonApplied (True): every resource was applied.
	ReasonApplied = "Applied"
	// ReasonApplyFailed (False): some resources could not be applied; the failed
	// placements list them.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonNotTakenOver (False): a resource already exists on the member cluster and
	// the apply strategy's whenToTakeOver refused to take it over.
	ReasonNotTakenOver = "NotTakenOver"
	// ReasonWorkTooLarge (False): the Work is larger than the tunnel to the agent
	// carries (its frame limit), so it was not sent; the message gives both sizes.
	// Select fewer or smaller resources; a changed Work is sent again.
	ReasonWorkTooLarge = "WorkTooLarge"
	// ReasonApplyPending (Unknown): the agent has not yet applied the latest Works.
	ReasonApplyPending = "ApplyPending"
	// ReasonAgentDisconnected (Unknown): the cluster's agent is not connected
	// (its MemberCluster's AgentConnected is False), so the state on the cluster
	// is unknown; the message says since when and what the agent last reported.
	// Also used for Available, per cluster and in the placement's summary.
	ReasonAgentDisconnected = "AgentDisconnected"
)

// Available reports whether the applied resources are available (ready) on the member
// cluster. It is also a condition of Works and of each of their manifests.
const (
	// ConditionAvailable is the type of the Available condition.
	ConditionAvailable = "Available"

	// ReasonAvailable (True): every resource is available.
	ReasonAvailable = "Available"
	// ReasonNotTrackable (True): the resources are applied, but the availability of
	// some cannot be tracked; they are taken as available after the rolling update's
	// unavailablePeriodSeconds.
	ReasonNotTrackable = "NotTrackable"
	// ReasonNotAvailableYet (False): some resources are not available yet; the failed
	// placements list them.
	ReasonNotAvailableYet = "NotAvailableYet"
	// ReasonNotApplied (Unknown): the resource (or, for a Work, some resource) is
	// not applied, so its availability is not tracked.
	ReasonNotApplied = "NotApplied"
)

// Valid reports whether a ClusterResourcePlacementEviction can be carried out.
const (
	// ConditionEvictionValid is the type of the eviction's Valid condition.
	ConditionEvictionValid = "Valid"

	// ReasonEvictionValid (True): the placement is on the cluster and can be evicted.
	ReasonEvictionValid = "EvictionValid"
	// ReasonPlacementNotFound (False): the placement does not exist.
	ReasonPlacementNotFound = "PlacementNotFound"
	// ReasonPlacementDeleting (False): the placement is being deleted.
	ReasonPlacementDeleting = "PlacementDeleting"
	// ReasonPickFixedNotEvictable (False): the placement is PickFixed; change its
	// clusterNames instead.
	ReasonPickFixedNotEvictable = "PickFixedNotEvictable"
	// ReasonBindingNotFound (False): the placement is not on the cluster.
	ReasonBindingNotFound = "BindingNotFound"
)

// Executed reports whether a ClusterResourcePlacementEviction was carried out.
const (
	// ConditionEvictionExecuted is the type of the eviction's Executed condition.
	ConditionEvictionExecuted = "Executed"

	// ReasonEvicted (True): the placement's resources are being removed from the
	// cluster, and the scheduler will not pick it again for the placement until the
	// eviction is deleted.
	ReasonEvicted = "Evicted"
	// ReasonBlockedByDisruptionBudget (False): evicting now would break the placement's
	// disruption budget.
	ReasonBlockedByDisruptionBudget = "BlockedByDisruptionBudget"
)

// Prefixes that turn a per-cluster condition type into a placement-level one.
const (
	clusterResourcePlacementConditionPrefix = "ClusterResourcePlacement"
	resourcePlacementConditionPrefix        = "ResourcePlacement"
)

// Placement-level condition types of a ClusterResourcePlacement.
const (
	ConditionClusterResourcePlacementScheduled        = clusterResourcePlacementConditionPrefix + ConditionScheduled
	ConditionClusterResourcePlacementRolloutStarted   = clusterResourcePlacementConditionPrefix + ConditionRolloutStarted
	ConditionClusterResourcePlacementOverridden       = clusterResourcePlacementConditionPrefix + ConditionOverridden
	ConditionClusterResourcePlacementWorkSynchronized = clusterResourcePlacementConditionPrefix + ConditionWorkSynchronized
	ConditionClusterResourcePlacementApplied          = clusterResourcePlacementConditionPrefix + ConditionApplied
	ConditionClusterResourcePlacementAvailable        = clusterResourcePlacementConditionPrefix + ConditionAvailable
)

// Placement-level condition types of a ResourcePlacement.
const (
	ConditionResourcePlacementScheduled        = resourcePlacementConditionPrefix + ConditionScheduled
	ConditionResourcePlacementRolloutStarted   = resourcePlacementConditionPrefix + ConditionRolloutStarted
	ConditionResourcePlacementOverridden       = resourcePlacementConditionPrefix + ConditionOverridden
	ConditionResourcePlacementWorkSynchronized = resourcePlacementConditionPrefix + ConditionWorkSynchronized
	ConditionResourcePlacementApplied          = resourcePlacementConditionPrefix + ConditionApplied
	ConditionResourcePlacementAvailable        = resourcePlacementConditionPrefix + ConditionAvailable
)

// PerClusterConditionTypes returns the per-cluster condition types in the order a
// rollout goes through them: Scheduled, RolloutStarted, Overridden, WorkSynchronized,
// Applied, Available. Each is true only if the ones before it are.
func PerClusterConditionTypes() []string {
	return []string{
		ConditionScheduled,
		ConditionRolloutStarted,
		ConditionOverridden,
		ConditionWorkSynchronized,
		ConditionApplied,
		ConditionAvailable,
	}
}

// ClusterResourcePlacementConditionType returns the ClusterResourcePlacement-level
// condition type that summarises the per-cluster condition type perCluster, such as
// ClusterResourcePlacementScheduled for Scheduled. perCluster must be one of
// PerClusterConditionTypes.
func ClusterResourcePlacementConditionType(perCluster string) string {
	return clusterResourcePlacementConditionPrefix + perCluster
}

// ResourcePlacementConditionType returns the ResourcePlacement-level condition type
// that summarises the per-cluster condition type perCluster, such as
// ResourcePlacementScheduled for Scheduled. perCluster must be one of
// PerClusterConditionTypes.
func ResourcePlacementConditionType(perCluster string) string {
	return resourcePlacementConditionPrefix + perCluster
}

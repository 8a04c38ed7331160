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

package pipeline

import (
	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Field managers of the hub's other writers of pipeline objects (the
// controllers' own are next to ManagerPlacement). hub/app gives each its
// client with its manager, so a write without one cannot happen.
const (
	ManagerOverrideSnapshot = "flotilla-overridesnapshot"
	ManagerMembership       = "flotilla-membership"
	ManagerJoin             = "flotilla-join"
	ManagerTunnelServer     = "flotilla-tunnelserver"
	ManagerReplicaSweeper   = "flotilla-replicasweeper"
	ManagerWorkCleanup      = "flotilla-workcleanup"
	ManagerUpsync           = "flotilla-upsync"
)

// Writer is a field manager of the hub and what it is.
type Writer struct {
	// Manager is the field manager.
	Manager string
	// Component is the part of the hub that writes under it (Markdown).
	Component string
}

// Writers are the hub's field managers of pipeline objects, in the order the
// documentation lists them.
var Writers = []Writer{
	{ManagerPlacement, "the placement controller (`hub/placement`)"},
	{ManagerScheduler, "the scheduler (`hub/scheduler`)"},
	{ManagerFailover, "failover (`hub/failover`)"},
	{ManagerFailback, "failback (`hub/failover`, for `policy.failback`)"},
	{ManagerFencing, "fencing (`hub/failover`, for `policy.fencing`)"},
	{ManagerRollout, "the rollout controller (`hub/rollout`)"},
	{ManagerUpdateRun, "staged update runs (`hub/updaterun`), for `strategy.type: External`"},
	{ManagerWorkGenerator, "the work generator (`hub/workgen`)"},
	{ManagerOverrideSnapshot, "override snapshots (`hub/overrides`)"},
	{ManagerMembership, "membership (`hub/membership`)"},
	{ManagerJoin, "the join server (`hub/join`, in the tunnel server)"},
	{ManagerTunnelServer, "the tunnel server (`hub/tunnelserver`), from the agents' reports"},
	{ManagerReplicaSweeper, "the leader's sweep of lost hub replicas (`hub/replica`)"},
	{ManagerWorkCleanup, "the work-cleanup timeout (`hub/workcleanup`)"},
	{ManagerUpsync, "upsync (`hub/upsync`)"},
}

// WriterUser is the writer of the fields users own: any field manager that is
// not one of the hub's (kubectl, the hub CLI, a GitOps tool).
const WriterUser = "user"

// How is the way a writer writes a field.
type How string

// The ways of writing. Every write of a shared object is one of these: nobody
// updates a whole object another writer writes too without a resourceVersion.
const (
	// HowUser: whatever the user's tool does.
	HowUser How = "the user's edits"
	// HowCreate: set when the writer creates the object.
	HowCreate How = "create"
	// HowDelete: the writer deletes the object (Field is empty).
	HowDelete How = "delete"
	// HowApplyStatus: server-side apply of the status subresource under the
	// writer's field manager with only its own fields; conditions are keyed
	// by type, so it owns its entries and no others.
	HowApplyStatus How = "server-side apply on status"
	// HowMergePatch: a JSON merge patch of the fields the writer changed.
	HowMergePatch How = "JSON merge patch"
	// HowLockedMergePatch: a JSON merge patch that carries the object's
	// resourceVersion, so it fails with Conflict if anything changed since
	// the read (lists are replaced whole by a merge patch: a finalizer or a
	// taint another writer added meanwhile is never dropped).
	HowLockedMergePatch How = "JSON merge patch with resourceVersion"
	// HowStatePatch: a JSON patch whose first operation tests spec.state, so
	// it applies only while the state is still the one the writer read.
	HowStatePatch How = "JSON patch, conditional on spec.state"
	// HowLockedUpdate: an update (of the status subresource, for status)
	// with the resourceVersion read, retried on a fresh read on Conflict.
	HowLockedUpdate How = "update with resourceVersion"
)

// FieldWrite is one row of the ownership table: Writer writes Field, How.
type FieldWrite struct {
	// Field is a path in the object: names separated by dots; [key] is a
	// label or annotation key, a condition type, or a finalizer (e.g.
	// `status.conditions[Scheduled]`, `metadata.finalizers[...]`); "*" is
	// any one name or key. A path covers everything below it. Empty with
	// HowDelete: the object itself.
	Field string
	// Writer is a field manager, or WriterUser.
	Writer string
	// How the writer writes the field.
	How How
	// Note says when, or what the writer writes there (Markdown).
	Note string
}

// KindOwnership is the ownership table of one kind.
type KindOwnership struct {
	// Kind is the kind the rows are for.
	Kind string
	// Also names the kinds that have exactly the same writers (Markdown).
	Also string
	// Rows are the writes, grouped by field.
	Rows []FieldWrite
	// Note follows the table in the documentation (Markdown).
	Note string
}

// Ownership is who writes what in the pipeline's objects: the one source of
// the "Who writes what" section of docs/concepts/pipeline.md (generated by
// tools/docgen) and of the check of every pipeline object's managedFields
// (hub/app TestEveryWriterWritesOnlyItsFields). A controller writes no field
// its row does not give it.
var Ownership = []KindOwnership{
	{
		Kind: "ClusterResourcePlacement",
		Also: "and `ResourcePlacement`",
		Rows: []FieldWrite{
			{Field: "spec", Writer: WriterUser, How: HowUser},
			{Field: "metadata.labels", Writer: WriterUser, How: HowUser},
			{Field: "metadata.annotations", Writer: WriterUser, How: HowUser, Note: "including `" + placementv1beta1.AnnotationRebalance + "`"},
			{Field: "metadata.finalizers[" + placementv1beta1.PlacementCleanupFinalizer + "]", Writer: ManagerPlacement, How: HowLockedMergePatch,
				Note: "added first; removed once the placement's bindings are gone"},
			{Field: "status", Writer: ManagerPlacement, How: HowLockedMergePatch,
				Note: "all of it (conditions, `placementStatuses`, `selectedResources`, `observedResourceIndex`, `handOff`), on the status subresource: it summarises what the others record on snapshots and bindings, and keeps the last `stateHandOff` values past the bindings that reported them"},
			{Field: "metadata.annotations[" + placementv1beta1.AnnotationFailbackFailures + "]", Writer: ManagerFailback, How: HowLockedMergePatch,
				Note: "with `policy.failback`: when the placement was evicted from each cluster in the last hour"},
			{Field: "status.conditions[ClusterResourcePlacement" + placementv1beta1.ConditionFailback + "]", Writer: ManagerFailback, How: HowApplyStatus,
				Note: "with `policy.failback` (`ResourcePlacement" + placementv1beta1.ConditionFailback + "` on a ResourcePlacement)"},
			{Field: "status.conditions[ClusterResourcePlacement" + placementv1beta1.ConditionFencing + "]", Writer: ManagerFencing, How: HowApplyStatus,
				Note: "with `policy.fencing` (`ResourcePlacement" + placementv1beta1.ConditionFencing + "` on a ResourcePlacement)"},
			{Field: "status.rolloutAnalysis", Writer: ManagerRollout, How: HowApplyStatus,
				Note: "with `strategy.rollingUpdate.analysis`: the wave being judged, its rounds, and the clusters moved with the snapshot each ran before"},
			{Field: "status.conditions[ClusterResourcePlacement" + placementv1beta1.ConditionRolloutAnalysis + "]", Writer: ManagerRollout, How: HowApplyStatus,
				Note: "with `strategy.rollingUpdate.analysis` (`ResourcePlacement" + placementv1beta1.ConditionRolloutAnalysis + "` on a ResourcePlacement)"},
		},
	},
	{
		Kind: "ClusterSchedulingPolicySnapshot",
		Also: "and `SchedulingPolicySnapshot`",
		Rows: []FieldWrite{
			{Field: "spec", Writer: ManagerPlacement, How: HowCreate, Note: "the policy and its hash"},
			{Field: "metadata.ownerReferences", Writer: ManagerPlacement, How: HowCreate, Note: "the placement"},
			{Field: "metadata.labels", Writer: ManagerPlacement, How: HowCreate,
				Note: "`placement-name`, `placement-namespace`, `policy-index`, `is-latest-snapshot` (set to `false` later with a merge patch)"},
			{Field: "metadata.labels[" + placementv1beta1.LabelIsLatestSnapshot + "]", Writer: ManagerPlacement, How: HowMergePatch, Note: "`false` once a newer snapshot exists"},
			{Field: "metadata.annotations[" + placementv1beta1.AnnotationPlacementGeneration + "]", Writer: ManagerPlacement, How: HowMergePatch,
				Note: "at create, and again when the placement's generation moves with the same policy"},
			{Field: "metadata.annotations[" + placementv1beta1.AnnotationNumberOfClusters + "]", Writer: ManagerPlacement, How: HowCreate},
			{Field: "metadata.annotations[" + placementv1beta1.AnnotationRebalanced + "]", Writer: ManagerScheduler, How: HowMergePatch,
				Note: "the rebalance request the scheduler acted on"},
			{Field: "status", Writer: ManagerScheduler, How: HowMergePatch, Note: "condition `Scheduled`, `targetClusters` (status subresource)"},
			{Writer: ManagerPlacement, How: HowDelete, Note: "snapshots beyond the history limit"},
		},
	},
	{
		Kind: "ClusterResourceSnapshot",
		Also: "and `ResourceSnapshot`",
		Rows: []FieldWrite{
			{Field: "spec", Writer: ManagerPlacement, How: HowCreate, Note: "master and sub-index parts"},
			{Field: "metadata.ownerReferences", Writer: ManagerPlacement, How: HowCreate},
			{Field: "metadata.labels", Writer: ManagerPlacement, How: HowCreate},
			{Field: "metadata.annotations", Writer: ManagerPlacement, How: HowCreate},
			{Field: "metadata.labels[" + placementv1beta1.LabelIsLatestSnapshot + "]", Writer: ManagerPlacement, How: HowMergePatch, Note: "`false` once a newer snapshot exists"},
			{Field: "metadata.annotations[" + placementv1beta1.AnnotationFailedAnalysis + "]", Writer: ManagerRollout, How: HowMergePatch,
				Note: "when a wave of the rolling update fails its analysis with `onFailure: Rollback` (staged update runs mark it too)"},
			{Writer: ManagerPlacement, How: HowDelete, Note: "old indexes"},
		},
	},
	{
		Kind: "ClusterResourceBinding",
		Also: "and `ResourceBinding`",
		Rows: []FieldWrite{
			{Field: "metadata.labels", Writer: ManagerScheduler, How: HowCreate},
			{Field: "metadata.ownerReferences", Writer: ManagerScheduler, How: HowCreate},
			{Field: "spec.targetCluster", Writer: ManagerScheduler, How: HowCreate},
			{Field: "spec.schedulingPolicySnapshotName", Writer: ManagerScheduler, How: HowStatePatch},
			{Field: "spec.clusterDecision", Writer: ManagerScheduler, How: HowStatePatch},
			{Field: "spec.state", Writer: ManagerScheduler, How: HowStatePatch, Note: "`Scheduled` (at create, or re-selected) and `Unscheduled`"},
			{Field: "spec.handOff", Writer: ManagerScheduler, How: HowCreate, Note: "with `stateHandOff`: the placement's `status.handOff` values when the binding is created, never changed"},
			{Field: "spec.state", Writer: ManagerRollout, How: HowStatePatch, Note: "`Scheduled` → `Bound`"},
			{Field: "spec.state", Writer: ManagerUpdateRun, How: HowStatePatch, Note: "`Scheduled` → `Bound`, for `strategy.type: External`"},
			{Field: "spec.resourceSnapshotName", Writer: ManagerRollout, How: HowStatePatch},
			{Field: "spec.applyStrategy", Writer: ManagerRollout, How: HowStatePatch},
			{Field: "spec.clusterResourceOverrideSnapshots", Writer: ManagerRollout, How: HowStatePatch,
				Note: "the latest snapshots of the overrides that select a resource of the latest snapshot, for the placement or any, with a rule selecting the cluster; in the same patch as `spec.resourceSnapshotName`"},
			{Field: "spec.resourceOverrideSnapshots", Writer: ManagerRollout, How: HowStatePatch, Note: "as above"},
			{Field: "spec.resourceSnapshotName", Writer: ManagerUpdateRun, How: HowStatePatch, Note: "for External (when a run moves the cluster)"},
			{Field: "spec.applyStrategy", Writer: ManagerUpdateRun, How: HowStatePatch, Note: "for External"},
			{Field: "spec.clusterResourceOverrideSnapshots", Writer: ManagerUpdateRun, How: HowStatePatch, Note: "for External: those the run pinned for the cluster"},
			{Field: "spec.resourceOverrideSnapshots", Writer: ManagerUpdateRun, How: HowStatePatch, Note: "for External"},
			{Field: "metadata.finalizers[" + placementv1beta1.WorkCleanupFinalizer + "]", Writer: ManagerScheduler, How: HowCreate,
				Note: "the work generator's finalizer, added at create so that the work generator need not write the binding before its first Work"},
			{Field: "metadata.finalizers[" + placementv1beta1.WorkCleanupFinalizer + "]", Writer: ManagerWorkGenerator, How: HowLockedMergePatch,
				Note: "added before the first Work to a binding created without it (by an older hub); removed once the Work is gone"},
			{Field: "status.conditions[" + placementv1beta1.ConditionScheduled + "]", Writer: ManagerScheduler, How: HowApplyStatus, Note: "only once the cluster is misplaced or being evicted, not at create"},
			{Field: "status.conditions[" + placementv1beta1.ConditionEvictionRequested + "]", Writer: ManagerFailover, How: HowApplyStatus},
			{Field: "status.conditions[" + placementv1beta1.ConditionFailbackRequested + "]", Writer: ManagerFailback, How: HowApplyStatus},
			{Field: "status.conditions[" + placementv1beta1.ConditionRolloutStarted + "]", Writer: ManagerRollout, How: HowApplyStatus},
			{Field: "status.conditions[" + placementv1beta1.ConditionRolloutStarted + "]", Writer: ManagerUpdateRun, How: HowApplyStatus, Note: "for External"},
			{Field: "status.conditions[" + placementv1beta1.ConditionOverridden + "]", Writer: ManagerWorkGenerator, How: HowApplyStatus},
			{Field: "status.conditions[" + placementv1beta1.ConditionWorkSynchronized + "]", Writer: ManagerWorkGenerator, How: HowApplyStatus},
			{Field: "status.conditions[" + placementv1beta1.ConditionApplied + "]", Writer: ManagerWorkGenerator, How: HowApplyStatus},
			{Field: "status.conditions[" + placementv1beta1.ConditionAvailable + "]", Writer: ManagerWorkGenerator, How: HowApplyStatus},
			{Field: "status.failedPlacements", Writer: ManagerWorkGenerator, How: HowApplyStatus},
			{Field: "status.diffedPlacements", Writer: ManagerWorkGenerator, How: HowApplyStatus},
			{Field: "status.driftedPlacements", Writer: ManagerWorkGenerator, How: HowApplyStatus},
			{Field: "status.feedback", Writer: ManagerWorkGenerator, How: HowApplyStatus},
			{Writer: ManagerRollout, How: HowDelete, Note: "an `Unscheduled` binding, within maxUnavailable (preconditions: UID and resourceVersion)"},
			{Writer: ManagerUpdateRun, How: HowDelete, Note: "an `Unscheduled` binding, for External"},
			{Writer: ManagerPlacement, How: HowDelete, Note: "every binding of a deleted placement"},
			{Writer: ManagerMembership, How: HowDelete, Note: "every binding on a leaving member"},
		},
		Note: "The rollout controller leaves placements with `strategy.type: External` completely\n" +
			"alone: it does not bind, update or remove their bindings and does not write their\n" +
			"`RolloutStarted`. For those, the update-run controller (`ClusterStagedUpdateRun`)\n" +
			"writes the rows marked External, and the work generator keeps an Unscheduled\n" +
			"binding's Work until the binding is deleted.",
	},
	{
		Kind: "ClusterResourceOverride",
		Also: "and `ResourceOverride`",
		Rows: []FieldWrite{
			{Field: "spec", Writer: WriterUser, How: HowUser},
			{Field: "metadata.labels", Writer: WriterUser, How: HowUser},
			{Field: "metadata.annotations", Writer: WriterUser, How: HowUser},
			{Field: "metadata.finalizers[" + placementv1beta1.OverrideSnapshotCleanupFinalizer + "]", Writer: ManagerOverrideSnapshot, How: HowLockedMergePatch,
				Note: "removed once the override's snapshots are deleted"},
			{Field: "status", Writer: ManagerOverrideSnapshot, How: HowMergePatch,
				Note: "`observedGeneration` and `latestSnapshot` once the generation is snapshotted (kstatus)"},
		},
	},
	{
		Kind: "ClusterResourceOverrideSnapshot",
		Also: "and `ResourceOverrideSnapshot`",
		Rows: []FieldWrite{
			{Field: "spec", Writer: ManagerOverrideSnapshot, How: HowCreate, Note: "`<override>-<index>`: the override's spec, with its hash"},
			{Field: "metadata.labels", Writer: ManagerOverrideSnapshot, How: HowCreate, Note: "`override-name`, `override-index`, `is-latest-snapshot`"},
			{Field: "metadata.labels[" + placementv1beta1.LabelIsLatestSnapshot + "]", Writer: ManagerOverrideSnapshot, How: HowMergePatch, Note: "`false` once a newer snapshot exists"},
			{Writer: ManagerOverrideSnapshot, How: HowDelete, Note: "beyond the newest 10, or with the override"},
		},
		Note: "The work generator applies the snapshots a binding names, for the binding's\n" +
			"cluster (envelopes unwrapped first); it writes `Overridden` and, when an override\n" +
			"or an envelope fails, leaves the Work as it was.",
	},
	{
		Kind: "Work",
		Rows: []FieldWrite{
			{Field: "metadata.labels", Writer: ManagerWorkGenerator, How: HowMergePatch, Note: "at create, then a merge patch when they change: placement, `parent-binding`, scheduling group"},
			{Field: "metadata.ownerReferences", Writer: ManagerWorkGenerator, How: HowMergePatch, Note: "the ClusterResourceBinding (a ResourceBinding's Work names it by labels)"},
			{Field: "metadata.finalizers[" + placementv1beta1.AppliedResourcesCleanupFinalizer + "]", Writer: ManagerWorkGenerator, How: HowCreate, Note: "added at create"},
			{Field: "metadata.finalizers[" + placementv1beta1.AppliedResourcesCleanupFinalizer + "]", Writer: ManagerWorkGenerator, How: HowLockedMergePatch,
				Note: "added again (`pipeline.AddFinalizer`) to a Work that is not being deleted and lacks it"},
			{Field: "spec", Writer: ManagerWorkGenerator, How: HowMergePatch},
			{Field: "status", Writer: ManagerTunnelServer, How: HowLockedUpdate,
				Note: "the agent's report, only for the spec the agent reports on (its hash) — or `Applied=False WorkTooLarge` for a Work the tunnel cannot carry"},
			{Field: "metadata.finalizers[" + placementv1beta1.AppliedResourcesCleanupFinalizer + "]", Writer: ManagerTunnelServer, How: HowLockedMergePatch,
				Note: "removed when the agent confirms the Work's objects removed"},
			{Field: "metadata.finalizers[" + placementv1beta1.AppliedResourcesCleanupFinalizer + "]", Writer: ManagerWorkCleanup, How: HowLockedMergePatch,
				Note: "removed when the member did not confirm within `--work-cleanup-timeout` (not for a fenced Work, `spec.fencing`)"},
			{Field: "metadata.finalizers[" + placementv1beta1.AppliedResourcesCleanupFinalizer + "]", Writer: ManagerFencing, How: HowLockedMergePatch,
				Note: "removed from a fenced Work when its member was cut off for the fencing lease plus `--fencing-margin`"},
			{Field: "metadata.finalizers[" + placementv1beta1.AppliedResourcesCleanupFinalizer + "]", Writer: ManagerMembership, How: HowLockedMergePatch,
				Note: "removed for a member that left with `agent leave` (nothing will confirm)"},
			{Field: "metadata.finalizers[placement.flotilla.io/upsync-cleanup]", Writer: ManagerUpsync, How: HowLockedMergePatch,
				Note: "while the Work upsyncs; removed once its mirrors are deleted"},
			{Writer: ManagerWorkGenerator, How: HowDelete, Note: "when its binding is deleted"},
		},
		Note: "A member leaving does not delete its Work directly: membership deletes its\n" +
			"bindings (the work generator then deletes their Work) and, once they are gone,\n" +
			"the member's namespace.",
	},
	{
		Kind: "MemberCluster",
		Rows: append([]FieldWrite{
			{Field: "spec", Writer: WriterUser, How: HowUser, Note: "including user taints; `hub drain` adds and removes the cordon taint (merge patch with resourceVersion)"},
			{Field: "metadata.labels", Writer: WriterUser, How: HowUser},
			{Field: "metadata.labels", Writer: ManagerJoin, How: HowCreate, Note: "the MemberCluster is created by a join with the token's labels (a re-join merges them in)"},
			{Field: "spec", Writer: ManagerJoin, How: HowCreate, Note: "only the defaults the API server fills in when the join creates the MemberCluster"},
			{Field: "metadata.annotations[" + clusterv1beta1.AnnotationLeftCleanly + "]", Writer: ManagerJoin, How: HowMergePatch, Note: "`agent leave`, before the join server deletes the MemberCluster"},
			{Field: "metadata.labels[" + clusterv1beta1.LabelClusterName + "]", Writer: ManagerJoin, How: HowCreate, Note: "a join creates the MemberCluster with its built-in labels and membership's finalizer, which membership then need not write"},
			{Field: "metadata.finalizers[" + clusterv1beta1.MemberClusterFinalizer + "]", Writer: ManagerJoin, How: HowCreate},
			{Field: "metadata.labels[" + clusterv1beta1.LabelClusterName + "]", Writer: ManagerMembership, How: HowLockedMergePatch, Note: "built-in labels"},
			{Field: "metadata.labels[" + clusterv1beta1.LabelKubernetesVersion + "]", Writer: ManagerMembership, How: HowLockedMergePatch},
			{Field: "metadata.labels[" + clusterv1beta1.LabelProvider + "]", Writer: ManagerMembership, How: HowLockedMergePatch},
			{Field: "spec.taints", Writer: ManagerMembership, How: HowLockedMergePatch,
				Note: "adds and removes the automatic `unreachable` and `not-ready` taints, keeps the user's (and gives a user NoExecute taint its `timeAdded`), in the same patch as the labels and finalizer"},
			{Field: "metadata.finalizers[" + clusterv1beta1.MemberClusterFinalizer + "]", Writer: ManagerMembership, How: HowLockedMergePatch,
				Note: "added with the built-in labels and taints in one write (`pipeline.AddFinalizerWith`); removed once the member's bindings and namespace are gone"},
			{Field: "status.conditions[" + clusterv1beta1.ConditionJoined + "]", Writer: ManagerJoin, How: HowLockedUpdate, Note: "`True` at a join, with `status.identity`"},
			{Field: "status.identity", Writer: ManagerJoin, How: HowLockedUpdate, Note: "the member certificate the tunnel accepts (join, re-join, renewal)"},
			{Field: "status.resourceUsage", Writer: ManagerJoin, How: HowLockedUpdate, Note: "an empty `resourceUsage` (the field is not omitted when empty), with the first status write"},
			{Field: "status.resourceUsage", Writer: ManagerMembership, How: HowLockedUpdate, Note: "as above, when membership writes the status first (a MemberCluster created without a join)"},
			{Field: "status.conditions[" + clusterv1beta1.ConditionJoined + "]", Writer: ManagerMembership, How: HowLockedUpdate, Note: "`False` (`Leaving`) once deleted"},
			{Field: "status.conditions[" + clusterv1beta1.ConditionAgentConnected + "]", Writer: ManagerJoin, How: HowLockedUpdate, Note: "`Unknown` (`AgentNeverConnected`) with `Joined` when the member has no `AgentConnected` yet (a first join)"},
			{Field: "status.conditions[" + clusterv1beta1.ConditionHealthy + "]", Writer: ManagerJoin, How: HowLockedUpdate, Note: "`Unknown` with the above"},
			{Field: "status.conditions[" + clusterv1beta1.ConditionAgentConnected + "]", Writer: ManagerMembership, How: HowLockedUpdate, Note: "`Unknown` (`AgentNeverConnected`) while no session was ever recorded (a MemberCluster created without a join)"},
			{Field: "status.conditions[" + clusterv1beta1.ConditionHealthy + "]", Writer: ManagerMembership, How: HowLockedUpdate, Note: "`Unknown` with the above"},
			{Field: "status.conditions[" + clusterv1beta1.ConditionAgentConnected + "]", Writer: ManagerTunnelServer, How: HowLockedUpdate, Note: "session guard (below): `True` at connect, `False` at disconnect or for version skew"},
			{Field: "status.conditions[" + clusterv1beta1.ConditionHealthy + "]", Writer: ManagerTunnelServer, How: HowLockedUpdate, Note: "session guard: from the heartbeat's API server probe"},
			{Field: "status.agentSession", Writer: ManagerTunnelServer, How: HowLockedUpdate, Note: "session guard: the replica and generation of the session"},
			{Field: "status.agentVersion", Writer: ManagerTunnelServer, How: HowLockedUpdate},
			{Field: "status.lastHeartbeatTime", Writer: ManagerTunnelServer, How: HowLockedUpdate, Note: "only with a status change (never on a timer)"},
			{Field: "status.kubernetesVersion", Writer: ManagerTunnelServer, How: HowLockedUpdate},
			{Field: "status.provider", Writer: ManagerTunnelServer, How: HowLockedUpdate},
			{Field: "status.properties", Writer: ManagerTunnelServer, How: HowLockedUpdate, Note: "when a value moves beyond its threshold"},
			{Field: "status.resourceUsage", Writer: ManagerTunnelServer, How: HowLockedUpdate},
			{Field: "status.identity.previousCertificateSerial", Writer: ManagerTunnelServer, How: HowLockedUpdate, Note: "cleared when the agent connects with its new certificate"},
			{Field: "status.conditions[" + clusterv1beta1.ConditionAgentConnected + "]", Writer: ManagerReplicaSweeper, How: HowLockedUpdate,
				Note: "`False` (`HubReplicaLost`) when the replica holding the session stopped renewing its Lease, if the status still names that session"},
			{Field: "status.conditions[" + clusterv1beta1.ConditionHealthy + "]", Writer: ManagerReplicaSweeper, How: HowLockedUpdate, Note: "`Unknown` with the above"},
			{Field: "status.agentSession", Writer: ManagerReplicaSweeper, How: HowLockedUpdate, Note: "cleared with the above"},
			{Writer: ManagerJoin, How: HowDelete, Note: "`agent leave`"},
		}, kstatusRows(ManagerJoin, ManagerMembership, ManagerTunnelServer, ManagerReplicaSweeper)...),
		Note: "The session guard: a tunnel session's generation is its start time (Unix\n" +
			"nanoseconds). Every status write of the tunnel server reads the MemberCluster,\n" +
			"checks a guard on what it read and writes with that resourceVersion (a\n" +
			"Conflict reads and checks again), so check and write are atomic. A new session\n" +
			"is recorded only if `status.agentSession` is empty or names a generation not\n" +
			"newer than its own (otherwise it is ended); disconnection and heartbeat writes\n" +
			"happen only while `status.agentSession` names this very session (generation and\n" +
			"replica), and a session whose member's status names a newer one on another\n" +
			"replica is ended. A stale session or replica therefore never overwrites a newer\n" +
			"session's status. Generations of sessions on different replicas are compared\n" +
			"by their replicas' clocks. Work status is not guarded by session: a report is\n" +
			"written only for the spec it is about (its hash).",
	},
}

// OwnershipOf returns the table of kind (the cluster-scoped name: the
// namespaced kinds have the same rows), or nil.
func OwnershipOf(kind string) *KindOwnership {
	if k, ok := namespacedKinds[kind]; ok {
		kind = k
	}
	for i := range Ownership {
		if Ownership[i].Kind == kind {
			return &Ownership[i]
		}
	}
	return nil
}

// namespacedKinds maps the namespaced kinds to the cluster-scoped ones whose
// rows they share.
var namespacedKinds = map[string]string{
	"ResourcePlacement":        "ClusterResourcePlacement",
	"SchedulingPolicySnapshot": "ClusterSchedulingPolicySnapshot",
	"ResourceSnapshot":         "ClusterResourceSnapshot",
	"ResourceBinding":          "ClusterResourceBinding",
	"ResourceOverride":         "ClusterResourceOverride",
	"ResourceOverrideSnapshot": "ClusterResourceOverrideSnapshot",
}

// kstatusRows are the rows of the kstatus conditions (Ready, Reconciling,
// Stalled) and status.observedGeneration of a MemberCluster: every writer of its
// status sets them, from the other conditions, in the same write
// (hub/readiness). Stalled holds only while AgentConnected (for another reason
// than HubReplicaLost) or Healthy is False, which only the tunnel server
// writes; membership (or the join server, if a re-join writes first) writes it
// again with the new generation when a stalled member's spec changes. The
// sweeper's writes never make it hold: they only ever remove it, and a removal
// owns nothing.
func kstatusRows(writers ...string) []FieldWrite {
	var out []FieldWrite
	for _, w := range writers {
		for _, f := range []string{
			"status.conditions[" + clusterv1beta1.ConditionReady + "]",
			"status.conditions[" + clusterv1beta1.ConditionReconciling + "]",
			"status.conditions[" + clusterv1beta1.ConditionStalled + "]",
			"status.observedGeneration",
		} {
			row := FieldWrite{Field: f, Writer: w, How: HowLockedUpdate, Note: "kstatus, computed from the other conditions with each status write"}
			if f == "status.conditions["+clusterv1beta1.ConditionStalled+"]" {
				switch w {
				case ManagerTunnelServer:
					row.Note = "kstatus, with each status write: only this writer's conditions make it hold (`AgentConnected` or `Healthy` `False`)"
				case ManagerMembership, ManagerJoin:
					row.Note = "kstatus: its status write after a change of a stalled member's spec writes it with the new generation"
				default:
					continue // the sweeper only removes it
				}
			}
			out = append(out, row)
		}
	}
	return out
}

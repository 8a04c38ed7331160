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

// Condition types and reasons of staged update runs, their stages, clusters and
// after-stage tasks, and of ClusterApprovalRequests. Every condition carries the
// observedGeneration of the run (or approval request) it was computed for.

// Initialized reports whether a run found its placement, strategy and resource
// snapshot and computed its stages. A run that is not initialized changes nothing
// on any cluster; it is tried again when what it lacks appears.
const (
	// ConditionUpdateRunInitialized is the type of a run's Initialized condition.
	ConditionUpdateRunInitialized = "Initialized"

	// ReasonUpdateRunInitialized (True): the stages and their clusters are in
	// status.stagesStatus.
	ReasonUpdateRunInitialized = "Initialized"
	// ReasonUpdateRunPlacementNotFound (False): spec.placementName names no
	// ClusterResourcePlacement.
	ReasonUpdateRunPlacementNotFound = "PlacementNotFound"
	// ReasonUpdateRunPlacementNotExternal (False): the placement's
	// spec.strategy.type is not External, so its own rollout moves it.
	ReasonUpdateRunPlacementNotExternal = "PlacementNotExternal"
	// ReasonUpdateRunStrategyNotFound (False): spec.stagedRolloutStrategyName names
	// no ClusterStagedUpdateStrategy.
	ReasonUpdateRunStrategyNotFound = "StrategyNotFound"
	// ReasonUpdateRunInvalidStrategy (False): the strategy cannot be used, for
	// example because a stage's labelSelector does not parse.
	ReasonUpdateRunInvalidStrategy = "InvalidStrategy"
	// ReasonUpdateRunResourceSnapshotNotFound (False): the placement has no
	// resource snapshot with spec.resourceSnapshotIndex; the message lists the
	// indexes it keeps.
	ReasonUpdateRunResourceSnapshotNotFound = "ResourceSnapshotNotFound"
	// ReasonUpdateRunWaitingForOtherRun (False): another run of the same placement
	// is in progress; this one is initialized when it succeeds, is stopped or is
	// deleted.
	ReasonUpdateRunWaitingForOtherRun = "WaitingForOtherRun"
	// ReasonUpdateRunResourceSnapshotFailed (False): the resource snapshot carries
	// AnnotationFailedAnalysis: an analysis failed on it and a run rolled it back.
	// A change of the placement's resources makes a new snapshot to run; removing
	// the annotation lets a run take this one again.
	ReasonUpdateRunResourceSnapshotFailed = "ResourceSnapshotFailed"
)

// Progressing reports whether a run is moving clusters now. It is False while the
// run waits for an after-stage task, is stopped, or is done.
const (
	// ConditionUpdateRunProgressing is the type of the Progressing condition of a
	// run and of a stage.
	ConditionUpdateRunProgressing = "Progressing"

	// ReasonUpdateRunProgressing (True): clusters of the current stage are being
	// updated; the message says which.
	ReasonUpdateRunProgressing = "Progressing"
	// ReasonUpdateRunWaiting (False): the stage's clusters are updated and the run
	// waits for its after-stage tasks; the message says for what.
	ReasonUpdateRunWaiting = "Waiting"
	// ReasonUpdateRunRollingBack (True): an analysis failed with onFailure
	// Rollback, and the clusters the run moved are moving back to the snapshots
	// they ran before; the message names the check and its values.
	ReasonUpdateRunRollingBack = "RollingBack"
	// ReasonUpdateRunAnalysisPaused (False): an analysis failed with onFailure
	// Pause, so the run starts no further stage; the message names the check and
	// its values. The clusters already moved keep the run's snapshot.
	ReasonUpdateRunAnalysisPaused = "AnalysisPaused"
	// ReasonUpdateRunStopped (False): spec.state is Stop.
	ReasonUpdateRunStopped = "Stopped"
	// ReasonUpdateRunFinished (False): the run (or stage) has succeeded or failed.
	ReasonUpdateRunFinished = "Finished"
)

// Succeeded reports whether a run (or a stage, or a cluster) is done. It is absent
// until then.
const (
	// ConditionUpdateRunSucceeded is the type of the Succeeded condition of a run,
	// a stage and a cluster.
	ConditionUpdateRunSucceeded = "Succeeded"

	// ReasonUpdateRunSucceeded (True): every cluster runs the snapshot and its
	// resources are Available, and every after-stage task completed.
	ReasonUpdateRunSucceeded = "Succeeded"
	// ReasonUpdateRunFailed (False, run and stage): the run cannot go on; the
	// message says why (for example, its resource snapshot was deleted).
	ReasonUpdateRunFailed = "Failed"
	// ReasonUpdateRunRolledBack (False, run and stage): an analysis failed and the
	// run returned the clusters it moved to the snapshots they ran before; the
	// message names the check and its values.
	ReasonUpdateRunRolledBack = "RolledBack"
	// ReasonClusterUnscheduled (False, cluster): the placement no longer has the
	// cluster, so the run leaves it; this does not hold the stage.
	ReasonClusterUnscheduled = "ClusterUnscheduled"
)

// EventClusterJoinedRun is the reason of the Event a run records when it
// takes in a cluster that joined its placement during the run.
const EventClusterJoinedRun = "ClusterJoinedRun"

// EventAnalysisRetried is the reason of the Event a run records when a user's
// placement.flotilla.io/retry-analysis annotation restarts a failed analysis.
const EventAnalysisRetried = "AnalysisRetried"

// Started reports, per cluster, whether the run has moved the cluster's binding to
// the run's resource snapshot.
const (
	// ConditionClusterUpdatingStarted is the type of a cluster's Started condition.
	ConditionClusterUpdatingStarted = "Started"

	// ReasonClusterUpdatingStarted (True): the binding names the run's snapshot.
	ReasonClusterUpdatingStarted = "Started"
)

// RolledBack reports, per cluster, how a rollback returned it. It is absent
// unless the run rolls back.
const (
	// ConditionClusterRolledBack is the type of a cluster's RolledBack condition.
	ConditionClusterRolledBack = "RolledBack"

	// ReasonClusterRollingBack (False): the cluster's binding is moving back to the
	// snapshot it ran before the run.
	ReasonClusterRollingBack = "RollingBack"
	// ReasonClusterRolledBack (True): the cluster runs the snapshot it ran before
	// the run again, Available.
	ReasonClusterRolledBack = "RolledBack"
	// ReasonClusterNotRolledBack (False): the cluster stays as it is: it ran no
	// snapshot before the run, or that snapshot was deleted since, or it left the
	// placement; the message says which.
	ReasonClusterNotRolledBack = "NotRolledBack"
)

// Conditions of after-stage tasks.
const (
	// ConditionApprovalRequestCreated (True): the task's ClusterApprovalRequest
	// exists.
	ConditionApprovalRequestCreated = "ApprovalRequestCreated"
	// ConditionApprovalRequestApproved (True): the request was approved and the
	// run accepted it.
	ConditionApprovalRequestApproved = "ApprovalRequestApproved"
	// ConditionWaitTimeElapsed (True): a TimedWait task's waitTime has passed.
	ConditionWaitTimeElapsed = "WaitTimeElapsed"

	// ReasonApprovalRequestCreated (True): see ConditionApprovalRequestCreated.
	ReasonApprovalRequestCreated = "ApprovalRequestCreated"
	// ReasonApprovalRequestApproved (True): see ConditionApprovalRequestApproved.
	ReasonApprovalRequestApproved = "ApprovalRequestApproved"
	// ReasonWaitTimeElapsed (True): see ConditionWaitTimeElapsed.
	ReasonWaitTimeElapsed = "WaitTimeElapsed"
)

// AnalysisPassed reports the verdict of an Analysis task.
const (
	// ConditionAnalysisPassed is the type of an Analysis task's condition.
	ConditionAnalysisPassed = "AnalysisPassed"

	// ReasonAnalysisRunning (Unknown): rounds are running; the message counts
	// them and says when the next runs.
	ReasonAnalysisRunning = "AnalysisRunning"
	// ReasonAnalysisPassed (True): successCount rounds in a row passed.
	ReasonAnalysisPassed = "AnalysisPassed"
	// ReasonAnalysisFailed (False): failureLimit rounds failed; the message names
	// the check of the last failing round and its values.
	ReasonAnalysisFailed = "AnalysisFailed"
)

// Conditions of ClusterApprovalRequests.
const (
	// ConditionApprovalRequestApprovedByUser is the type of the Approved condition
	// a user sets to True (on the status subresource) to approve.
	ConditionApprovalRequestApprovedByUser = "Approved"
	// ConditionApprovalAccepted is the type of the condition the run sets to True
	// when it has seen the approval and goes on.
	ConditionApprovalAccepted = "ApprovalAccepted"

	// ReasonApprovalAccepted (True): see ConditionApprovalAccepted.
	ReasonApprovalAccepted = "ApprovalAccepted"
)

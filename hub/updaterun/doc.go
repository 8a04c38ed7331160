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

// Package updaterun carries out ClusterStagedUpdateRuns: it rolls one resource
// snapshot of a placement whose spec.strategy.type is External out to the
// placement's clusters, stage by stage, as a ClusterStagedUpdateStrategy says.
// With External, nothing reaches a cluster except through a run, the first
// rollout included; an older snapshot index rolls back.
//
// # A run, phase by phase
//
// Initialization resolves the placement (it must exist and be External), the
// strategy and the resource snapshot set with spec.resourceSnapshotIndex. When one
// is missing the run's Initialized condition is False with a reason
// (PlacementNotFound, PlacementNotExternal, StrategyNotFound,
// ResourceSnapshotNotFound, InvalidStrategy) and a message that says exactly what
// is missing; nothing is changed on any binding, and initialization is tried
// again when the missing object appears. A run also waits (WaitingForOtherRun)
// while another run of the same placement is in progress. Once initialized, the
// run keeps a copy of the strategy and divides the placement's current clusters
// (those with a Scheduled or Bound binding) into stages: each cluster goes to the
// first stage whose labelSelector matches it, ordered by the stage's
// sortingLabelKey and then by name. Clusters no stage matches are listed in
// status.unselectedClusters and left as they are. The run also pins, per
// cluster, the latest snapshots of the overrides that apply there then
// (resourceOverrideSnapshots and clusterResourceOverrideSnapshots of the
// cluster's status), as it pins the resource snapshot: an override edited during
// the run does not reach the clusters it updates; a later run rolls it out.
//
// The run then goes through the stages in order. Inside a stage, at most
// maxConcurrency clusters update at once: the run moves a cluster's binding to the
// run's snapshot (spec.state Bound, spec.resourceSnapshotName, spec.applyStrategy
// from the placement, and the override snapshots pinned for the cluster, less
// any deleted since) and sets the binding's RolloutStarted condition; the cluster
// succeeds when its binding names the run's snapshot and its Available condition
// is True at the binding's current generation. When every cluster of the stage has
// succeeded, the stage's after-stage tasks run: an Approval task creates a
// ClusterApprovalRequest (named <run>-<stage>, labelled
// placement.flotilla.io/update-run and placement.flotilla.io/stage) and waits until
// a user sets its Approved condition to True, which the run answers with
// ApprovalAccepted=True (a request of that name the run does not own, say one
// left by an earlier run of the same name, is replaced, never taken as approval);
// a TimedWait task waits for its waitTime; an Analysis task runs its checks
// every interval — CEL over the stage's entries of the placement's
// status.placementStatuses, or PromQL queries to the hub's Prometheus with a CEL
// condition on the result (hub/analysis) — until it passes or fails
// (hub/analysis: JudgeRound is the rule, a round runs only once every entry shows
// the run's index Available). A failed
// analysis with onFailure Pause stops the run (Progressing=False,
// AnalysisPaused); with Rollback, the run moves every cluster it started back to
// the snapshot it ran at initialization (previousResourceSnapshotName, written
// before any cluster moves), from the failed stage back to the first, within
// each stage's maxConcurrency (rollback.go: planRollback), marks its resource
// snapshot with placement.flotilla.io/failed-analysis so that no run takes it
// again, and ends Succeeded=False, RolledBack. The run succeeds
// after the last stage. It fails only when it cannot go on: its placement was
// deleted or left External, or its resource snapshot was deleted.
//
// A stage with maintenanceWindows starts no cluster while they are all closed
// (windows.go; hub/window has the rules): clusters already moving finish, the
// others wait, and once none is moving the stage's and the run's Progressing is
// False, OutsideMaintenanceWindow, with when the next window opens; the run
// looks again then, and is never failed for waiting. The stage's startTime is
// when its first cluster started, inside a window. After-stage tasks and a
// rollback do not wait for a window. A window the hub cannot read keeps the run
// from initializing (InvalidStrategy, naming the field).
//
// Clusters that join the placement during the run are taken in
// (joiners.go: placeJoiners has the rules): into the stage they match if the
// run has not finished it, else into the stage the run is in, so that they get
// the run's snapshot now; those no stage matches join unselectedClusters.
// Clusters that leave are dropped from their stage. Neither fails the run.
//
// Setting spec.state to Stop stops the run: it moves no further binding and
// completes no further stage (Progressing=False, Stopped); Run resumes it.
//
// # What this package writes
//
// For External placements only (docs/concepts/pipeline.md has the whole table): binding
// spec.state (Scheduled to Bound), spec.resourceSnapshotName, spec.applyStrategy and
// the override snapshot lists with a JSON patch that applies only while spec.state is what was read, and the
// binding's RolloutStarted condition with server-side apply under the field manager
// flotilla-updaterun. A small second controller (ExternalReconciler) deletes the
// Unscheduled bindings of External placements and marks bindings no run has moved
// yet RolloutStarted=Unknown (RolloutControlledExternally). The run's status, and
// the ApprovalAccepted condition of its approval requests, are this package's too,
// as is the annotation placement.flotilla.io/failed-analysis on a resource
// snapshot a rollback marks (a merge patch of that one key).
//
// Events mark the run's transitions (Initialized, StageStarted, ClusterJoinedRun,
// OutsideMaintenanceWindow, ApprovalRequested,
// StageApproved, StageSucceeded, AnalysisRoundFailed, AnalysisPassed,
// AnalysisFailed, ResourceSnapshotMarkedFailed, NotRolledBack, RolledBack,
// Stopped, Succeeded, Failed); the metrics are
// flotilla_updaterun_clusters_updated_total and
// flotilla_updaterun_runs_finished_total{result} (succeeded, failed, rolled_back).
package updaterun

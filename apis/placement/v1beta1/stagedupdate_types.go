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
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Labels of the ClusterApprovalRequests a staged update run creates.
const (
	// LabelUpdateRun holds the name of the ClusterStagedUpdateRun an approval request
	// belongs to.
	LabelUpdateRun = "placement.flotilla.io/update-run"

	// LabelStage holds the name of the stage an approval request approves the end of.
	LabelStage = "placement.flotilla.io/stage"
)

// ClusterStagedUpdateStrategy is a reusable plan for rolling a placement out in
// stages: each stage is a set of member clusters picked by labels, updated at most
// maxConcurrency at a time, and may end with tasks (an approval, a timed wait) that
// must complete before the next stage starts. ClusterStagedUpdateRuns use it for
// placements whose spec.strategy.type is External.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=flotilla
// +kubebuilder:printcolumn:name="STAGES",type=string,JSONPath=`.spec.stages[*].name`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterStagedUpdateStrategy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec lists the stages.
	// +required
	Spec StagedUpdateStrategySpec `json:"spec"`
}

// StagedUpdateStrategySpec is the ordered list of stages of a staged rollout.
type StagedUpdateStrategySpec struct {
	// Stages are updated one after another, in this order. A cluster belongs to the
	// first stage whose labelSelector matches it; a cluster no stage matches is not
	// updated by runs of this strategy (the run's status lists it).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=31
	// +kubebuilder:validation:XValidation:rule="self.all(s, self.exists_one(o, o.name == s.name))",message="stage names must be unique"
	// +required
	Stages []StageConfig `json:"stages"`
}

// StageConfig is one stage of a staged rollout.
type StageConfig struct {
	// Name identifies the stage in the run's status and in approval requests.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// LabelSelector picks the stage's member clusters by their labels; an empty
	// selector matches every cluster.
	// +required
	LabelSelector *metav1.LabelSelector `json:"labelSelector"`

	// SortingLabelKey orders the stage's clusters by the value of this label
	// (numerically when every value is an integer, else alphabetically), then by
	// name; clusters without the label go last. Default: by name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +optional
	SortingLabelKey *string `json:"sortingLabelKey,omitempty"`

	// MaxConcurrency is how many of the stage's clusters are updated at once: a
	// positive number, or a percentage of the stage's clusters (rounded down, but at
	// least one). Default: 1.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern=`^(100|[1-9][0-9]?)%$`
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 1",message="maxConcurrency must be a positive integer or a percentage from 1% to 100%"
	// +optional
	MaxConcurrency *intstr.IntOrString `json:"maxConcurrency,omitempty"`

	// MaintenanceWindows, when set, are the only times the stage starts moving a
	// cluster to the run's snapshot; while they are all closed the run waits
	// (the stage's and the run's Progressing=False, OutsideMaintenanceWindow,
	// saying when the next window opens) and is not failed. A cluster already
	// moving when a window closes finishes, and the stage's after-stage tasks
	// run whenever its clusters are done. At most 8.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	MaintenanceWindows []MaintenanceWindow `json:"maintenanceWindows,omitempty"`

	// AfterStageTasks must all complete, once every cluster of the stage is updated,
	// before the next stage starts. At most one of each type.
	// +kubebuilder:validation:MaxItems=3
	// +kubebuilder:validation:XValidation:rule="self.all(t, self.exists_one(o, o.type == t.type))",message="at most one after-stage task of each type"
	// +optional
	AfterStageTasks []AfterStageTask `json:"afterStageTasks,omitempty"`
}

// AfterStageTaskType is a kind of task that ends a stage.
// +kubebuilder:validation:Enum=Approval;TimedWait;Analysis
type AfterStageTaskType string

const (
	// AfterStageTaskTypeApproval waits until a user approves the stage: the run
	// creates a ClusterApprovalRequest and goes on once its Approved condition is
	// True.
	AfterStageTaskTypeApproval AfterStageTaskType = "Approval"
	// AfterStageTaskTypeTimedWait waits for waitTime after the stage's clusters are
	// updated.
	AfterStageTaskTypeTimedWait AfterStageTaskType = "TimedWait"
	// AfterStageTaskTypeAnalysis runs the checks of its analysis every interval
	// after the stage's clusters are updated: the task completes when they pass
	// successCount rounds in a row, and fails the stage (see onFailure) when they
	// fail failureLimit rounds.
	AfterStageTaskTypeAnalysis AfterStageTaskType = "Analysis"
)

// AfterStageTask is a task that ends a stage.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'TimedWait' || has(self.waitTime)",message="a TimedWait task needs waitTime"
// +kubebuilder:validation:XValidation:rule="self.type == 'TimedWait' || !has(self.waitTime)",message="only a TimedWait task takes waitTime"
// +kubebuilder:validation:XValidation:rule="self.type == 'Analysis' ? has(self.analysis) : !has(self.analysis)",message="an Analysis task needs analysis, and only an Analysis task takes it"
type AfterStageTask struct {
	// Type is the kind of task.
	// +required
	Type AfterStageTaskType `json:"type"`

	// WaitTime is how long a TimedWait task waits, as a duration such as 30s, 5m or
	// 1h30m. Only for TimedWait. At most 720h (30 days).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('720h')",message="waitTime must be a duration of at most 720h"
	// +optional
	WaitTime *metav1.Duration `json:"waitTime,omitempty"`

	// Analysis is what an Analysis task checks, how often, and what happens when
	// the checks fail. Only for Analysis, and required there.
	// +optional
	Analysis *Analysis `json:"analysis,omitempty"`
}

// AnalysisFailurePolicy is what a run does when an analysis fails.
// +kubebuilder:validation:Enum=Pause;Rollback
type AnalysisFailurePolicy string

const (
	// AnalysisFailurePause stops the run where it is: no further stage starts, and
	// the clusters already moved keep the run's snapshot until a user acts.
	AnalysisFailurePause AnalysisFailurePolicy = "Pause"
	// AnalysisFailureRollback returns every cluster the run moved to the resource
	// snapshot it ran before the run (at most maxConcurrency of a stage at a time),
	// marks the run's resource snapshot failed (AnnotationFailedAnalysis) and ends
	// the run (Succeeded False, RolledBack).
	AnalysisFailureRollback AnalysisFailurePolicy = "Rollback"
)

// Bounds of an analysis.
const (
	// MaxAnalysisCheckExpressionLength is the longest cel expression of an
	// analysis check, in bytes.
	MaxAnalysisCheckExpressionLength = 4096
	// MaxPrometheusQueryLength is the longest query of a prometheus check, in
	// bytes.
	MaxPrometheusQueryLength = 4096
	// MaxPrometheusConditionLength is the longest successCondition of a
	// prometheus check, in bytes.
	MaxPrometheusConditionLength = 1024
	// PrometheusClustersPlaceholder, in the query of a prometheus check, stands
	// for a regular expression that matches exactly the names of the stage's
	// clusters the run updated, escaped for a double-quoted PromQL string.
	PrometheusClustersPlaceholder = "{{clusters}}"
)

// Analysis judges the clusters a stage just updated: every interval, each check
// runs once (a round); a round passes when every check passes. The analysis
// passes after successCount passing rounds in a row and fails after failureLimit
// failing rounds in all, whichever comes first.
type Analysis struct {
	// Interval is how long from one round to the next, as a duration such as 10s or
	// 1m; the first round runs when the stage's clusters are all updated. From 1s to
	// 1h.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('1h')",message="interval must be a duration from 1s to 1h"
	// +required
	Interval metav1.Duration `json:"interval"`

	// SuccessCount is how many passing rounds in a row pass the analysis. From 1
	// to 100. Default: 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	// +optional
	SuccessCount int32 `json:"successCount,omitempty"`

	// FailureLimit is how many failing rounds (in all, not only in a row) fail the
	// analysis. From 1 to 100. Default: 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	// +optional
	FailureLimit int32 `json:"failureLimit,omitempty"`

	// OnFailure is what the run does when the analysis fails: Pause (stop where
	// it is) or Rollback (return the clusters it moved). Default: Pause.
	// +kubebuilder:default=Pause
	// +optional
	OnFailure AnalysisFailurePolicy `json:"onFailure,omitempty"`

	// Checks are what every round evaluates; names are unique.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:XValidation:rule="self.all(c, self.exists_one(o, o.name == c.name))",message="check names must be unique"
	// +required
	Checks []AnalysisCheck `json:"checks"`
}

// AnalysisCheck is one check of an analysis. Exactly one kind of check is set:
// cel (over what the members report) or prometheus (a PromQL query).
//
// +kubebuilder:validation:XValidation:rule="[has(self.cel), has(self.prometheus)].filter(k, k).size() == 1",message="a check needs exactly one kind of check: cel or prometheus"
type AnalysisCheck struct {
	// Name identifies the check in the run's status, conditions and Events.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// CEL is a Common Expression Language expression that is true when the check
	// passes. It sees clusters: the stage's clusters, each as its entry of the
	// placement's status.placementStatuses (clusterName, observedResourceIndex,
	// conditions, failedPlacements, diffedPlacements, driftedPlacements, feedback,
	// ...; lists are present, empty when there is nothing), plus labels (the
	// cluster's labels). For example:
	// clusters.all(c, c.feedback.all(f, f.kind != 'Deployment' || f.values.all(v, v.name != 'replicas' || int(v.value) <= 3))).
	// An expression that does not compile, or does not return a bool, keeps the
	// run from starting (its Initialized condition says why).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	CEL string `json:"cel,omitempty"`

	// Prometheus is a PromQL query to the Prometheus the hub is told about
	// (the hub's --prometheus-url), with a condition on its result.
	// +optional
	Prometheus *PrometheusCheck `json:"prometheus,omitempty"`
}

// PrometheusCheck is a PromQL query, run as an instant query at each round, and
// a condition on its result.
//
// A query that fails (a syntax error, a timeout, a Prometheus that cannot be
// reached), returns more than 1000 series, or whose condition cannot be
// evaluated, fails its round, with the error in lastFailure. So does any
// prometheus check when the hub has no --prometheus-url.
type PrometheusCheck struct {
	// Query is the PromQL expression, evaluated at the round's time. In it,
	// {{clusters}} stands for a regular expression that matches exactly the
	// names of the stage's clusters the run updated (escaped for a
	// double-quoted string; one that matches nothing when there are none), as in
	// max(rate(http_errors_total{cluster=~"{{clusters}}"}[5m])). It must return
	// an instant vector or a scalar.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +required
	Query string `json:"query"`

	// SuccessCondition is a Common Expression Language expression over result
	// that is true when the check passes. For a scalar query, result is a
	// double: result < 0.01. For an instant vector, result is a list of series,
	// each {metric: {label: value}, value: double}, empty when the query
	// matches nothing: size(result) > 0 && result.all(s, s.value < 0.01). An
	// expression that does not compile, or does not return a bool, keeps the
	// run from starting.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +required
	SuccessCondition string `json:"successCondition"`
}

// ClusterStagedUpdateStrategyList is a list of ClusterStagedUpdateStrategies.
//
// +kubebuilder:object:root=true
type ClusterStagedUpdateStrategyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the strategies.
	Items []ClusterStagedUpdateStrategy `json:"items"`
}

// ClusterStagedUpdateRun rolls one resource snapshot of a placement (whose
// spec.strategy.type is External) out to the placement's clusters, stage by stage
// as a ClusterStagedUpdateStrategy says. Naming an older snapshot index rolls back.
// The run takes the placement's clusters and the strategy's stages once, when it
// is initialized; its status then tracks every stage and cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=csur,categories=flotilla
// +kubebuilder:printcolumn:name="PLACEMENT",type=string,JSONPath=`.spec.placementName`
// +kubebuilder:printcolumn:name="RESOURCE-INDEX",type=string,JSONPath=`.spec.resourceSnapshotIndex`
// +kubebuilder:printcolumn:name="STATE",type=string,JSONPath=`.spec.state`
// +kubebuilder:printcolumn:name="INITIALIZED",type=string,JSONPath=`.status.conditions[?(@.type=="Initialized")].status`
// +kubebuilder:printcolumn:name="PROGRESSING",type=string,JSONPath=`.status.conditions[?(@.type=="Progressing")].reason`
// +kubebuilder:printcolumn:name="SUCCEEDED",type=string,JSONPath=`.status.conditions[?(@.type=="Succeeded")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="STRATEGY",type=string,JSONPath=`.spec.stagedRolloutStrategyName`,priority=1
type ClusterStagedUpdateRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the placement, the resource snapshot and the strategy. Only state
	// can be changed.
	// +required
	Spec StagedUpdateRunSpec `json:"spec"`

	// Status is the progress of the run.
	// +optional
	// +kubebuilder:default={}
	Status StagedUpdateRunStatus `json:"status,omitempty"`
}

// StagedUpdateRunState says whether a run may move clusters.
// +kubebuilder:validation:Enum=Run;Stop
type StagedUpdateRunState string

const (
	// StagedUpdateRunStateRun lets the run update clusters.
	StagedUpdateRunStateRun StagedUpdateRunState = "Run"
	// StagedUpdateRunStateStop stops the run: it starts no further cluster and
	// completes no further stage. Clusters already moved keep the new snapshot.
	// Setting Run again resumes it.
	StagedUpdateRunStateStop StagedUpdateRunState = "Stop"
)

// StagedUpdateRunSpec is what a staged update run rolls out, where and how.
//
// +kubebuilder:validation:XValidation:rule="self.placementName == oldSelf.placementName",message="placementName is immutable; create a new run",fieldPath=".placementName"
// +kubebuilder:validation:XValidation:rule="self.resourceSnapshotIndex == oldSelf.resourceSnapshotIndex",message="resourceSnapshotIndex is immutable; create a new run",fieldPath=".resourceSnapshotIndex"
// +kubebuilder:validation:XValidation:rule="self.stagedRolloutStrategyName == oldSelf.stagedRolloutStrategyName",message="stagedRolloutStrategyName is immutable; create a new run",fieldPath=".stagedRolloutStrategyName"
type StagedUpdateRunSpec struct {
	// PlacementName is the ClusterResourcePlacement to roll out. Its
	// spec.strategy.type must be External.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	PlacementName string `json:"placementName"`

	// ResourceSnapshotIndex is the resource index (status.observedResourceIndex of
	// the placement, or the placement.flotilla.io/resource-index label of its
	// ClusterResourceSnapshots) to roll out. An older index rolls back to it, as
	// long as the placement still keeps it (see revisionHistoryLimit).
	// +kubebuilder:validation:Pattern=`^(0|[1-9][0-9]{0,8})$`
	// +required
	ResourceSnapshotIndex string `json:"resourceSnapshotIndex"`

	// StagedUpdateStrategyName is the ClusterStagedUpdateStrategy that says how.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	StagedUpdateStrategyName string `json:"stagedRolloutStrategyName"`

	// State is Run (update clusters) or Stop (update no further cluster). Default:
	// Run.
	// +kubebuilder:default=Run
	// +optional
	State StagedUpdateRunState `json:"state,omitempty"`
}

// StagedUpdateRunStatus is the progress of a staged update run.
type StagedUpdateRunStatus struct {
	// ObservedGeneration is the metadata.generation this status was computed
	// for. It is 0 until the hub first writes the status, so that tools reading
	// kstatus conventions (Flux, kubectl wait, cli-utils) see the object as in
	// progress, not current, before the hub has looked at it.
	// +kubebuilder:default=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ResourceSnapshotName is the ClusterResourceSnapshot (the first of its set)
	// the run rolls out, found from spec.resourceSnapshotIndex at initialization.
	// +optional
	ResourceSnapshotName string `json:"resourceSnapshotName,omitempty"`

	// StagedUpdateStrategySnapshot is the strategy's spec as it was at
	// initialization; later changes of the strategy do not affect this run.
	// +optional
	StagedUpdateStrategySnapshot *StagedUpdateStrategySpec `json:"stagedUpdateStrategySnapshot,omitempty"`

	// StagesStatus is the progress of each stage, in order.
	// +optional
	StagesStatus []StageUpdatingStatus `json:"stagesStatus,omitempty"`

	// UnselectedClusters are the placement's clusters that no stage matches
	// (also those that joined the placement during the run): the run does not
	// update them.
	// +optional
	UnselectedClusters []string `json:"unselectedClusters,omitempty"`

	// Conditions describe the run: Initialized, Progressing and Succeeded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// StageUpdatingStatus is the progress of one stage of a run.
type StageUpdatingStatus struct {
	// StageName is the stage's name in the strategy.
	// +required
	StageName string `json:"stageName"`

	// Clusters are the stage's clusters, in the order they are updated.
	// +optional
	Clusters []ClusterUpdatingStatus `json:"clusters,omitempty"`

	// AfterStageTaskStatus is the progress of each after-stage task.
	// +optional
	AfterStageTaskStatus []AfterStageTaskStatus `json:"afterStageTaskStatus,omitempty"`

	// StartTime is when the stage's first cluster started updating.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// EndTime is when the stage's clusters were all updated and its tasks were all
	// complete.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`

	// Conditions describe the stage: Progressing and Succeeded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterUpdatingStatus is the progress of one cluster of a run.
type ClusterUpdatingStatus struct {
	// ClusterName is the member cluster.
	// +required
	ClusterName string `json:"clusterName"`

	// ResourceSnapshotName is the resource snapshot the cluster's binding names:
	// what the cluster runs (or, while it updates, is moving to).
	// +optional
	ResourceSnapshotName string `json:"resourceSnapshotName,omitempty"`

	// ResourceSnapshotIndex is the resource index of ResourceSnapshotName.
	// +optional
	ResourceSnapshotIndex string `json:"resourceSnapshotIndex,omitempty"`

	// ResourceOverrideSnapshots are the ResourceOverride snapshots the run applies
	// to the cluster's resources: pinned at initialization (the latest snapshots of
	// the overrides that applied on the cluster then), as the resource snapshot is,
	// so an override edited during the run does not reach the clusters it updates.
	// +optional
	ResourceOverrideSnapshots []NamespacedName `json:"resourceOverrideSnapshots,omitempty"`

	// ClusterResourceOverrideSnapshots are the ClusterResourceOverride snapshots
	// the run applies to the cluster's resources, pinned at initialization like
	// ResourceOverrideSnapshots.
	// +optional
	ClusterResourceOverrideSnapshots []string `json:"clusterResourceOverrideSnapshots,omitempty"`

	// PreviousResourceSnapshotName is the resource snapshot the cluster ran when
	// the run was initialized, before the run moved it; empty when it ran none.
	// A rollback returns the cluster to it.
	// +optional
	PreviousResourceSnapshotName string `json:"previousResourceSnapshotName,omitempty"`

	// StartTime is when the run moved the cluster to its snapshot.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// EndTime is when the cluster's resources were seen Available.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`

	// Joined is set for a cluster that joined the placement after the run was
	// initialized and that the run took in.
	// +optional
	Joined *ClusterJoinedRun `json:"joined,omitempty"`

	// Conditions describe the cluster: Started and Succeeded, and RolledBack
	// once a rollback moves it back.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterJoinedRun says when and how a run took in a cluster that joined the
// placement during the run.
type ClusterJoinedRun struct {
	// Time is when the run took the cluster in.
	// +required
	Time metav1.Time `json:"time"`

	// MatchedStage is the stage the cluster's labels match, when the run had
	// already finished that stage: the cluster then updates in the stage the
	// run was in. Empty when it updates in the stage it matches.
	// +optional
	MatchedStage string `json:"matchedStage,omitempty"`
}

// AfterStageTaskStatus is the progress of one after-stage task.
type AfterStageTaskStatus struct {
	// Type is the kind of task.
	// +required
	Type AfterStageTaskType `json:"type"`

	// ApprovalRequestName is the ClusterApprovalRequest of an Approval task.
	// +optional
	ApprovalRequestName string `json:"approvalRequestName,omitempty"`

	// StartTime is when the task started: when the stage's clusters were all
	// updated. A TimedWait task completes waitTime after it.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// Analysis is the progress of an Analysis task.
	// +optional
	Analysis *AnalysisStatus `json:"analysis,omitempty"`

	// Conditions describe the task: ApprovalRequestCreated and
	// ApprovalRequestApproved for Approval, WaitTimeElapsed for TimedWait,
	// AnalysisPassed for Analysis.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AnalysisStatus counts the rounds of an Analysis task. It keeps counts and the
// last failure, not every round.
type AnalysisStatus struct {
	// Rounds is how many rounds ran.
	// +optional
	Rounds int32 `json:"rounds,omitempty"`

	// ConsecutiveSuccesses is how many of the last rounds passed, in a row.
	// +optional
	ConsecutiveSuccesses int32 `json:"consecutiveSuccesses,omitempty"`

	// Failures is how many rounds failed, in all.
	// +optional
	Failures int32 `json:"failures,omitempty"`

	// LastRoundTime is when the last round ran; the next runs an interval later.
	// +optional
	LastRoundTime *metav1.Time `json:"lastRoundTime,omitempty"`

	// LastFailure says which check failed in the last failing round, and with what
	// values. At most 1 KiB.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	LastFailure string `json:"lastFailure,omitempty"`

	// Retried identifies (a hash of) the value of the run's
	// placement.flotilla.io/retry-analysis annotation that last restarted this
	// analysis after it failed; a new value restarts it again.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Retried string `json:"retried,omitempty"`
}

// ClusterStagedUpdateRunList is a list of ClusterStagedUpdateRuns.
//
// +kubebuilder:object:root=true
type ClusterStagedUpdateRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the runs.
	Items []ClusterStagedUpdateRun `json:"items"`
}

// ClusterApprovalRequest asks a user to approve the end of a stage of a staged
// update run. The run creates it, with the labels placement.flotilla.io/update-run
// and placement.flotilla.io/stage; a user approves by setting its Approved
// condition to True on the status subresource; the run then sets
// ApprovalAccepted to True and goes on to the next stage.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=careq,categories=flotilla
// +kubebuilder:printcolumn:name="UPDATE-RUN",type=string,JSONPath=`.spec.parentStageRollout`
// +kubebuilder:printcolumn:name="STAGE",type=string,JSONPath=`.spec.targetStage`
// +kubebuilder:printcolumn:name="APPROVED",type=string,JSONPath=`.status.conditions[?(@.type=="Approved")].status`
// +kubebuilder:printcolumn:name="ACCEPTED",type=string,JSONPath=`.status.conditions[?(@.type=="ApprovalAccepted")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterApprovalRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the run and the stage. It cannot be changed. A run accepts
	// the approval only of a request whose spec names it and the stage (and
	// that it controls), whatever the request's name or labels say.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
	// +required
	Spec ApprovalRequestSpec `json:"spec"`

	// Status holds the user's approval and the run's answer.
	// +optional
	Status ApprovalRequestStatus `json:"status,omitempty"`
}

// ApprovalRequestSpec names what an approval request approves.
type ApprovalRequestSpec struct {
	// ParentStageRollout is the ClusterStagedUpdateRun that waits for the approval.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	ParentStageRollout string `json:"parentStageRollout"`

	// TargetStage is the stage whose end is approved.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	TargetStage string `json:"targetStage"`
}

// ApprovalRequestStatus is the state of an approval request.
type ApprovalRequestStatus struct {
	// Conditions: Approved (set by the user) and ApprovalAccepted (set by the run).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterApprovalRequestList is a list of ClusterApprovalRequests.
//
// +kubebuilder:object:root=true
type ClusterApprovalRequestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the approval requests.
	Items []ClusterApprovalRequest `json:"items"`
}

func init() {
	SchemeBuilder.Register(
		&ClusterStagedUpdateStrategy{}, &ClusterStagedUpdateStrategyList{},
		&ClusterStagedUpdateRun{}, &ClusterStagedUpdateRunList{},
		&ClusterApprovalRequest{}, &ClusterApprovalRequestList{},
	)
}

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

package updaterun

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/analysis"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// condition is a condition's status, reason and message.
type condition struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

// set records c as the condition typ in conds at the run's generation.
func set(conds *[]metav1.Condition, typ string, c condition, generation int64) bool {
	return conditions.Set(conds, typ, c.status, c.reason, c.message, generation)
}

// The reasons a run cannot be initialized, each with the exact message it gets.

func placementNotFound(placement string) condition {
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunPlacementNotFound,
		fmt.Sprintf("ClusterResourcePlacement %s does not exist", placement)}
}

func placementNotExternal(placement string, typ placementv1beta1.RolloutStrategyType) condition {
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunPlacementNotExternal,
		fmt.Sprintf("ClusterResourcePlacement %s has strategy type %s; staged update runs roll out only placements whose spec.strategy.type is External", placement, typ)}
}

func strategyNotFound(strategy string) condition {
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunStrategyNotFound,
		fmt.Sprintf("ClusterStagedUpdateStrategy %s does not exist", strategy)}
}

func invalidStrategy(strategy string, err error) condition {
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunInvalidStrategy,
		fmt.Sprintf("ClusterStagedUpdateStrategy %s cannot be used: %v", strategy, err)}
}

// snapshotNotFound says the placement has no snapshot of the index, and which
// indexes it keeps (kept in ascending order).
func snapshotNotFound(placement, index string, kept []string) condition {
	have := "it has no resource snapshot yet"
	if len(kept) > 0 {
		have = "it keeps indexes " + strings.Join(kept, ", ")
	}
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunResourceSnapshotNotFound,
		fmt.Sprintf("ClusterResourcePlacement %s has no resource snapshot with index %s (%s)", placement, index, have)}
}

func waitingForOtherRun(placement, other string) condition {
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunWaitingForOtherRun,
		fmt.Sprintf("ClusterStagedUpdateRun %s of ClusterResourcePlacement %s is in progress; this run starts when it succeeds, is stopped or is deleted", other, placement)}
}

// initialized sums up the stages a run computed.
func initialized(snapshot, index string, stages []placementv1beta1.StageUpdatingStatus, unselected []string) condition {
	total := 0
	parts := make([]string, 0, len(stages))
	for _, st := range stages {
		total += len(st.Clusters)
		parts = append(parts, fmt.Sprintf("%s: %d", st.StageName, len(st.Clusters)))
	}
	msg := fmt.Sprintf("%s in %d %s (%s) to resource snapshot %s (index %s)",
		plural(total, "cluster"), len(stages), pluralWord(len(stages), "stage"), strings.Join(parts, ", "), snapshot, index)
	if len(unselected) > 0 {
		msg += fmt.Sprintf("; no stage selects %s, which this run leaves as %s", strings.Join(unselected, ", "), pluralWord2(len(unselected), "it is", "they are"))
	}
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunInitialized, msg}
}

// progressing says which clusters of the current stage are updating.
func progressing(stage string, updating []string, limit int) condition {
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunProgressing,
		fmt.Sprintf("stage %s: updating %s (at most %d at a time)", stage, strings.Join(updating, ", "), limit)}
}

// taskWait is one after-stage task the run waits for.
type taskWait struct {
	// approvalRequest is the ClusterApprovalRequest of an Approval task.
	approvalRequest string
	// remaining is what is left of a TimedWait task's wait.
	remaining time.Duration
	// waitTime is a TimedWait task's waitTime.
	waitTime time.Duration
	// analysis says where an Analysis task is.
	analysis string
}

func (w taskWait) String() string {
	if w.analysis != "" {
		return "analysis (" + w.analysis + ")"
	}
	if w.approvalRequest != "" {
		return fmt.Sprintf("approval of ClusterApprovalRequest %s (set its Approved condition to True)", w.approvalRequest)
	}
	return fmt.Sprintf("TimedWait of %s (%s left)", w.waitTime, w.remaining.Round(time.Second))
}

// waiting says what the run waits for after the stage's clusters were updated.
func waiting(stage string, waits []taskWait) condition {
	parts := make([]string, 0, len(waits))
	for _, w := range waits {
		parts = append(parts, w.String())
	}
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunWaiting,
		fmt.Sprintf("stage %s: every cluster is updated; waiting for %s", stage, strings.Join(parts, " and "))}
}

func stopped() condition {
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunStopped,
		"spec.state is Stop: no further cluster is updated; set it to Run to resume"}
}

func finished(why string) condition {
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunFinished, why}
}

// runSucceeded sums up a run that is done.
func runSucceeded(stages []placementv1beta1.StageUpdatingStatus, snapshot, index string) condition {
	updated, left := 0, 0
	for _, st := range stages {
		for _, c := range st.Clusters {
			if conditions.IsTrue(c.Conditions, placementv1beta1.ConditionUpdateRunSucceeded) {
				updated++
			} else {
				left++
			}
		}
	}
	msg := fmt.Sprintf("%s %s resource snapshot %s (index %s)", plural(updated, "cluster"), pluralWord2(updated, "runs", "run"), snapshot, index)
	if left > 0 {
		msg += fmt.Sprintf("; %s left the placement during the run", plural(left, "cluster"))
	}
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded, msg}
}

func snapshotFailed(snapshot, index, mark string) condition {
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunResourceSnapshotFailed,
		fmt.Sprintf("resource snapshot %s (index %s) is marked %s (%s); change the placement's resources to make a new snapshot, or remove the annotation to run this one again",
			snapshot, index, placementv1beta1.AnnotationFailedAnalysis, mark)}
}

// analysisPaused stops a run whose analysis failed with onFailure Pause.
func analysisPaused(stage, why string) condition {
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunAnalysisPaused,
		fmt.Sprintf("stage %s: the analysis failed, so no further stage starts (onFailure Pause): %s", stage, why)}
}

// rollingBack says which clusters of which stage are moving back.
func rollingBack(failedStage, why, stage string, moving []string, limit int) condition {
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunRollingBack,
		fmt.Sprintf("the analysis of stage %s failed: %s; rolling back stage %s: %s (at most %d at a time)",
			failedStage, why, stage, strings.Join(moving, ", "), limit)}
}

// rolledBack sums up a rollback that is done, over the stages it went through.
func rolledBack(stages []placementv1beta1.StageUpdatingStatus, failedStage, why string) condition {
	back, left := 0, 0
	for _, st := range stages {
		for _, c := range st.Clusters {
			switch rb := conditions.Get(c.Conditions, placementv1beta1.ConditionClusterRolledBack); {
			case rb == nil:
			case rb.Status == metav1.ConditionTrue:
				back++
			default:
				left++
			}
		}
	}
	msg := fmt.Sprintf("the analysis of stage %s failed: %s; %s rolled back to the resource snapshots they ran before the run", failedStage, why, plural(back, "cluster"))
	if left > 0 {
		msg += fmt.Sprintf(", %s could not be (see their RolledBack conditions)", plural(left, "cluster"))
	}
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunRolledBack, msg}
}

func runFailed(why string) condition {
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunFailed, why}
}

// Per-cluster conditions.

func clusterStartedCondition(snapshot, index string) condition {
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonClusterUpdatingStarted,
		fmt.Sprintf("moved to resource snapshot %s (index %s)", snapshot, index)}
}

func clusterSucceeded(snapshot, index string) condition {
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded,
		fmt.Sprintf("runs resource snapshot %s (index %s) and its resources are Available", snapshot, index)}
}

func clusterUnscheduled(placement string) condition {
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonClusterUnscheduled,
		fmt.Sprintf("ClusterResourcePlacement %s is no longer scheduled on the cluster; the run leaves it", placement)}
}

// Per-stage conditions.

func stageProgressing(updating []string) condition {
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunProgressing,
		fmt.Sprintf("updating %s", strings.Join(updating, ", "))}
}

func stageSucceeded(n int) condition {
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded,
		fmt.Sprintf("%s updated and every after-stage task complete", plural(n, "cluster"))}
}

// Rollback conditions of clusters.

func clusterRollingBack(snapshot, index string) condition {
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonClusterRollingBack,
		fmt.Sprintf("moving back to resource snapshot %s (index %s)", snapshot, index)}
}

func clusterRolledBack(snapshot, index string) condition {
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonClusterRolledBack,
		fmt.Sprintf("runs resource snapshot %s (index %s) again and its resources are Available", snapshot, index)}
}

func clusterNotRolledBack(why string) condition {
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonClusterNotRolledBack, why}
}

// Analysis task conditions.

// analysisCounts says how far an analysis got.
func analysisCounts(st *placementv1beta1.AnalysisStatus) string {
	if st == nil {
		return "no round ran"
	}
	return fmt.Sprintf("%s, %d passing in a row, %d failing", plural(int(st.Rounds), "round"), st.ConsecutiveSuccesses, st.Failures)
}

func analysisRunningMessage(spec *placementv1beta1.Analysis, st *placementv1beta1.AnalysisStatus, next time.Duration) string {
	return fmt.Sprintf("%s; passes after %d passing in a row, fails after %d failing; next round in %s",
		analysisCounts(st), analysis.AtLeastOne(spec.SuccessCount), analysis.AtLeastOne(spec.FailureLimit), next.Round(time.Second))
}

func analysisRunningCondition(spec *placementv1beta1.Analysis, st *placementv1beta1.AnalysisStatus, next time.Duration) condition {
	return condition{metav1.ConditionUnknown, placementv1beta1.ReasonAnalysisRunning, analysisRunningMessage(spec, st, next)}
}

func analysisWaitingForStatus(placement, index string, stale []string) condition {
	return condition{metav1.ConditionUnknown, placementv1beta1.ReasonAnalysisRunning,
		fmt.Sprintf("waiting for status.placementStatuses of ClusterResourcePlacement %s to show resource index %s on %s", placement, index, strings.Join(stale, ", "))}
}

func analysisPassedCondition(st *placementv1beta1.AnalysisStatus) condition {
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonAnalysisPassed,
		fmt.Sprintf("passed after %s", analysisCounts(st))}
}

func analysisFailedCondition(st *placementv1beta1.AnalysisStatus, why string) condition {
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonAnalysisFailed,
		fmt.Sprintf("failed after %s: %s", analysisCounts(st), why)}
}

// Task conditions.

func approvalRequestCreated(name string) condition {
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonApprovalRequestCreated,
		fmt.Sprintf("ClusterApprovalRequest %s waits for approval", name)}
}

func approvalRequestApproved(name string) condition {
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonApprovalRequestApproved,
		fmt.Sprintf("ClusterApprovalRequest %s was approved", name)}
}

func approvalAccepted(run string) condition {
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonApprovalAccepted,
		fmt.Sprintf("ClusterStagedUpdateRun %s goes on to its next stage", run)}
}

func waitTimeElapsed(d time.Duration) condition {
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonWaitTimeElapsed,
		fmt.Sprintf("waited %s", d)}
}

// Binding conditions written for External placements.

func bindingRolloutStarted(run, snapshot, index string) condition {
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonRolloutStarted,
		fmt.Sprintf("ClusterStagedUpdateRun %s moved the cluster to resource snapshot %s (index %s)", run, snapshot, index)}
}

func bindingRolledBack(run, snapshot, index, why string) condition {
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonRolloutStarted,
		fmt.Sprintf("ClusterStagedUpdateRun %s rolled the cluster back to resource snapshot %s (index %s): %s", run, snapshot, index, analysis.Truncate(why, 512))}
}

func bindingControlledExternally(placement string) condition {
	return condition{metav1.ConditionUnknown, placementv1beta1.ReasonRolloutControlledExternally,
		fmt.Sprintf("ClusterResourcePlacement %s has strategy type External: a ClusterStagedUpdateRun rolls its resources out to the cluster", placement)}
}

func plural(n int, word string) string { return fmt.Sprintf("%d %s", n, pluralWord(n, word)) }

func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func pluralWord2(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

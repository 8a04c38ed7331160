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

// The RolloutAnalysis condition of a placement (ClusterResourcePlacementRolloutAnalysis,
// ResourcePlacementRolloutAnalysis): the verdict of
// spec.strategy.rollingUpdate.analysis on the rollout of the latest resource
// snapshot. Written by the rollout controller, with status.rolloutAnalysis; absent
// without an analysis.
const (
	// ConditionRolloutAnalysis is the type (before the placement's prefix) of
	// the RolloutAnalysis condition.
	ConditionRolloutAnalysis = "RolloutAnalysis"

	// ReasonWaveAnalysisRunning (Unknown): a wave's clusters are becoming
	// Available on the snapshot, or the analysis runs rounds over them; no other
	// cluster moves meanwhile. The message names the wave and counts the rounds.
	ReasonWaveAnalysisRunning = "WaveAnalysisRunning"
	// ReasonWaveAnalysisPassed (True): every wave moved so far passed its
	// analysis; the rollout moves the next wave, or every cluster runs the
	// snapshot.
	ReasonWaveAnalysisPassed = "WaveAnalysisPassed"
	// ReasonWaveAnalysisFailed (False): a wave failed its analysis and onFailure
	// is Pause: no cluster moves. The message names the failing check, the
	// clusters it is false on and their values. A change of the placement's
	// resources (a new snapshot) starts again.
	ReasonWaveAnalysisFailed = "WaveAnalysisFailed"
	// ReasonWaveRollingBack (False): a wave failed its analysis and onFailure is
	// Rollback: the clusters the rollout moved to the snapshot are moving back
	// to the snapshot each ran before, within maxUnavailable.
	ReasonWaveRollingBack = "WaveRollingBack"
	// ReasonWaveRolledBack (False): every cluster the rollout moved to the
	// failed snapshot runs the snapshot it ran before again, Available (the
	// message names any it left as they were: one the rollout bound to its
	// first snapshot). The snapshot is marked AnnotationFailedAnalysis.
	ReasonWaveRolledBack = "WaveRolledBack"
	// ReasonRolloutResourceSnapshotFailed (False): the latest resource snapshot
	// is marked AnnotationFailedAnalysis (by this rollout or by a staged update
	// run) and the rollout does not take it; a change of the placement's
	// resources makes a new snapshot to roll out. Also the RolloutStarted reason
	// of every cluster the rollout holds back from such a snapshot.
	ReasonRolloutResourceSnapshotFailed = "ResourceSnapshotFailed"
)

// Reasons of the Events a rolling update records on the placement as its
// analysis judges a wave (the condition's reasons mark the verdicts).
const (
	// EventWaveAnalysisStarted: a wave's clusters are all Available on the
	// snapshot and the analysis starts its rounds over them.
	EventWaveAnalysisStarted = "WaveAnalysisStarted"
	// EventWaveAnalysisPassed: a wave passed its analysis; the next may move.
	EventWaveAnalysisPassed = "WaveAnalysisPassed"
	// EventWaveAnalysisFailed: a wave failed its analysis (Warning); the
	// message names the check and its values.
	EventWaveAnalysisFailed = "WaveAnalysisFailed"
	// EventWaveRolledBack: every moved cluster is back on its earlier snapshot.
	EventWaveRolledBack = "WaveRolledBack"
	// EventResourceSnapshotMarkedFailed: the rollout marked the snapshot
	// AnnotationFailedAnalysis (Warning).
	EventResourceSnapshotMarkedFailed = "ResourceSnapshotMarkedFailed"
)

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

// Package framework is the scheduler's plugin framework: pure logic that decides,
// in one cycle, which member clusters a placement must be on, and explains the
// decision for every cluster. It reads no API server; the scheduler controller
// loads the world into a CycleInput, calls RunCycle, and writes the bindings and
// the policy snapshot's status from the CycleResult.
//
// The default plugins live in hub/scheduler/plugins; plugins.NewFramework returns
// a framework with all of them.
//
// # A cycle
//
// RunCycle goes through these stages, modelled on kube-scheduler's framework and
// KubeFleet's scheduler:
//
//  1. Scope: every cluster is considered; for PickFixed only the named ones (the
//     others are "not named", and a bound one is unscheduled).
//  2. PreFilter: each plugin prepares its Filter and may return Skip (nothing to
//     do), narrow the clusters considered (the Location plugin keeps its chosen
//     Location's clusters), or reject every cluster (no Location matches).
//  3. Filter: every considered cluster goes through the filters. A cluster the
//     placement is not on is rejected by the first filter that says no, which the
//     decision names (FilteredBy). A cluster the placement is on goes through all
//     of them, and the rejection's code says what it means there:
//     ClusterUnschedulable (not eligible, untolerated taint) keeps it and reports
//     why; ClusterMismatch (affinity, strict labels, placement affinity, Location)
//     means it no longer matches; ClusterAlreadySelected is expected. Over a
//     fleet view, a NarrowingPlugin (cluster affinity, from the label index) may
//     name the only clusters it can pass: the others (without a binding) are
//     filtered out without being filtered, and only those whose decision the
//     result shows are filtered afterwards, to name the plugin and reason they
//     would have had.
//  4. By placement type:
//     - PickAll selects every cluster that passed; a bound cluster that no longer
//     matches is unscheduled. Clusters are scored too, to explain their standing.
//     - PickFixed selects every named cluster that passed; a named cluster that no
//     longer matches stays (misplaced); one that is not eligible or does not exist
//     leaves the policy unfulfilled. Named clusters are never moved.
//     - PickN: batch and post-batch, PreScore, Score, sort and pick; see below.
//  5. Result: the decisions (selected clusters first, each group sorted by name),
//     the selection, the clusters to unschedule, the misplaced ones, and the
//     Scheduled condition: SchedulingPolicyFulfilled, SchedulingPolicyUnfulfilled
//     (fewer clusters than asked) or ScheduleFailed (none), with a message naming
//     the clusters left out and why (at most Options.MaxMessageClusters of them).
//
// # PickN
//
// The clusters the placement is on are kept — those that no longer match too, as
// misplaced (Kratix: a placed workload is flagged, never moved). The batch is
// numberOfClusters minus the kept clusters:
//
//   - Scale up (batch > 0): PostBatch plugins may lower the batch. PreScore runs
//     with the feasible clusters (kept and candidates), then the
//     selection-independent Score plugins score them once. Then clusters are picked
//     one at a time: the selection-dependent plugins (those implementing Reserve,
//     such as topology spread) filter and score the remaining candidates, the best
//     total score wins (preference score first — the rank of the cluster's group
//     in clusterPreferences —, then topology spread score, then affinity score), and
//     among equal best scores the cycle's Rand picks one at random (without Rand,
//     the first by name). The pick is Reserved before the next one. A cluster is
//     randomised once, when first picked; later cycles keep it.
//   - Scale down (batch < 0): misplaced clusters go first (by name), then, one at
//     a time, the lowest-scoring kept cluster (the last by name on a tie), with
//     Unreserve after each.
//
// # Plugins
//
// A plugin implements Plugin and any of PostBatchPlugin, PreFilterPlugin,
// FilterPlugin, PreScorePlugin, ScorePlugin and ReservePlugin; each interface's
// doc states its contract. A nil *Status is success; an error status can only be
// made by FromError. A filter that rejects many clusters, each with a reason of
// its own, returns NewStatusFor: the cycle formats only the reasons its decisions
// and the Scheduled condition show. Per-cycle data lives in the CycleState,
// written under the plugin's name and read back with a typed getter built on
// ReadState. The framework reuses a finished cycle's per-cluster arrays (the
// ClusterInfos among them) in later cycles: a plugin must not keep a
// ClusterInfo or the CycleState past the cycle.
//
// # Dynamic selectors
//
// Kratix's run-time destination selectors come in as CycleInput.DynamicSelectors
// and are merged into the placement's required cluster affinity by
// EffectiveSelectors, with precedence placement > placement workflow > resource
// workflow (or, in the older form, without override).
package framework

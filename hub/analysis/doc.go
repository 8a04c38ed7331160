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

// Package analysis evaluates the analyses of staged update runs (an Analysis
// stage task, hub/updaterun) and of rolling updates (spec.strategy.rollingUpdate
// .analysis, hub/rollout): it compiles their checks, runs a round over a set
// of clusters and judges it. It holds no state of its own beyond a cache of
// compiled checks; the callers keep the counts in their status.
//
// An analysis judges a set of clusters: the clusters a run's stage just
// updated, or a wave of a rolling update. Every interval it runs a round: each
// check is evaluated once over the clusters (Run). A round passes when every
// check is true. The analysis passes after successCount passing rounds in a
// row and fails after failureLimit failing rounds in all (JudgeRound). A check
// that cannot be evaluated (a runtime error, such as a missing map key) fails
// its round, with the error as its message. A cel check judges what the
// members report; a prometheus check (prometheus.go) a PromQL query's result.
package analysis

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

// Package plan answers "what would this placement or override do?" without
// doing it: the engine behind PlacementPlan (apis/plan/v1beta1) and
// `kubectl flotilla plan`.
//
// A Planner loads the hub's current state read-only (plan.go) — member
// clusters, the placement and its bindings, the latest override snapshots, the
// objects the placement selects, the Works the hub sends now — puts the
// proposed objects in place of the ones they edit, and calls the functions the
// controllers call: the scheduler framework's cycle, overrides.Applicable and
// Apply, envelope.Unwrap, rollout.SelectWave and the staged update run's stage
// computation. The decisions on top of those (decide.go) are pure and
// table-tested: which clusters are selected, kept and dropped, how rendered
// manifests compare with what each cluster gets now, the waves of a rolling
// update, and which manifests a user may see (Redact).
//
// Nothing is written: a plan is never stored and leaves no trace on the hub or
// the members.
package plan

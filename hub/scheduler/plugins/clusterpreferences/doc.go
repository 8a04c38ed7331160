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

// Package clusterpreferences is the scheduler plugin for a PickN placement's
// ordered cluster preferences (spec.policy.clusterPreferences): groups of
// clusters, the most preferred first.
//
// The rules:
//
//   - A cluster belongs to the first group whose label selector it matches. A
//     cluster in no group is filtered out (ClusterMismatch: a cluster the
//     placement is already on no longer matches, is misplaced and is removed
//     first when scaling down).
//   - A cluster of group i (from 0) of k groups scores PreferenceScore k-i, which
//     the framework compares before every other score: the placement fills from
//     the first group, and a later group gets a cluster only when no cluster of
//     an earlier group can take it (too few clusters, or the others are filtered
//     out: not eligible, an untolerated taint, the rest of the policy). Affinity
//     and topology spread order the clusters within a group.
//   - Scaling down removes the lowest-scoring cluster first, so a cluster of the
//     least preferred group goes first.
//   - Like every PickN placement, one stays on the clusters it is on: a more
//     preferred cluster that becomes available again does not pull it back.
//
// Without clusterPreferences, or for PickAll and PickFixed, the plugin does
// nothing (PreFilter and PreScore return Skip).
package clusterpreferences

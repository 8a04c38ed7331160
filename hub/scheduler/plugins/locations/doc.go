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

// Package locations is the scheduler plugin for kcp-style Locations: a placement
// with locationSelectors is kept in ONE Location, and the rest of its policy
// applies to that Location's clusters only.
//
// In its PreFilter the plugin chooses the Location:
//   - Sticky: while the placement has active bindings, it stays in the Location
//     they are in — of the Locations that still match the selectors, the one whose
//     instanceSelector matches the most bound clusters (the first by name on a
//     tie) — even if that Location has no eligible cluster left.
//   - Otherwise it picks at random (with the cycle's Rand; the first by name
//     without one) among the Locations whose labels match any of the selectors and
//     that have at least one eligible cluster (joined, connected, healthy, not
//     leaving; see clustereligibility.Check).
//
// Clusters outside the chosen Location are left out of consideration, with the
// reason "not in chosen Location X"; a placement bound to such a cluster no longer
// matches there. No matching Location, or none with an eligible cluster, leaves
// no cluster at all, which makes the cycle fail with a message saying so.
package locations

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

// Package evicted is the scheduler plugin that keeps a placement off the clusters
// it was evicted from (framework.CycleInput.ExcludedClusters; the scheduler fills it
// from the executed ClusterResourcePlacementEvictions of the placement).
//
// An excluded cluster gets no new binding, and a binding the placement already has
// there goes: the plugin rejects the cluster with framework.ClusterEvicted, which
// the framework turns into an Unschedule in every placement type — a PickN
// placement is not left "misplaced" on it, as with a mismatch, but picks a
// replacement among the other clusters in the same cycle. The exclusion lasts as
// long as the eviction object exists.
//
// PickFixed placements are never moved (their clusterNames say where they go), so
// the plugin does not apply to them; evictions of PickFixed placements are refused
// as invalid in the first place.
package evicted

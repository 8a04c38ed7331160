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

// Package eviction carries out ClusterResourcePlacementEvictions: requests to take
// a placement off one member cluster, within the placement's disruption budget.
//
// An eviction is decided once. Its Valid condition says whether it makes sense:
// False (final) when the placement does not exist (PlacementNotFound), is being
// deleted (PlacementDeleting), is PickFixed (PickFixedNotEvictable: PickFixed
// placements are never moved; change clusterNames instead), or is not on the
// cluster (BindingNotFound: no Scheduled or Bound binding there). A valid
// eviction is then checked against the ClusterResourcePlacementDisruptionBudget
// of the placement's name, if there is one:
//
//   - Executed=False, BlockedByDisruptionBudget, while evicting would break the
//     budget; the message gives the numbers. It is retried (every RetryInterval,
//     and when the placement's bindings or budget change) until it fits.
//   - Executed=True, Evicted (final) once it fits: an Event on the placement and
//     flotilla_evictions_total{reason="manual"} record it.
//
// Executing an eviction changes no binding itself: the scheduler reads the executed
// evictions and keeps the placement off their clusters (the Evicted plugin), which
// unschedules the binding there (a PickN placement picks a replacement elsewhere),
// and the Work, and so the resources on the member, go. The exclusion lasts while
// the eviction object exists; deleting it lets the scheduler use the cluster again.
//
// # Budget arithmetic (see CheckBudget)
//
// The placement's target count is numberOfClusters for PickN and the number of its
// active (Scheduled or Bound, not deleting) bindings for PickAll. A cluster is
// available when its active binding's Available condition is True and observed at
// the binding's current generation; a cluster whose eviction has already executed
// counts as unavailable while its binding is still there. An eviction may execute
// when, after it, the available clusters are at least minAvailable, or the
// unavailable ones (target minus available) at most maxUnavailable.
//
// Percentages are of the target count and round towards availability: minAvailable
// rounds up and maxUnavailable rounds down (50% of 3 is minAvailable 2, and 25% of 3
// is maxUnavailable 0). Kubernetes PodDisruptionBudgets round minAvailable up too,
// but maxUnavailable up as well; we round it down so that a percentage never allows
// more disruption than it says.
package eviction

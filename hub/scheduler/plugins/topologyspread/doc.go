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

// Package topologyspread is the scheduler plugin for topology spread constraints:
// it spreads the clusters a PickN placement picks over the domains of a topology
// key (the values of that cluster label), like Kubernetes spreads pods over zones.
//
// # Domains and counts
//
// The domains of a constraint are the values of its topology key on the feasible
// clusters (those that passed every other filter, and those the placement is kept
// on). A domain's count is the number of selected clusters in it: the clusters the
// placement is kept on, misplaced ones included, and those picked earlier in the
// cycle. Unhealthy or otherwise filtered clusters do not make domains, so a zone
// whose only cluster is down does not hold the spread back.
//
// # Filtering (whenUnsatisfiable: DoNotSchedule)
//
// A candidate is rejected (ClusterUnschedulable) if picking it would make its
// domain's count exceed the smallest count of any domain by more than maxSkew:
// count(domain)+1-min(counts) > maxSkew. As in Kubernetes, a candidate without
// the topology key is rejected too: it belongs to no domain, so picking it could
// not be accounted for.
//
// # Scoring (both kinds of constraint)
//
// A cluster's topology spread score is minus the number of selected clusters in
// its domain (not counting itself), summed over the constraints: fewer placements
// in the domain, higher score. For a ScheduleAnyway constraint, a cluster without
// the topology key is not counted in any domain and scores lower than every
// cluster that has the key (minus the largest count, minus one), so it is picked
// only when nothing else is left — like Kubernetes, which gives such nodes the
// lowest score.
//
// # Picking
//
// The plugin is selection-dependent (it implements Reserve): the framework picks
// PickN clusters one at a time, best topology spread score first, and calls
// Reserve after each pick, so every pick sees the counts the earlier ones made.
// This greedy order never breaks a DoNotSchedule constraint (each pick keeps
// count <= min+maxSkew, and min never decreases), though it may pick fewer
// clusters than asked when the constraint cannot be met; it is not guaranteed to
// find the spread a global search would. Scaling down removes the lowest-scoring
// cluster first, which is one in the most crowded domain. Clusters the placement
// is already on are never moved to improve the spread.
//
// Topology spread constraints apply to PickN only; for other placement types the
// plugin returns Skip.
package topologyspread

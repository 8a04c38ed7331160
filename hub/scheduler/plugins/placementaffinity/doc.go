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

// Package placementaffinity is the scheduler plugin for placement affinity and
// anti-affinity (Crossplane's workload affinity): placing near, or away from, the
// clusters other placements are on — "the front-end goes where the back-end runs".
//
// A term selects other placements by their labels (never the placement itself) and
// names a topologyKey, a cluster label whose values are the topology domains; the
// built-in label cluster.flotilla.io/name makes every cluster its own domain. The
// term's domains are the values of the topology key on the clusters where a
// selected placement is (a cluster without the key contributes no domain).
//
//   - Required affinity terms (all of them) filter: a cluster must have the
//     topology key and its domain must be one of the term's domains. If no
//     selected placement is anywhere, no cluster qualifies: unlike Kubernetes pod
//     affinity there is no exception for the first of a group.
//   - Required anti-affinity terms (all of them) filter: a cluster whose domain is
//     one of the term's domains does not qualify; a cluster without the key does.
//   - Preferred terms score, adding to the affinity score: an affinity term its
//     weight for clusters in one of its domains, an anti-affinity term its weight
//     for clusters in none of them ("a cluster scores the weights of the terms it
//     meets").
//
// Failing a required term is a ClusterMismatch: where the placement is already
// bound, the cluster no longer matches (PickAll removes it, PickN keeps it as
// misplaced).
package placementaffinity

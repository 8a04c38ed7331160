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

// Package fleet holds the scheduler's fleet snapshot, as kube-scheduler keeps one
// for nodes: one shared, generation-numbered view of the member clusters, updated
// one member at a time from MemberCluster events, from which every scheduling
// cycle takes an immutable framework.Fleet without listing, copying or sorting
// the fleet.
//
// An event changes one entry and bumps the generation only when it changes
// something the scheduler reads (SchedulingEqual): labels, spec, deletion,
// conditions, properties and resource usage. A heartbeat bumps nothing and costs
// no copy. The next View after a bump merges the changed members into the last
// view (one pass over the sorted members, O(n) pointer copies); views in use are
// never touched, so a cycle never sees a half-applied update.
package fleet

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

// Package failover decides when a placement must leave a cluster on its own
// account: a NoExecute taint it does not tolerate (the hub's unreachable and
// not-ready taints, or a user's drain) once its toleration runs out, or — opted
// in with policy.unavailableEvictionSeconds — resources that stay unavailable on
// a healthy cluster. It is a small controller of its own, outside the scheduling
// cycle. It also moves placements with policy.failback back to a more
// preferred cluster: DecideFailback decides, FailbackReconciler carries the
// decision out (failback_controller.go says what it reads and writes). For
// placements with policy.fencing, DecideFencing decides when the copy a
// placement leaves is known stopped (its agent confirmed the removal, or the
// lease plus --fencing-margin ran out since the hub last heard from it), and
// FencingReconciler lets its Work go then and reports the placement's Fencing
// condition; the scheduler starts the placement elsewhere only once the old
// binding is gone (hub/scheduler fencedCreates).
//
// Contract (see docs/concepts/pipeline.md):
//
//   - Input: the placement's policy (type, tolerations, unavailableEvictionSeconds),
//     its active bindings (their Available condition), and the taints and
//     AgentConnected/Healthy conditions of the clusters they are on.
//   - Output: only the EvictionRequested condition of each active binding, written
//     with server-side apply as field manager flotilla-failover. True (reason
//     TaintNotTolerated or UnavailableTooLong) asks the scheduler to take the
//     placement off the cluster; False (KeptDespiteTaint) records why it stays;
//     absent means neither. It writes nothing else, and never deletes or
//     unschedules a binding itself.
//   - Pacing: new requests are rate limited across the fleet (--eviction-rate,
//     --eviction-burst) and paused while more than PartitionThreshold of the
//     clusters are unreachable (the hub is then the likely casualty). A request
//     already made costs nothing again.
//   - The scheduler honours True by excluding the cluster from the cycle; it keeps
//     the binding until the replacement is available or --eviction-graceful-timeout
//     passes, then unschedules it, and the rollout removes it.
package failover

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

// Package taints is the one definition of how a placement's tolerations meet a
// member cluster's taints. The scheduler's taint filter
// (hub/scheduler/plugins/tainttoleration) and the failover controller
// (hub/failover) both decide through it, so a cluster the scheduler picks is
// not one failover evicts from at once, and the other way round.
//
// The rules follow Kubernetes' taint manager (pkg/controller/tainteviction):
//
//   - A toleration matches a taint when its effect is empty or the taint's, and
//     either its operator is Exists and its key is empty or the taint's, or its
//     operator is Equal (the default) and its key and value are the taint's.
//   - For each NoExecute taint, the first matching toleration in the policy's
//     list decides: without tolerationSeconds it tolerates the taint forever;
//     with tolerationSeconds <= 0 not at all; otherwise for that many seconds,
//     counted from the taint's timeAdded. (Kubernetes' GetMatchingTolerations
//     takes the first match per taint, and getMinTolerationTime the minimum
//     over the taints.)
//   - A placement leaves a cluster at the earliest deadline of its NoExecute
//     taints. A NoExecute taint no toleration matches is tolerated for the
//     hub's --default-toleration (Kubernetes adds such a default toleration to
//     pods for its not-ready and unreachable taints only).
//   - tolerationSeconds too large for a time.Duration (>= 9 223 372 037) are
//     taken as the largest one, about 292 years: they never wrap round into
//     "already expired".
package taints

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

// Package cli holds Flotilla's client commands, which the kubectl plugin
// (`kubectl flotilla`, hub/kubectl-flotilla) and the hub binary (`hub cordon`,
// `hub uncordon`, `hub drain`) share:
//
//   - status <placement>: the placement as a tree: placement → clusters →
//     conditions → failed, drifted and diffed manifests;
//   - why <placement> <cluster>: the scheduler's decision about one cluster, in
//     sentences: each filter's verdict, the scores, the Location, taints and
//     tolerations, as recorded on the latest scheduling policy snapshot;
//   - clusters: the fleet at a glance;
//   - approve <approval-request>: approve a stage of a staged update run;
//   - cordon, uncordon, drain <cluster>.
//
// Every command works against any hub kubeconfig (the standard kubeconfig flags);
// `-n` selects ResourcePlacements in a namespace instead of
// ClusterResourcePlacements. Only approve, cordon, uncordon and drain write.
package cli

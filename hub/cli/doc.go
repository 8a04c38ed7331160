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

// Package fleet brings up and tears down a local Flotilla fleet on one machine: kwok
// clusters (real kube-apiserver, etcd, controller-manager and scheduler with fake
// nodes) for the hub and its members, the hub installed from manifests/hub, and the
// hub and agent binaries as local processes. The localfleet command and the e2e
// suites both drive it.
//
// Everything it makes lives under one directory (default .localfleet/): the kwok
// work directory, kubeconfigs, logs and a state file that lets Down remove exactly
// what Up made, from another process, any number of times.
package fleet

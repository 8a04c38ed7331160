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

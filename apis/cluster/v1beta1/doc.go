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

// Package v1beta1 holds the cluster.flotilla.io/v1beta1 API: the MemberClusters that
// make up a fleet and the Locations that group them.
//
// A MemberCluster is created on the hub for every cluster that runs the Flotilla
// agent. The hub reports its membership, agent connection and health as conditions,
// keeps a few built-in labels on it (see [LabelClusterName]) and taints it
// automatically when it becomes unreachable or unhealthy (see [TaintUnreachable]).
// Every MemberCluster owns a namespace on the hub, [MemberNamespace], where the work
// destined for it is kept.
//
// +groupName=cluster.flotilla.io
// +kubebuilder:object:generate=true
package v1beta1

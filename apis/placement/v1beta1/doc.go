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

// Package v1beta1 holds the placement.flotilla.io/v1beta1 API: what to place across
// the fleet and how, and the objects the hub keeps while doing it.
//
// Users write ClusterResourcePlacements (cluster-scoped) and ResourcePlacements
// (namespaced); both share [PlacementSpec] and [PlacementStatus]. The hub answers with
// ClusterSchedulingPolicySnapshots / SchedulingPolicySnapshots (one per policy
// revision, listing every cluster considered and why), ClusterResourceSnapshots /
// ResourceSnapshots (one set per revision of the selected resources),
// ClusterResourceBindings / ResourceBindings (one per placement and target cluster),
// and Works in each member cluster's hub namespace, which the agent applies.
// ClusterResourceOverrides and ResourceOverrides change resources per cluster;
// ClusterResourcePlacementEvictions and ClusterResourcePlacementDisruptionBudgets
// remove a placement from a cluster, within a budget.
//
// Condition types and reasons are in conditions.go; well-known labels, annotations and
// finalizers in well_known.go.
//
// +groupName=placement.flotilla.io
// +kubebuilder:object:generate=true
package v1beta1

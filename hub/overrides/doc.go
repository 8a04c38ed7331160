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

// Package overrides applies ClusterResourceOverrides and ResourceOverrides to the
// manifests a member cluster receives, and keeps their snapshots.
//
// The pure part (Apply, Applicable, the variables) decides, for one cluster, what
// each manifest becomes: the override snapshots a binding names are applied in
// order — ClusterResourceOverrides first, then ResourceOverrides, each by name —
// and within an override its rules in order; a rule applies when its
// clusterSelector selects the cluster (labels and properties, as the scheduler's
// required cluster affinity). A JSONPatch rule patches the manifest, a Delete rule
// keeps it off the cluster. Values may use the variables ${MEMBER-CLUSTER-NAME},
// ${MEMBER-CLUSTER-LABEL-KEY-<key>} and ${MEMBER-CLUSTER-PROPERTY-<name>}; any
// other ${MEMBER-CLUSTER-...} name, a label the cluster lacks or a property it does
// not report is an error that names it, never a literal in the member's object.
//
// Planner decides which override snapshots each binding applies (the rollout and
// staged update runs write them on the binding with the resource snapshot);
// the work generator reads them back with Named and applies them with Apply.
//
// SnapshotReconciler turns every change of an override into a new immutable,
// indexed snapshot, so that bindings name what they apply and an override change
// rolls out like a resource change.
package overrides

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

package v1beta1

// Conflicted is a placement-level condition only (ClusterResourcePlacementConflicted
// on a ClusterResourcePlacement, ResourcePlacementConflicted on a ResourcePlacement).
// A ClusterResourcePlacement and a ResourcePlacement, or two ResourcePlacements of a
// namespace, may select the same object; the placement created first places it, and
// the later one leaves that object out (and only that object) and reports it here,
// so that they never fight over it. The condition is present only while the
// placement leaves objects out. The Namespace a ResourcePlacement brings is never a
// conflict: members get it created if missing and never changed (see
// AnnotationCreateOnly).
const (
	// ConditionConflicted is the per-cluster-type suffix of the Conflicted condition.
	ConditionConflicted = "Conflicted"

	// ReasonSelectedByEarlierPlacement (True): objects the placement selects are
	// placed by a placement created before it; the message names them and it.
	ReasonSelectedByEarlierPlacement = "SelectedByEarlierPlacement"
)

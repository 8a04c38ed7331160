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

// Reasons of the Scheduled condition (ClusterResourcePlacementScheduled,
// ResourcePlacementScheduled) about the resource selectors.
const (
	// ReasonInvalidResourceSelectors (False): the resource selectors cannot be
	// answered, and nothing is placed until they change; the message says why
	// (an unknown kind, a namespaced kind a ClusterResourcePlacement selects
	// directly, or a reserved namespace: kube-*, flotilla-system or
	// flotilla-member-*, which are never placed).
	ReasonInvalidResourceSelectors = "InvalidResourceSelectors"
)

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

// EvictionRequested is the failover controller's word, on a binding, on whether
// the placement must leave the binding's cluster because of a NoExecute taint it
// does not tolerate or because its resources there stayed unavailable too long
// (policy.unavailableEvictionSeconds). The scheduler reads it: True excludes the
// cluster (a PickN placement gets a replacement, and the binding stays until the
// replacement is available or the eviction's graceful timeout passes); False
// explains why the placement stays despite such a taint. Absent means neither.
const (
	// ConditionEvictionRequested is the type of a binding's EvictionRequested condition.
	ConditionEvictionRequested = "EvictionRequested"

	// ReasonTaintNotTolerated (True): a NoExecute taint's toleration ran out.
	ReasonTaintNotTolerated = "TaintNotTolerated"
	// ReasonUnavailableTooLong (True): the resources were not available on a
	// healthy cluster for longer than policy.unavailableEvictionSeconds.
	ReasonUnavailableTooLong = "UnavailableTooLong"
	// ReasonKeptDespiteTaint (False): the cluster has a NoExecute taint the
	// placement does not tolerate, but it stays: PickFixed placements are never
	// moved, a PickAll placement has nowhere else to go from a merely unreachable
	// cluster, or evictions are paused while most of the fleet is unreachable.
	ReasonKeptDespiteTaint = "KeptDespiteTaint"
)

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

// Ready, Reconciling and Stalled are the conditions tools following the kstatus
// conventions read (Flux's health checks, kubectl wait, cli-utils; see
// docs/how-to/gitops.md). Placements and staged update runs carry them, with the
// top-level status.observedGeneration, computed from their other conditions by
// the controller that writes those: they add no knowledge, only put it the way
// those tools read it. Their reasons are the reasons of the condition that
// decides them, such as ApplyFailed or Waiting.
const (
	// ConditionReady is True when the object is where its spec asks (a
	// placement Available on every cluster, a run succeeded or stopped), False
	// while it is not, and Unknown while what decides it is unknown (an agent
	// disconnected, a stage not reported yet).
	ConditionReady = "Ready"
	// ConditionReconciling is True while the object is on its way and nothing
	// needs fixing; it is absent otherwise.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True while the object cannot go on without a change
	// (a failed apply, an override that does not fit, a failed run); it is
	// absent otherwise.
	ConditionStalled = "Stalled"
)

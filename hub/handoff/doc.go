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

// Package handoff decides state hand-off (spec.stateHandOff): which value of
// each hand-off rule a placement's status keeps from its clusters' feedback
// (Keep), and which values a binding created for a new cluster is given
// (Freeze). The placement controller writes the first into status.handOff;
// the scheduler sets the second as a new binding's spec.handOff; the work
// generator substitutes the binding's values for ${PLACEMENT-HANDOFF-<name>}
// in the cluster's overrides (hub/overrides).
package handoff

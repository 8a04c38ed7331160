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

// Package tainttoleration is the scheduler plugin that keeps placements off
// clusters with taints they do not tolerate.
//
// Both effects, NoSchedule and NoExecute, keep new placements off. A placement
// already on a cluster stays there whatever the taint: NoSchedule only blocks new
// placements by definition, and evicting on NoExecute is hub/failover's call, so
// the decision only reports the untolerated NoExecute taint. Which toleration
// matches a taint, and for how long, is pkg/taints' rule, shared with failover.
//
// Taints apply to every placement type, PickFixed included: naming a cluster does
// not bypass its maintenance taint.
package tainttoleration

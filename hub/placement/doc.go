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

// Package placement runs the first stage of the placement pipeline: for each
// placement — a ClusterResourcePlacement, or a ResourcePlacement, which selects
// objects of its own namespace and brings that namespace along — it selects
// resources on the hub and records them, and its scheduling policy, as immutable
// snapshots (a new one each time either changes), then reports the placement's
// status from what the later stages (scheduler, rollout, work generator, agents)
// record on the bindings. A placement leaves out the objects an earlier placement
// places (conflicts.go) and refuses selectors naming a reserved namespace
// (reserved.go).
package placement

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

// Package apply is the agent's apply library: it makes a member cluster match the
// Works the hub sends, reports their status, and removes what they applied.
//
// An Applier applies every manifest of a Work with server-side apply, as its field
// manager, in a fixed order: Namespaces, then CustomResourceDefinitions (custom
// resources of a CRD in the same Work wait, for a bounded time, until it is
// established), then the rest in manifest order. A manifest that fails does not stop
// the others; its Applied condition carries the API server's message.
//
// Every object it applies carries the annotation AnnotationWork naming the Work, and
// the Applier keeps a record per Work on the member: a ConfigMap in its namespace
// holding the hash of the spec last applied (SpecHash), the delete strategy and the
// objects applied. From the record it deletes what a Work no longer lists, skips
// Works that have not changed since the last apply, removes everything when the
// Work goes away (Remove), and tells the hub which Works the member holds
// (Inventory). Objects are only ever deleted while they still carry the annotation
// of the Work being cleaned up, so something taken over by another Work, or by
// someone else, is left alone; and only if the Work created them: the record says,
// per object, whether the Work created it or took it over, and what it took over is
// released (left, without Flotilla's marks) unless deleteStrategy.takenOver is
// Delete. A Namespace that holds objects no Work applied is never deleted (see
// decideRemoval and namespaceInUse; docs/concepts/deletion.md).
//
// Availability of what was applied comes from package availability (with the Work's
// CEL availability rules); Status re-evaluates it, reads the Work's status feedback
// (JSONPaths) and looks for drifts — fields the hub manages that were changed on the
// member — which it reverts (whenToApply Always, the only writes Status makes) or
// reports (IfNotDrifted). With Options.OnChange set, the Applier watches the objects
// it applied (one informer per resource, selecting LabelAppliedBy) and reports every
// change, so that Status is called on change rather than on a timer.
package apply

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

// Package pipeline holds what the controllers of the placement pipeline share:
// which binding is active, which resource and policy snapshots are the latest,
// the field managers, the cache indexes, and the one way a controller writes its
// own conditions on a binding (server-side apply of the status subresource, so
// that no controller overwrites another's conditions and none needs to retry on
// a conflict).
//
// Which writer owns which field of which object is the table Ownership
// (ownership.go), from which docs/concepts/pipeline.md's "Who writes what" is
// generated and against which hub/app checks the managedFields of a pipeline
// run; a writer writes nothing else. Finalizers are written only through
// AddFinalizer and RemoveFinalizer (a merge patch with the resourceVersion).
package pipeline

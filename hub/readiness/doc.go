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

// Package readiness computes the conditions that tools following the kstatus
// conventions read (Ready, Reconciling and Stalled, beside the top-level
// status.observedGeneration) from the conditions Flotilla's controllers already
// write: for placements, staged update runs and MemberClusters. Each kind has one
// pure function returning a Verdict; Set writes a Verdict into a condition list.
// The writers of each kind's status call them just before they write, so the
// three conditions never lag the ones they are computed from.
//
// What each kind reads as, and why, is in docs/how-to/gitops.md.
package readiness

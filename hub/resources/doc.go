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

// Package resources watches every kind on the hub that a placement may select and
// answers resource selectors from those caches. It finds kinds by discovery (and
// again periodically, so a CRD installed later becomes selectable), skips kinds
// and objects that must never be copied to a member, and tells its subscribers
// about every change so that placements see edits to what they selected.
package resources

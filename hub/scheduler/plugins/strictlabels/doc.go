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

// Package strictlabels is the scheduler plugin for Kratix's strictMatchLabels: a
// member cluster with spec.strictMatchLabels set takes only placements that select
// it explicitly by its labels.
//
// "Explicitly" means: one of the placement's effective required terms (its own
// required cluster affinity merged with its dynamic selectors, see
// framework.EffectiveSelectors) has label requirements, and they match the
// cluster's labels. A placement that selects no labels at all — no required
// affinity, or only property requirements, and no dynamic selectors — skips strict
// clusters: Kratix's "no selector means every destination, except strict ones".
// A PickFixed placement names its clusters, which is explicit enough: the plugin
// does not apply to it.
package strictlabels

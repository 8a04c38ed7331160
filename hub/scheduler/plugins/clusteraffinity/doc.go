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

// Package clusteraffinity is the scheduler plugin for cluster affinity: required
// terms filter clusters, preferred terms score them.
//
// Required terms are ORed; inside a term the label selector (matchLabels and
// matchExpressions In, NotIn, Exists, DoesNotExist) and every property requirement
// are ANDed. The placement's dynamic selectors are merged into the required terms
// first (framework.EffectiveSelectors), so Kratix-style destination selectors
// filter here too.
//
// Property requirements compare a cluster property, as a resource.Quantity, with
// Gt, Ge, Eq, Ne, Lt or Le. Properties are those the agent reports in
// status.properties, and the resource properties derived from status.resourceUsage:
// resources.flotilla.io/{total,allocatable,available}-{cpu,memory}. A cluster that
// does not report the property, or whose value is not a quantity, does not match.
//
// A cluster's affinity score is the sum of the weights of the preferred terms it
// matches. A term with a propertySorter scales its weight linearly between the
// smallest and the largest value of the property among the feasible clusters that
// match the term: with Descending the largest value gets the full weight and the
// smallest none, with Ascending the other way round; when all values are equal
// every such cluster gets the full weight. A cluster lacking the property gets
// nothing from the term.
package clusteraffinity

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

// Package sameplacementantiaffinity is the scheduler plugin that keeps a placement
// from being bound twice to one cluster: a cluster the placement already has an
// active binding to is never a candidate for a new one. The framework keeps the
// existing binding (the plugin's ClusterAlreadySelected is not a failure); the
// plugin makes sure a cycle never adds a second.
package sameplacementantiaffinity

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

// Package v1beta1 holds the plan.flotilla.io/v1beta1 API: PlacementPlan, a
// what-if preview of a placement or override change.
//
// A PlacementPlan is never stored. Like a TokenReview, it is only created: the
// hub's aggregated API server (hub/proxy, APIService v1beta1.plan.flotilla.io)
// answers a create with the same object, its status filled in by the hub's
// planner (hub/plan). The planner runs the scheduler, the overrides and the
// envelopes on the hub's current state and writes nothing.
//
// +groupName=plan.flotilla.io
// +kubebuilder:object:generate=true
// +kubebuilder:skip
package v1beta1

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

// Package availability decides whether an object applied on a member cluster is
// available (ready), from the object alone.
//
// Check is a pure function over the object as the member's API server returns it. It
// knows the workload kinds (Deployment, StatefulSet, DaemonSet, Job), Services,
// CustomResourceDefinitions, PodDisruptionBudgets and PersistentVolumeClaims; the
// configuration-like kinds (Namespace, ConfigMap, Secret, RBAC, quotas, ...) are
// available as soon as they exist; every other kind is reported as not trackable,
// which counts as available but says so in its reason. An object being deleted is
// not available, whatever its kind.
package availability

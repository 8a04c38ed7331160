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

// Package properties gathers the member cluster's properties that the agent
// reports to the hub in every heartbeat: node count, Kubernetes version,
// infrastructure provider, capacity, allocatable and available resources,
// and the health of the member API server.
//
// A Collector refreshes them in the background at its own pace (listing
// nodes and pods is not free, and a heartbeat must never wait for it);
// Latest returns the last values collected, at once.
package properties

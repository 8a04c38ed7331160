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

// Package replica makes hub replicas cover for each other. Every replica that
// serves tunnels renews its own Lease (coordination.k8s.io) in the hub
// namespace (Lease); a MemberCluster's status.agentSession names the replica
// that holds its agent's session. The leader's Sweeper records the agents of a
// replica whose Lease expired as disconnected, so that a replica that dies
// does not leave its members AgentConnected=True. Liveness costs one Lease
// write per replica per renewal, not one write per member.
package replica

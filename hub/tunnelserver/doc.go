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

// Package tunnelserver is the hub end of the agents' tunnels. It runs in every hub
// replica (not only the leader): it serves joins and tunnel sessions on one TLS
// port, keeps each member's heartbeats in memory, writes MemberCluster status only
// on transitions and when a property moves beyond its threshold (threshold.go;
// never on a timer, so an idle fleet costs no writes), delivers each member its Work
// (on connect only what differs from what the agent holds, then changes as they
// happen) and writes back the Work status the agent reports.
//
// Identity: a session is accepted only with the member certificate that
// MemberCluster status.identity names (join, re-join and renewal record it), and
// ends when the member is deleted or its certificate is replaced. Replicas: the
// server renews this replica's Lease (hub/replica) and writes a member's
// connection status only while status.agentSession names its own session
// (generation), so a replica that lost a session never overwrites the newer
// one's status. A replica that stops writes no disconnections (the replica
// that takes the session over writes it; the leader's sweep records a member
// that does not come back once this replica's Lease is gone), and a member that
// was connected already gets no Connect Event. The serving certificate is kept
// in a Secret and reissued after two thirds of its lifetime (hub/pki).
package tunnelserver

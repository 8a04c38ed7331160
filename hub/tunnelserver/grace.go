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

package tunnelserver

import (
	"strings"
	"time"
)

// SessionEnd is what a replica knows when one of its member sessions has
// ended, and again once it has waited.
type SessionEnd struct {
	// Reason is why the session ended (memberSession.endReason).
	Reason string
	// Stopping: this replica is shutting down.
	Stopping bool
	// Waited is how long the replica has waited since the session ended.
	Waited time.Duration
	// Reconnected: the member holds a newer session on this replica.
	Reconnected bool
	// StandingLost: this replica could not renew its Lease in time and
	// serves no agents (replica.Standing).
	StandingLost bool
}

// EndVerdict is what disconnectAfter decides.
type EndVerdict struct {
	// Wait is how much longer to wait before deciding again; 0 decides now.
	Wait time.Duration
	// Write: record the member disconnected now (writeDisconnected).
	Write bool
	// WaitForStanding: decide again once this replica renews its Lease.
	WaitForStanding bool
}

// disconnectAfter decides when a replica records the end of a member's
// session (AgentConnected False, which turns the member's placements Unknown,
// AgentDisconnected), given grace (Options.DisconnectGrace). The rules:
//
//   - A replica that is stopping records nothing: its agents redial at once,
//     and the leader's sweep records a member that does not come back once the
//     replica's Lease is gone.
//   - A replica that lost its standing (it could not renew its Lease in
//     time, so it cannot reach its API server) decides nothing until it
//     renews again: a write would fail, and a member that does not
//     reconnect anywhere is recorded by the leader's sweep once the Lease
//     expires. If the replica renews before that, it decides by the rules
//     below (writeDisconnected writes only while the member's status still
//     names this session).
//   - A member that reconnected to this replica records nothing: the new
//     session holds its status. (A member that reconnected to another replica
//     is guarded by writeDisconnected itself: the status names the other
//     session.)
//   - A session ended by missing heartbeats (heartbeatOverdue) is recorded at
//     once: the hub has already heard nothing for several periods.
//   - Any other end (the agent stopped or restarted, the connection broke) is
//     recorded after grace has passed since the end: the hub's knowledge of a
//     member is always up to one heartbeat period old, so a grace of one
//     period leaves status no older than it may already be, and an agent that
//     restarts within it leaves its placements Available. 0 is no grace.
func disconnectAfter(e SessionEnd, grace time.Duration) EndVerdict {
	switch {
	case e.Stopping, e.Reconnected:
		return EndVerdict{}
	case e.StandingLost:
		return EndVerdict{WaitForStanding: true}
	case strings.HasPrefix(e.Reason, heartbeatOverduePrefix), e.Waited >= grace:
		return EndVerdict{Write: true}
	default:
		return EndVerdict{Wait: grace - e.Waited}
	}
}

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

// Package tunnel is the protocol and transport between the hub and the agent
// in each member cluster.
//
// The agent dials out to the hub (members may sit behind NAT; the hub never
// dials a member) and keeps one connection: TLS with the client certificate
// the hub signed at join, ALPN ALPNTunnel, and on it a yamux session in
// which the agent is the client. The agent opens three streams, each
// beginning with a StreamOpen frame: control (Hello/HelloAck, heartbeats,
// Goodbye), work (the agent's WorkInventory, then the hub's WorkUpsert,
// WorkDelete and WorkSyncDone) and status (StatusReport). Every stream
// carries length-prefixed, versioned frames: an 8-byte Header followed by a
// JSON payload, one typed Message per frame. spec.md, beside this file, is
// the specification; const.go holds every wire constant.
//
// The layers, bottom up:
//
//   - frame.go: Header, Encode and Decode (the dispatch table from frame
//     type to message type), FrameReader (size-limited, rejects bad headers
//     before reading the payload) and FrameWriter (safe for concurrent use).
//   - messages.go: the messages.
//   - stream.go: Stream, a typed yamux stream: Send and Recv whole
//     messages, enforcing which frames may appear on which stream.
//   - session.go: Dial and ClientHandshake (agent), ServeConn (hub), and
//     the Session they establish.
//   - server.go: Server, which serves tunnel and join connections on one
//     TLS listener, dispatching by ALPN.
//   - reconnect.go: RunWithReconnect, the agent's redial loop with jittered,
//     capped exponential backoff.
//   - metrics.go: Prometheus collectors, registered on a registry the
//     caller chooses.
//
// A misbehaving peer (bad, oversize or misplaced frame, wrong identity, a
// handshake that does not finish in time) closes its own session and never
// affects another.
package tunnel

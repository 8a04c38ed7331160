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

package tunnel

import (
	"errors"
	"fmt"
	"time"
)

// This file holds every constant that is part of the wire protocol: the
// protocol version, the ALPN names, the frame and stream enums, the size
// limits and the sentinel errors. Changing any value here changes the
// protocol; const_test.go pins them so that a change is deliberate. spec.md
// describes how they are used.

// ProtocolVersion is the version of the tunnel protocol this package speaks.
// It is carried in every frame header and in Hello. An incompatible change to
// the protocol bumps it together with the ALPN names.
const ProtocolVersion uint8 = 1

// ALPN protocol names. The hub serves both on one TLS port and dispatches on
// the protocol the TLS handshake negotiated.
const (
	// ALPNTunnel selects the tunnel: a yamux session carrying the streams
	// described in spec.md. The agent authenticates with its client
	// certificate.
	ALPNTunnel = "flotilla-tunnel/1"
	// ALPNJoin selects the join endpoint, used once by `agent join` (before
	// the agent has a client certificate) to exchange a bootstrap token for
	// a signed certificate.
	ALPNJoin = "flotilla-join/1"
)

// Frame layout and size limits.
const (
	// HeaderSize is the size in bytes of a frame header:
	// version (1) | type (1) | flags (2) | length (4), big-endian.
	HeaderSize = 8

	// DefaultMaxFrameSize is the largest payload a peer accepts unless it is
	// configured otherwise (16 MiB). A Work object stored in etcd is far
	// smaller; the margin is for large Work bundles and status.
	DefaultMaxFrameSize uint32 = 16 << 20

	// MaxFrameSizeLimit is the hard ceiling (64 MiB) for any configured
	// maximum: larger settings are clamped to it.
	MaxFrameSizeLimit uint32 = 64 << 20

	// HandshakeMaxFrameSize is the largest payload either side accepts
	// until the HelloAck that accepts the session (16 KiB): StreamOpen,
	// Hello, HelloAck and Goodbye are small, and a peer that has not been
	// authorized cannot make the other side read more.
	HandshakeMaxFrameSize uint32 = 16 << 10
)

// Capabilities are optional features of protocol version 1, named by strings
// in Hello.Capabilities and HelloAck.Capabilities. Each side announces the
// capabilities it speaks; a session uses a capability only when both announce
// it (Session.HasCapability). A receiver ignores a name it does not know. A
// peer that announces nothing (one that predates capabilities) speaks none of
// them, and every frame and field of spec.md without a capability still
// works with it. Names are never reused for another meaning.
const (
	// CapabilityVersionSkew: the peer announces its build version (the
	// agent in Hello.AgentVersion, the hub in HelloAck.HubVersion) and
	// enforces the version-skew rule of VERSIONING.md on the other's: the
	// hub refuses an agent beyond it, the agent stops instead of redialing a
	// hub beyond it.
	CapabilityVersionSkew = "version-skew"
	// CapabilityAPIProxy: the hub may open API proxy streams
	// (StreamAPIProxy) to the agent, each carrying one HTTP/1.1 connection
	// to the member's Kubernetes API server. An agent announces it only
	// while it serves them (`agent run --proxy`, the default); the hub opens
	// none in a session that did not negotiate it.
	CapabilityAPIProxy = "api-proxy"
)

// FrameType identifies the typed message carried in a frame's payload.
// Type numbers are grouped by the stream that carries them: 0x0_ for the
// control stream (and StreamOpen, which begins every stream), 0x1_ for the
// work stream, 0x2_ for the status stream. Zero is never a valid type.
type FrameType uint8

const (
	// FrameStreamOpen is the first frame on every stream, naming its kind
	// (agent → hub, every stream).
	FrameStreamOpen FrameType = 0x01
	// FrameHello opens the session (agent → hub, control stream).
	FrameHello FrameType = 0x02
	// FrameHelloAck accepts or refuses the session (hub → agent, control).
	FrameHelloAck FrameType = 0x03
	// FrameHeartbeat carries liveness and cluster properties (agent → hub,
	// control).
	FrameHeartbeat FrameType = 0x04
	// FrameHeartbeatAck acknowledges a heartbeat (hub → agent, control).
	FrameHeartbeatAck FrameType = 0x05
	// FrameGoodbye announces that the sender is about to close the session
	// (either direction, control).
	FrameGoodbye FrameType = 0x06

	// FrameWorkInventory lists the Work the agent holds (agent → hub, work
	// stream).
	FrameWorkInventory FrameType = 0x10
	// FrameWorkUpsert delivers a Work object (hub → agent, work).
	FrameWorkUpsert FrameType = 0x11
	// FrameWorkDelete removes a Work object (hub → agent, work).
	FrameWorkDelete FrameType = 0x12
	// FrameWorkSyncDone ends the initial difference after a WorkInventory
	// (hub → agent, work).
	FrameWorkSyncDone FrameType = 0x13

	// FrameStatusReport carries the status of one Work (agent → hub, status
	// stream).
	FrameStatusReport FrameType = 0x20
	// FrameUpsync mirrors objects born on the member to the hub (agent → hub,
	// status stream).
	FrameUpsync FrameType = 0x21
)

var frameTypeNames = map[FrameType]string{
	FrameStreamOpen:    "StreamOpen",
	FrameHello:         "Hello",
	FrameHelloAck:      "HelloAck",
	FrameHeartbeat:     "Heartbeat",
	FrameHeartbeatAck:  "HeartbeatAck",
	FrameGoodbye:       "Goodbye",
	FrameWorkInventory: "WorkInventory",
	FrameWorkUpsert:    "WorkUpsert",
	FrameWorkDelete:    "WorkDelete",
	FrameWorkSyncDone:  "WorkSyncDone",
	FrameStatusReport:  "StatusReport",
	FrameUpsync:        "Upsync",
}

// String returns the name of the frame type, or FrameType(N) for a number
// this version does not know.
func (t FrameType) String() string {
	if name, ok := frameTypeNames[t]; ok {
		return name
	}
	return fmt.Sprintf("FrameType(%d)", uint8(t))
}

// StreamKind names what a yamux stream carries. The agent opens one stream
// of each of the first three kinds, in this order, right after the yamux
// session starts; the hub opens API proxy streams, any number, after the
// handshake (CapabilityAPIProxy). Zero is never a valid kind.
type StreamKind uint8

const (
	// StreamControl carries Hello/HelloAck, heartbeats and Goodbye.
	StreamControl StreamKind = 1
	// StreamWork carries the desired Work set (hub → agent) and the agent's
	// inventory.
	StreamWork StreamKind = 2
	// StreamStatus carries Work status and upsynced objects (agent → hub).
	StreamStatus StreamKind = 3
	// StreamAPIProxy carries one HTTP/1.1 connection from the hub to the
	// member's API server (hub → agent, opened by the hub after the
	// handshake, only with CapabilityAPIProxy). Its first frame is a
	// StreamOpen; after it the stream carries HTTP bytes, not frames.
	StreamAPIProxy StreamKind = 4
)

// streamKinds lists the kinds the agent opens, in the order it opens them.
var streamKinds = []StreamKind{StreamControl, StreamWork, StreamStatus}

// String returns the name of the stream kind, or StreamKind(N) for a number
// this version does not know.
func (k StreamKind) String() string {
	switch k {
	case StreamControl:
		return "Control"
	case StreamWork:
		return "Work"
	case StreamStatus:
		return "Status"
	case StreamAPIProxy:
		return "APIProxy"
	}
	return fmt.Sprintf("StreamKind(%d)", uint8(k))
}

// Valid reports whether k is a stream kind of this protocol version.
func (k StreamKind) Valid() bool {
	return k >= StreamControl && k <= StreamAPIProxy
}

// Limits of API proxy streams.
const (
	// APIProxyOpenTimeout bounds how long the agent waits for the StreamOpen
	// of a stream the hub opened, and then for its API proxy to take the
	// stream; a stream not taken in time is closed.
	APIProxyOpenTimeout = 10 * time.Second
)

// Sentinel errors. Errors returned by this package wrap them; test with
// errors.Is.
var (
	// ErrFrameTooLarge: a frame's length exceeds the receiver's limit (or, on
	// send, the peer's advertised limit).
	ErrFrameTooLarge = errors.New("tunnel: frame too large")
	// ErrUnsupportedVersion: a frame header or Hello carries a protocol
	// version other than ProtocolVersion.
	ErrUnsupportedVersion = errors.New("tunnel: unsupported protocol version")
	// ErrUnknownFrameType: a frame header carries a type this version does
	// not define.
	ErrUnknownFrameType = errors.New("tunnel: unknown frame type")
	// ErrUnexpectedFrame: a known frame arrived on the wrong stream, from the
	// wrong side, or at the wrong point of the session.
	ErrUnexpectedFrame = errors.New("tunnel: unexpected frame")
	// ErrShortHeader: the connection ended in the middle of a frame header.
	ErrShortHeader = errors.New("tunnel: short frame header")
	// ErrTruncatedFrame: the connection ended before the frame's payload was
	// complete, or a payload's length does not match its header.
	ErrTruncatedFrame = errors.New("tunnel: truncated frame")
	// ErrMalformedPayload: a payload is not valid JSON for its frame type.
	ErrMalformedPayload = errors.New("tunnel: malformed payload")
	// ErrInvalidMessage: a message is missing a required field.
	ErrInvalidMessage = errors.New("tunnel: invalid message")
	// ErrUnknownStreamKind: a StreamOpen names a kind this version does not
	// define.
	ErrUnknownStreamKind = errors.New("tunnel: unknown stream kind")
	// ErrDuplicateStream: a StreamOpen names a kind that is already open.
	ErrDuplicateStream = errors.New("tunnel: duplicate stream")
	// ErrUnexpectedStream: the peer opened a stream it may not open: the
	// agent after the handshake, the hub during it, or the hub an API proxy
	// stream in a session without CapabilityAPIProxy (the agent then closes
	// that stream only).
	ErrUnexpectedStream = errors.New("tunnel: unexpected stream")
	// ErrAPIProxyUnavailable: the hub cannot open an API proxy stream
	// because the session did not negotiate CapabilityAPIProxy (the agent
	// predates it or runs with --proxy=false).
	ErrAPIProxyUnavailable = errors.New("tunnel: the agent does not serve the API proxy")
	// ErrHandshakeTimeout: the session was not established in time.
	ErrHandshakeTimeout = errors.New("tunnel: handshake timed out")
	// ErrALPNMismatch: the TLS handshake did not negotiate ALPNTunnel.
	ErrALPNMismatch = errors.New("tunnel: ALPN protocol not negotiated")
	// ErrRefused: the hub refused the session (HelloAck.Accepted is false).
	// The error is a *RefusedError carrying the hub's reason.
	ErrRefused = errors.New("tunnel: session refused")
	// ErrIdentityMismatch: the cluster name in Hello does not match the
	// client certificate, or there is no verified client certificate.
	ErrIdentityMismatch = errors.New("tunnel: peer identity mismatch")
	// ErrMissingCapability: the peer does not announce a capability this side
	// requires (ClientOptions.RequiredCapabilities,
	// ServerOptions.RequiredCapabilities).
	ErrMissingCapability = errors.New("tunnel: peer lacks a required capability")
	// ErrIncompatiblePeer: the agent found the hub's HelloAck unacceptable
	// (ClientOptions.CheckHub), for example a hub version beyond the
	// supported skew. Redialing the same hub does not help.
	ErrIncompatiblePeer = errors.New("tunnel: incompatible peer")
	// ErrSessionClosed: the session is closed; it wraps the cause when known.
	ErrSessionClosed = errors.New("tunnel: session closed")
)

// RefusedError is returned when the hub refuses a session. It matches
// ErrRefused with errors.Is.
type RefusedError struct {
	// Reason is HelloAck.Reason as sent by the hub.
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("tunnel: session refused by hub: %s", e.Reason)
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

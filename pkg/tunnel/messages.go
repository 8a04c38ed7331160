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
	"encoding/json"
	"fmt"
	"time"
)

// Message is a typed frame payload. Every message type of the protocol
// implements it with a value receiver, so both T and *T are Messages; Decode
// always returns values (T), so type switches use `case tunnel.Hello:`.
//
// Payloads travel as JSON objects. Receivers ignore fields they do not know,
// which lets a version add optional fields without a version bump (spec.md,
// Versioning).
type Message interface {
	// FrameType is the frame type that carries this message.
	FrameType() FrameType
}

// validator is implemented by messages with required fields. Encode and
// Decode both call it, so an invalid message is refused before it is sent
// and rejected when it is received.
type validator interface {
	Validate() error
}

func invalid(t FrameType, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidMessage, t, fmt.Sprintf(format, args...))
}

// StreamOpen is the first frame on every stream; it names what the stream
// carries. Sent by the agent, which opens all streams.
type StreamOpen struct {
	// Kind is the stream's kind; a receiver refuses kinds it does not know
	// and a kind that is already open.
	Kind StreamKind `json:"kind"`
}

// Hello is the first frame on the control stream after StreamOpen. Sent by
// the agent.
type Hello struct {
	// ProtocolVersion is the version the agent speaks (ProtocolVersion). The
	// hub refuses a version it does not speak.
	ProtocolVersion uint8 `json:"protocolVersion"`
	// AgentVersion is the agent's build version, for display and logs.
	AgentVersion string `json:"agentVersion,omitempty"`
	// ClusterName is the member cluster the agent speaks for. It must match
	// the CommonName of the agent's client certificate. Required.
	ClusterName string `json:"clusterName"`
	// MaxFrameSize is the largest payload the agent accepts; the hub does not
	// send larger frames. Zero means DefaultMaxFrameSize.
	MaxFrameSize uint32 `json:"maxFrameSize,omitempty"`
	// Capabilities are the optional features the agent speaks (Capability*
	// constants). The session uses those both sides announce; absent (an
	// agent that predates capabilities) means none.
	Capabilities []string `json:"capabilities,omitempty"`
}

// HelloAck answers Hello. Sent by the hub on the control stream. When
// Accepted is false the hub closes the session right after sending it.
type HelloAck struct {
	// Accepted is true when the hub accepts the session.
	Accepted bool `json:"accepted"`
	// Reason says why the session was refused (empty when accepted).
	Reason string `json:"reason,omitempty"`
	// HeartbeatPeriodSeconds is how often the agent should send Heartbeat.
	HeartbeatPeriodSeconds int32 `json:"heartbeatPeriodSeconds,omitempty"`
	// HubReplica names the hub replica that holds the session.
	HubReplica string `json:"hubReplica,omitempty"`
	// MaxFrameSize is the largest payload the hub accepts; the agent does
	// not send larger frames. Zero means DefaultMaxFrameSize.
	MaxFrameSize uint32 `json:"maxFrameSize,omitempty"`
	// HubVersion is the hub's build version, so that the agent can check the
	// version skew (sent with a refusal too). Empty from a hub that predates
	// it.
	HubVersion string `json:"hubVersion,omitempty"`
	// Capabilities are the optional features the hub speaks, as
	// Hello.Capabilities. Absent means none.
	Capabilities []string `json:"capabilities,omitempty"`
}

// Heartbeat reports that the agent is alive, with the member cluster's
// properties. Sent by the agent on the control stream every
// HelloAck.HeartbeatPeriodSeconds.
type Heartbeat struct {
	// Sequence increases by one per heartbeat within a session; the hub
	// echoes it in HeartbeatAck.
	Sequence uint64 `json:"sequence"`
	// SentAt is the agent's clock when the heartbeat was sent.
	SentAt time.Time `json:"sentAt"`
	// Properties describes the member cluster at SentAt.
	Properties ClusterProperties `json:"properties"`
}

// ClusterProperties describes a member cluster, as observed by its agent.
type ClusterProperties struct {
	// NodeCount is the number of nodes in the member cluster.
	NodeCount int `json:"nodeCount"`
	// KubernetesVersion is the API server's version (e.g. "v1.37.1").
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// Provider names the infrastructure provider, when known (e.g. "kwok").
	Provider string `json:"provider,omitempty"`
	// Capacity is the sum of node capacity, by resource name, as Kubernetes
	// quantity strings (e.g. "cpu": "4", "memory": "8Gi").
	Capacity map[string]string `json:"capacity,omitempty"`
	// Allocatable is the sum of node allocatable, as Capacity.
	Allocatable map[string]string `json:"allocatable,omitempty"`
	// Available is Allocatable minus the requests of scheduled pods, as
	// Capacity.
	Available map[string]string `json:"available,omitempty"`
	// APIServerHealthy is true when the member API server answered its
	// health check.
	APIServerHealthy bool `json:"apiServerHealthy"`
	// APIServerMessage explains an unhealthy API server.
	APIServerMessage string `json:"apiServerMessage,omitempty"`
}

// HeartbeatAck acknowledges a Heartbeat. Sent by the hub on the control
// stream.
type HeartbeatAck struct {
	// Sequence is the acknowledged Heartbeat.Sequence.
	Sequence uint64 `json:"sequence"`
}

// Goodbye announces that the sender is about to close the session, and why.
// Either side may send it on the control stream; the receiver should close
// the session and not expect further frames.
type Goodbye struct {
	// Reason is a human-readable explanation (e.g. "hub replica shutting
	// down").
	Reason string `json:"reason,omitempty"`
}

// WorkRef names a Work object the agent holds.
type WorkRef struct {
	// Name is the Work's name; it identifies the Work within the session.
	// Required.
	Name string `json:"name"`
	// Namespace is the hub namespace the Work came from, as the agent
	// recorded it (flotilla-member-<cluster>). Informational.
	Namespace string `json:"namespace,omitempty"`
	// Hash is WorkUpsert.Hash of the version the agent last applied, echoed
	// verbatim.
	Hash string `json:"hash"`
}

// WorkInventory lists every Work the agent holds. Sent by the agent once per
// session, as the first frame on the work stream after StreamOpen; the hub
// answers with the difference (spec.md, Work sync).
type WorkInventory struct {
	// Items lists the Work the agent holds, one entry per name.
	Items []WorkRef `json:"items"`
}

// WorkUpsert delivers the desired version of one Work. Sent by the hub on the
// work stream.
type WorkUpsert struct {
	// Name is the Work's name. Required.
	Name string `json:"name"`
	// Hash identifies this version of the Work's spec. It is opaque to the
	// agent, which stores it with the applied Work and reports it back in
	// WorkInventory and StatusReport. Required.
	Hash string `json:"hash"`
	// Work is the whole Work object as JSON. The protocol does not interpret
	// it (and does not import the API types). Required.
	Work json.RawMessage `json:"work"`
}

// WorkDelete removes one Work from the agent. Sent by the hub on the work
// stream.
type WorkDelete struct {
	// Name is the Work's name. Required.
	Name string `json:"name"`
}

// WorkSyncDone marks the end of the hub's answer to WorkInventory: after it,
// the agent's set of Work equals the hub's, and every later frame on the work
// stream is a live change. Sent by the hub on the work stream.
type WorkSyncDone struct{}

// StatusReport carries the status of one Work. Sent by the agent on the
// status stream.
type StatusReport struct {
	// WorkName is the Work's name. Required.
	WorkName string `json:"workName"`
	// Hash is the WorkUpsert.Hash of the version this status describes; the
	// hub ignores status for a version that is no longer current.
	Hash string `json:"hash"`
	// Status is the Work's status as JSON (per-manifest conditions). The
	// protocol does not interpret it.
	Status json.RawMessage `json:"status,omitempty"`
	// Removed confirms, after a WorkDelete, that everything the Work applied is
	// gone from the member; the hub then lets the deleted Work go. Hash and
	// Status are empty then.
	Removed bool `json:"removed,omitempty"`
	// Released lists, with Removed, the objects the member kept instead of deleting
	// them (taken over, abandoned, a Namespace holding the member's own objects),
	// each with why, at most MaxReleased and a last line counting the rest. The hub
	// reports them as Events before it lets the Work go.
	Released []string `json:"released,omitempty"`
}

// MaxReleased bounds StatusReport.Released.
const MaxReleased = 20

// Upsync mirrors, for one Work, objects born on the member (matching the Work's
// upsync selectors, in the namespaces it places) to the hub. Sent by the agent on
// the status stream. Exactly one of Object, Deleted and Complete is set.
type Upsync struct {
	// WorkName is the Work whose upsync selectors matched. Required.
	WorkName string `json:"workName"`
	// Object is an object as the member holds it, to create or update on the
	// hub. The protocol does not interpret it.
	Object json.RawMessage `json:"object,omitempty"`
	// Deleted is an object removed from the member, to remove from the hub.
	Deleted *UpsyncRef `json:"deleted,omitempty"`
	// Complete says that Present lists every object the member holds for the
	// Work (after a reconnect, or once watches started): the hub removes the
	// others it mirrored from this member for the Work.
	Complete bool `json:"complete,omitempty"`
	// Present lists the objects, with Complete.
	Present []UpsyncRef `json:"present,omitempty"`
	// Problems are why some upsync selectors cannot be served (a kind the
	// member does not serve), with Complete; the hub reports them.
	Problems []string `json:"problems,omitempty"`
}

// UpsyncRef identifies an upsynced object.
type UpsyncRef struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// FrameType implementations.

func (StreamOpen) FrameType() FrameType    { return FrameStreamOpen }
func (Hello) FrameType() FrameType         { return FrameHello }
func (HelloAck) FrameType() FrameType      { return FrameHelloAck }
func (Heartbeat) FrameType() FrameType     { return FrameHeartbeat }
func (HeartbeatAck) FrameType() FrameType  { return FrameHeartbeatAck }
func (Goodbye) FrameType() FrameType       { return FrameGoodbye }
func (WorkInventory) FrameType() FrameType { return FrameWorkInventory }
func (WorkUpsert) FrameType() FrameType    { return FrameWorkUpsert }
func (WorkDelete) FrameType() FrameType    { return FrameWorkDelete }
func (WorkSyncDone) FrameType() FrameType  { return FrameWorkSyncDone }
func (StatusReport) FrameType() FrameType  { return FrameStatusReport }
func (Upsync) FrameType() FrameType        { return FrameUpsync }

// Validate checks that Kind is a kind of this protocol version.
func (m StreamOpen) Validate() error {
	if !m.Kind.Valid() {
		return fmt.Errorf("%w: %w: %s", ErrInvalidMessage, ErrUnknownStreamKind, m.Kind)
	}
	return nil
}

// Validate checks the required fields.
func (m Hello) Validate() error {
	if m.ClusterName == "" {
		return invalid(FrameHello, "clusterName is required")
	}
	return nil
}

// Validate checks the required fields.
func (m WorkInventory) Validate() error {
	for i, item := range m.Items {
		if item.Name == "" {
			return invalid(FrameWorkInventory, "items[%d].name is required", i)
		}
	}
	return nil
}

// Validate checks the required fields.
func (m WorkUpsert) Validate() error {
	switch {
	case m.Name == "":
		return invalid(FrameWorkUpsert, "name is required")
	case m.Hash == "":
		return invalid(FrameWorkUpsert, "hash of Work %q is required", m.Name)
	case len(m.Work) == 0 || string(m.Work) == "null":
		return invalid(FrameWorkUpsert, "work of Work %q is required", m.Name)
	}
	return nil
}

// Validate checks the required fields.
func (m WorkDelete) Validate() error {
	if m.Name == "" {
		return invalid(FrameWorkDelete, "name is required")
	}
	return nil
}

// Validate checks the required fields.
func (m StatusReport) Validate() error {
	if m.WorkName == "" {
		return invalid(FrameStatusReport, "workName is required")
	}
	return nil
}

// Validate checks the required fields and that exactly one of Object, Deleted
// and Complete is set.
func (m Upsync) Validate() error {
	set := 0
	for _, b := range []bool{len(m.Object) > 0 && string(m.Object) != "null", m.Deleted != nil, m.Complete} {
		if b {
			set++
		}
	}
	switch {
	case m.WorkName == "":
		return invalid(FrameUpsync, "workName is required")
	case set != 1:
		return invalid(FrameUpsync, "exactly one of object, deleted and complete must be set for Work %q", m.WorkName)
	case m.Deleted != nil && (m.Deleted.Kind == "" || m.Deleted.Version == "" || m.Deleted.Name == ""):
		return invalid(FrameUpsync, "deleted needs version, kind and name for Work %q", m.WorkName)
	}
	for i, r := range m.Present {
		if r.Kind == "" || r.Version == "" || r.Name == "" {
			return invalid(FrameUpsync, "present[%d] needs version, kind and name for Work %q", i, m.WorkName)
		}
	}
	return nil
}

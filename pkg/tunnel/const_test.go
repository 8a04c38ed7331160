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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// These tests pin the wire constants. If one fails, you changed the
// protocol: bump ProtocolVersion and the ALPN names, update spec.md, and
// only then update the test.

func TestProtocolConstants(t *testing.T) {
	got := map[string]any{
		"ProtocolVersion":       ProtocolVersion,
		"ALPNTunnel":            ALPNTunnel,
		"ALPNJoin":              ALPNJoin,
		"HeaderSize":            HeaderSize,
		"DefaultMaxFrameSize":   DefaultMaxFrameSize,
		"MaxFrameSizeLimit":     MaxFrameSizeLimit,
		"HandshakeMaxFrameSize": HandshakeMaxFrameSize,
	}
	want := map[string]any{
		"ProtocolVersion":       uint8(1),
		"ALPNTunnel":            "flotilla-tunnel/1",
		"ALPNJoin":              "flotilla-join/1",
		"HeaderSize":            8,
		"DefaultMaxFrameSize":   uint32(16 * 1024 * 1024),
		"MaxFrameSizeLimit":     uint32(64 * 1024 * 1024),
		"HandshakeMaxFrameSize": uint32(16 * 1024),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("protocol constants changed (-want +got):\n%s", diff)
	}
}

func TestFrameTypeValues(t *testing.T) {
	type pinned struct {
		Number uint8
		Name   string
	}
	got := map[FrameType]pinned{}
	for ft := range frameSpecs {
		got[ft] = pinned{uint8(ft), ft.String()}
	}
	want := map[FrameType]pinned{
		FrameStreamOpen:    {0x01, "StreamOpen"},
		FrameHello:         {0x02, "Hello"},
		FrameHelloAck:      {0x03, "HelloAck"},
		FrameHeartbeat:     {0x04, "Heartbeat"},
		FrameHeartbeatAck:  {0x05, "HeartbeatAck"},
		FrameGoodbye:       {0x06, "Goodbye"},
		FrameWorkInventory: {0x10, "WorkInventory"},
		FrameWorkUpsert:    {0x11, "WorkUpsert"},
		FrameWorkDelete:    {0x12, "WorkDelete"},
		FrameWorkSyncDone:  {0x13, "WorkSyncDone"},
		FrameStatusReport:  {0x20, "StatusReport"},
		FrameUpsync:        {0x21, "Upsync"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frame types changed (-want +got):\n%s", diff)
	}
	if got, want := FrameType(0).String(), "FrameType(0)"; got != want {
		t.Errorf("FrameType(0).String() = %q, want %q", got, want)
	}
	if got, want := FrameType(0xff).String(), "FrameType(255)"; got != want {
		t.Errorf("FrameType(0xff).String() = %q, want %q", got, want)
	}
}

func TestStreamKindValues(t *testing.T) {
	type pinned struct {
		Number uint8
		Name   string
		Valid  bool
	}
	var got []pinned
	for _, k := range []StreamKind{0, StreamControl, StreamWork, StreamStatus, StreamAPIProxy, 5} {
		got = append(got, pinned{uint8(k), k.String(), k.Valid()})
	}
	want := []pinned{
		{0, "StreamKind(0)", false},
		{1, "Control", true},
		{2, "Work", true},
		{3, "Status", true},
		{4, "APIProxy", true},
		{5, "StreamKind(5)", false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stream kinds changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]StreamKind{StreamControl, StreamWork, StreamStatus}, streamKinds); diff != "" {
		t.Errorf("stream open order changed (-want +got):\n%s", diff)
	}
}

// TestFramePlacement pins where each frame may appear (spec.md, Messages).
func TestFramePlacement(t *testing.T) {
	type placement struct {
		Stream    string
		From      string
		Handshake bool
		Session   bool
		Once      bool
	}
	got := map[string]placement{}
	for ft, spec := range frameSpecs {
		stream := "any"
		if spec.stream != 0 {
			stream = spec.stream.String()
		}
		got[ft.String()] = placement{stream, spec.from.String(), spec.phases&phaseHandshake != 0, spec.phases&phaseEstablished != 0, spec.once}
	}
	want := map[string]placement{
		"StreamOpen":    {"any", "agent", true, false, false},
		"Hello":         {"Control", "agent", true, false, false},
		"HelloAck":      {"Control", "hub", true, false, false},
		"Heartbeat":     {"Control", "agent", false, true, false},
		"HeartbeatAck":  {"Control", "hub", false, true, false},
		"Goodbye":       {"Control", "agent or hub", true, true, false},
		"WorkInventory": {"Work", "agent", false, true, true},
		"WorkUpsert":    {"Work", "hub", false, true, false},
		"WorkDelete":    {"Work", "hub", false, true, false},
		"WorkSyncDone":  {"Work", "hub", false, true, true},
		"StatusReport":  {"Status", "agent", false, true, false},
		"Upsync":        {"Status", "agent", false, true, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frame placement changed (-want +got):\n%s", diff)
	}
}

func TestDefaults(t *testing.T) {
	got := map[string]time.Duration{
		"DefaultHandshakeTimeout":         DefaultHandshakeTimeout,
		"DefaultHeartbeatPeriod":          DefaultHeartbeatPeriod,
		"DefaultReconnectInitialInterval": DefaultReconnectInitialInterval,
		"DefaultReconnectMaxInterval":     DefaultReconnectMaxInterval,
		"DefaultReconnectResetAfter":      DefaultReconnectResetAfter,
	}
	want := map[string]time.Duration{
		"DefaultHandshakeTimeout":         15 * time.Second,
		"DefaultHeartbeatPeriod":          5 * time.Second,
		"DefaultReconnectInitialInterval": 500 * time.Millisecond,
		"DefaultReconnectMaxInterval":     30 * time.Second,
		"DefaultReconnectResetAfter":      time.Minute,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults changed (-want +got):\n%s", diff)
	}
	if DefaultReconnectMultiplier != 2 || DefaultReconnectRandomizationFactor != 0.5 {
		t.Errorf("backoff factors changed: multiplier %v, randomization %v", DefaultReconnectMultiplier, DefaultReconnectRandomizationFactor)
	}
}

func TestCapabilityNames(t *testing.T) {
	got := map[string]string{"CapabilityVersionSkew": CapabilityVersionSkew, "CapabilityAPIProxy": CapabilityAPIProxy}
	want := map[string]string{"CapabilityVersionSkew": "version-skew", "CapabilityAPIProxy": "api-proxy"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("capability names changed (-want +got):\n%s", diff)
	}
}

// TestHandshakeFieldNames pins the JSON of Hello and HelloAck: an agent or hub
// of the previous version reads and writes exactly these names, and the new
// fields are omitted when empty so that the previous version's peers see the
// frames they know.
func TestHandshakeFieldNames(t *testing.T) {
	hello, err := json.Marshal(Hello{ProtocolVersion: 1, AgentVersion: "v0.2.0", ClusterName: "m", MaxFrameSize: 1, Capabilities: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := json.Marshal(HelloAck{Accepted: true, Reason: "r", HeartbeatPeriodSeconds: 5, HubReplica: "h", MaxFrameSize: 1, HubVersion: "v0.2.0", Capabilities: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	bare, err := json.Marshal(Hello{ProtocolVersion: 1, ClusterName: "m"})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{string(hello), string(ack), string(bare)}
	want := []string{
		`{"protocolVersion":1,"agentVersion":"v0.2.0","clusterName":"m","maxFrameSize":1,"capabilities":["x"]}`,
		`{"accepted":true,"reason":"r","heartbeatPeriodSeconds":5,"hubReplica":"h","maxFrameSize":1,"hubVersion":"v0.2.0","capabilities":["x"]}`,
		`{"protocolVersion":1,"clusterName":"m"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("handshake JSON changed (-want +got):\n%s", diff)
	}
}

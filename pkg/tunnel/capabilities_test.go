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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestCapabilityNegotiation runs the handshake over a pipe between an agent
// and a hub that announce, require and check different things; a side with
// nothing set is a peer of the previous version, which predates capabilities.
func TestCapabilityNegotiation(t *testing.T) {
	incompatible := errors.New("hub v0.5.0 is too new")
	cases := map[string]struct {
		agent ClientOptions
		hub   ServerOptions
		// want is the capabilities both ends of the session use.
		want []string
		// wantHubVersion is what the agent reads in HelloAck.
		wantHubVersion string
		// wantErr is what the agent's handshake returns (nil: established).
		wantErr error
		// wantReason is part of the refusal or error text.
		wantReason string
	}{
		"both sides use the capabilities both announce": {
			agent:          ClientOptions{Hello: Hello{Capabilities: []string{CapabilityVersionSkew, "agent-only"}}},
			hub:            ServerOptions{Version: "v0.3.0", Capabilities: []string{"hub-only", CapabilityVersionSkew}},
			want:           []string{CapabilityVersionSkew},
			wantHubVersion: "v0.3.0",
		},
		"an agent that predates capabilities still works with this hub": {
			agent:          ClientOptions{},
			hub:            ServerOptions{Version: "v0.3.0", Capabilities: []string{CapabilityVersionSkew}},
			want:           nil,
			wantHubVersion: "v0.3.0",
		},
		"a hub that predates capabilities still works with this agent": {
			agent: ClientOptions{Hello: Hello{Capabilities: []string{CapabilityVersionSkew}}},
			hub:   ServerOptions{},
			want:  nil,
		},
		"capability names a side does not know are ignored": {
			agent: ClientOptions{Hello: Hello{Capabilities: []string{"from-the-future", CapabilityVersionSkew, CapabilityVersionSkew}}},
			hub:   ServerOptions{Capabilities: []string{CapabilityVersionSkew, "from-the-past"}},
			want:  []string{CapabilityVersionSkew},
		},
		"a hub refuses an agent lacking a capability it requires, in one line": {
			agent:      ClientOptions{},
			hub:        ServerOptions{Version: "v0.3.0", Capabilities: []string{"must"}, RequiredCapabilities: []string{"must"}},
			wantErr:    ErrRefused,
			wantReason: `the agent does not speak capability "must", which this hub (v0.3.0) requires: upgrade the agent`,
		},
		"an agent hangs up on a hub lacking a capability it requires": {
			agent:      ClientOptions{Hello: Hello{Capabilities: []string{"must"}}, RequiredCapabilities: []string{"must"}},
			hub:        ServerOptions{},
			wantErr:    ErrMissingCapability,
			wantReason: `the hub does not speak capability "must", which this agent requires: upgrade the hub`,
		},
		"an agent hangs up on a hub its check rejects": {
			agent:      ClientOptions{CheckHub: func(ack HelloAck) error { return incompatible }},
			hub:        ServerOptions{Version: "v0.5.0"},
			wantErr:    ErrIncompatiblePeer,
			wantReason: "hub v0.5.0 is too new",
		},
		"an agent checks the hub of a refusal too": {
			agent: ClientOptions{Hello: Hello{ClusterName: "refuse-me"}, CheckHub: func(ack HelloAck) error {
				if ack.Accepted || ack.HubVersion != "v0.5.0" {
					return nil
				}
				return incompatible
			}},
			hub:        ServerOptions{Version: "v0.5.0"},
			wantErr:    ErrIncompatiblePeer,
			wantReason: "hub v0.5.0 is too new",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := startHarness(t, transport{name: "pipe", listen: listenPipe}, tc.hub)
			opts := tc.agent
			if opts.Hello.ClusterName == "" {
				opts.Hello.ClusterName = "member-1"
			}
			opts.YamuxConfig = quietYamux()
			ctx := t.Context()
			conn, err := h.dial(ctx, opts.Hello.ClusterName)
			if err != nil {
				t.Fatal(err)
			}
			c, err := ClientHandshake(ctx, conn, opts)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("ClientHandshake = %v, want %v", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantReason) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q, want one line saying %q", err, tc.wantReason)
				}
				return
			}
			if err != nil {
				t.Fatalf("ClientHandshake: %v", err)
			}
			defer c.Close()
			s := h.nextSession()
			if diff := cmp.Diff(tc.want, c.Capabilities(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("agent's capabilities (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, s.Capabilities(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("hub's capabilities (-want +got):\n%s", diff)
			}
			if got := c.HelloAck().HubVersion; got != tc.wantHubVersion {
				t.Errorf("HubVersion = %q, want %q", got, tc.wantHubVersion)
			}
			for _, cp := range tc.want {
				if !c.HasCapability(cp) || !s.HasCapability(cp) {
					t.Errorf("HasCapability(%q) = false on a side", cp)
				}
			}
			// The session works: a heartbeat goes through.
			send(t, c.Control(), Heartbeat{Sequence: 1})
			if m := recvMsg(t, s.Control()); m.FrameType() != FrameHeartbeat {
				t.Errorf("hub received %s, want Heartbeat", m.FrameType())
			}
		})
	}
}

// TestMissingCapabilityGoodbye checks that the hub learns why an agent hung
// up on it.
func TestMissingCapabilityGoodbye(t *testing.T) {
	h := startHarness(t, transport{name: "pipe", listen: listenPipe}, ServerOptions{})
	ctx := t.Context()
	conn, err := h.dial(ctx, "member-1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ClientHandshake(ctx, conn, ClientOptions{Hello: Hello{ClusterName: "member-1"}, RequiredCapabilities: []string{"must"}, YamuxConfig: quietYamux()})
	if !errors.Is(err, ErrMissingCapability) {
		t.Fatalf("ClientHandshake = %v, want ErrMissingCapability", err)
	}
	s := h.nextSession()
	m, err := s.Control().Recv()
	if err != nil {
		// The agent closed right after its Goodbye; the session may have
		// ended before the hub read it.
		return
	}
	if g, ok := m.(Goodbye); !ok || !strings.Contains(g.Reason, `capability "must"`) {
		t.Errorf("hub received %#v, want a Goodbye naming the capability", m)
	}
}

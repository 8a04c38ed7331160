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
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/yamux"
)

// The session suite runs over every transport.

func TestSessionHandshake(t *testing.T) {
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			h := startHarness(t, tr, ServerOptions{HeartbeatPeriod: 7 * time.Second, MaxFrameSize: 1 << 20})
			client, server := h.pair("member-1")

			wantAck := HelloAck{Accepted: true, HeartbeatPeriodSeconds: 7, HubReplica: "hub-0", MaxFrameSize: 1 << 20}
			if diff := cmp.Diff(wantAck, client.HelloAck()); diff != "" {
				t.Errorf("HelloAck (-want +got):\n%s", diff)
			}
			wantHello := Hello{ProtocolVersion: ProtocolVersion, AgentVersion: "v0.0.0-test", ClusterName: "member-1", MaxFrameSize: DefaultMaxFrameSize}
			if diff := cmp.Diff(wantHello, server.Hello()); diff != "" {
				t.Errorf("Hello (-want +got):\n%s", diff)
			}
			if got := server.PeerName(); got != "member-1" {
				t.Errorf("PeerName() = %q, want member-1", got)
			}
			if tr.serverTLS != nil {
				if cert := server.PeerCertificate(); cert == nil || cert.Subject.CommonName != "member-1" {
					t.Errorf("PeerCertificate() = %v, want the member-1 certificate", cert)
				}
			} else if cert := server.PeerCertificate(); cert != nil {
				t.Errorf("PeerCertificate() = %v over a plain connection, want nil", cert.Subject)
			}
			for _, s := range []*Session{client.Session, server.Session} {
				got := []StreamKind{s.Control().Kind(), s.Work().Kind(), s.Status().Kind()}
				if diff := cmp.Diff([]StreamKind{StreamControl, StreamWork, StreamStatus}, got); diff != "" {
					t.Errorf("stream kinds (-want +got):\n%s", diff)
				}
				if err := s.Err(); err != nil {
					t.Errorf("Err() of an open session = %v", err)
				}
			}
			// The hub limits what it sends to what the agent accepts, and
			// the other way round.
			if got := server.Work().w.MaxFrameSize(); got != DefaultMaxFrameSize {
				t.Errorf("hub send limit = %d, want the agent's %d", got, DefaultMaxFrameSize)
			}
			if got := client.Status().w.MaxFrameSize(); got != 1<<20 {
				t.Errorf("agent send limit = %d, want the hub's %d", got, 1<<20)
			}
		})
	}
}

func TestSessionExchange(t *testing.T) {
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			h := startHarness(t, tr, ServerOptions{})
			client, server := h.pair("member-1")

			// Control: heartbeat and its ack.
			hb := Heartbeat{Sequence: 1, SentAt: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), Properties: ClusterProperties{
				NodeCount: 2, KubernetesVersion: "v1.37.1", Capacity: map[string]string{"cpu": "8"}, APIServerHealthy: true,
			}}
			send(t, client.Control(), hb)
			expect(t, server.Control(), hb)
			send(t, server.Control(), HeartbeatAck{Sequence: 1})
			expect(t, client.Control(), HeartbeatAck{Sequence: 1})

			// Work: the inventory, the difference, the end of the sync, a
			// live change.
			inv := WorkInventory{Items: []WorkRef{{Name: "a", Hash: "1"}, {Name: "gone", Hash: "9"}}}
			send(t, client.Work(), inv)
			expect(t, server.Work(), inv)
			hubSends := []Message{
				WorkUpsert{Name: "a", Hash: "2", Work: json.RawMessage(`{"kind":"Work","metadata":{"name":"a"}}`)},
				WorkUpsert{Name: "b", Hash: "1", Work: json.RawMessage(`{"kind":"Work","metadata":{"name":"b"}}`)},
				WorkDelete{Name: "gone"},
				WorkSyncDone{},
				WorkDelete{Name: "b"},
			}
			for _, m := range hubSends {
				send(t, server.Work(), m)
			}
			for _, m := range hubSends {
				expect(t, client.Work(), m)
			}

			// Status.
			st := StatusReport{WorkName: "a", Hash: "2", Status: json.RawMessage(`{"conditions":[{"type":"Available","status":"True"}]}`)}
			send(t, client.Status(), st)
			expect(t, server.Status(), st)
		})
	}
}

func TestSessionSendRefusesWithoutClosing(t *testing.T) {
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			h := startHarness(t, tr, ServerOptions{MaxFrameSize: 1024})
			client, server := h.pair("member-1")

			tests := []struct {
				name    string
				stream  *Stream
				msg     Message
				wantErr error
			}{
				{"a hub frame from the agent", client.Work(), WorkSyncDone{}, ErrUnexpectedFrame},
				{"a frame on the wrong stream", client.Control(), StatusReport{WorkName: "a"}, ErrUnexpectedFrame},
				{"a handshake frame after the handshake", client.Control(), Hello{ClusterName: "member-1"}, ErrUnexpectedFrame},
				{"an invalid message", server.Work(), WorkDelete{}, ErrInvalidMessage},
				{"a frame larger than the peer accepts", client.Status(), StatusReport{WorkName: "a", Status: json.RawMessage(`"` + string(bytesOf('x', 2000)) + `"`)}, ErrFrameTooLarge},
				{"nil", client.Control(), nil, ErrInvalidMessage},
			}
			for _, tt := range tests {
				if err := tt.stream.Send(tt.msg); !errors.Is(err, tt.wantErr) {
					t.Errorf("%s: Send = %v, want %v", tt.name, err, tt.wantErr)
				}
			}
			// The session is still good.
			send(t, client.Status(), StatusReport{WorkName: "a", Hash: "1"})
			expect(t, server.Status(), StatusReport{WorkName: "a", Hash: "1"})
		})
	}
}

func TestSessionRefused(t *testing.T) {
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			h := startHarness(t, tr, ServerOptions{})
			_, err := h.connect("refuse-me")
			var refused *RefusedError
			if !errors.As(err, &refused) || !errors.Is(err, ErrRefused) {
				t.Fatalf("connect = %v, want a *RefusedError", err)
			}
			if want := "cluster refuse-me is not a member of this fleet"; refused.Reason != want {
				t.Errorf("Reason = %q, want %q", refused.Reason, want)
			}
			if err := h.nextError(); !errors.Is(err, ErrRefused) {
				t.Errorf("ServeConn = %v, want ErrRefused", err)
			}
			// The listener still serves.
			h.pair("member-1")
		})
	}
}

func TestSessionRefusesOtherProtocolVersions(t *testing.T) {
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			h := startHarness(t, tr, ServerOptions{})
			ctx := t.Context()
			conn, err := h.dial(ctx, "member-1")
			if err != nil {
				t.Fatal(err)
			}
			_, err = ClientHandshake(ctx, conn, ClientOptions{Hello: Hello{ProtocolVersion: 2, ClusterName: "member-1"}, YamuxConfig: quietYamux()})
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("ClientHandshake = %v, want a *RefusedError", err)
			}
			if want := "unsupported protocol version 2; the hub speaks 1"; refused.Reason != want {
				t.Errorf("Reason = %q, want %q", refused.Reason, want)
			}
		})
	}
}

// misbehaviour is a client that breaks the protocol in one way.
type misbehaviour struct {
	name string
	// act misbehaves on a fresh yamux client session.
	act func(t *testing.T, mux *yamux.Session)
	// wantErr is what ServeConn returns.
	wantErr error
}

func misbehaviours() []misbehaviour {
	rawFrame := func(h Header, payload string) []byte {
		b := h.Encode()
		return append(b[:], payload...)
	}
	openWith := func(frames ...[]byte) func(*testing.T, *yamux.Session) {
		return func(t *testing.T, mux *yamux.Session) {
			st := openRaw(t, mux)
			for _, f := range frames {
				writeRaw(t, st, f)
			}
		}
	}
	streamOpen := func(kind StreamKind) []byte { return encode(StreamOpen{Kind: kind}) }
	return []misbehaviour{
		{
			name:    "first frame of another protocol version",
			act:     openWith(rawFrame(Header{Version: 9, Type: FrameStreamOpen, Length: 10}, `{"kind":1}`)),
			wantErr: ErrUnsupportedVersion,
		},
		{
			name:    "first frame claims 1 GiB",
			act:     openWith(rawFrame(Header{Version: 1, Type: FrameStreamOpen, Length: 1 << 30}, `{"kind":1}`)),
			wantErr: ErrFrameTooLarge,
		},
		{
			name:    "first frame of an unknown type",
			act:     openWith(rawFrame(Header{Version: 1, Type: 0x7f, Length: 2}, `{}`)),
			wantErr: ErrUnknownFrameType,
		},
		{
			name:    "first frame is not JSON",
			act:     openWith(rawFrame(Header{Version: 1, Type: FrameStreamOpen, Length: 5}, `{nope`)),
			wantErr: ErrMalformedPayload,
		},
		{
			name: "first frame is cut short",
			act: func(t *testing.T, mux *yamux.Session) {
				st := openRaw(t, mux)
				writeRaw(t, st, rawFrame(Header{Version: 1, Type: FrameStreamOpen, Length: 100}, `{"kind":`))
				_ = st.Close()
			},
			wantErr: ErrTruncatedFrame,
		},
		{
			name:    "unknown stream kind",
			act:     openWith(rawFrame(Header{Version: 1, Type: FrameStreamOpen, Length: 10}, `{"kind":9}`)),
			wantErr: ErrUnknownStreamKind,
		},
		{
			name: "two control streams",
			act: func(t *testing.T, mux *yamux.Session) {
				writeRaw(t, openRaw(t, mux), streamOpen(StreamControl))
				writeRaw(t, openRaw(t, mux), streamOpen(StreamControl))
			},
			wantErr: ErrDuplicateStream,
		},
		{
			name:    "hello before stream open",
			act:     openWith(encode(Hello{ProtocolVersion: 1, ClusterName: "member-1"})),
			wantErr: ErrUnexpectedFrame,
		},
		{
			name: "heartbeat before hello",
			act: func(t *testing.T, mux *yamux.Session) {
				control := openRaw(t, mux)
				writeRaw(t, control, streamOpen(StreamControl))
				writeRaw(t, openRaw(t, mux), streamOpen(StreamWork))
				writeRaw(t, openRaw(t, mux), streamOpen(StreamStatus))
				writeRaw(t, control, encode(Heartbeat{Sequence: 1}))
			},
			wantErr: ErrUnexpectedFrame,
		},
		{
			name: "stalls before hello",
			act: func(t *testing.T, mux *yamux.Session) {
				for _, kind := range streamKinds {
					writeRaw(t, openRaw(t, mux), streamOpen(kind))
				}
			},
			wantErr: ErrHandshakeTimeout,
		},
		{
			name: "opens a stream and says nothing",
			act: func(t *testing.T, mux *yamux.Session) {
				openRaw(t, mux)
			},
			wantErr: ErrHandshakeTimeout,
		},
	}
}

func TestSessionMisbehavingClientClosesOnlyItsSession(t *testing.T) {
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel() // the stalling cases wait for the timeout
			// Short enough for the stalling cases, long enough for a
			// well-behaved client on a busy machine.
			h := startHarness(t, tr, ServerOptions{HandshakeTimeout: 2 * time.Second})
			bystanderClient, bystanderServer := h.pair("bystander")
			for i, mb := range misbehaviours() {
				t.Run(mb.name, func(t *testing.T) {
					mux := h.rawClient("member-1")
					mb.act(t, mux)
					if err := h.nextError(); !errors.Is(err, mb.wantErr) {
						t.Errorf("ServeConn = %v, want %v", err, mb.wantErr)
					}
					waitClosed(t, mux.CloseChan(), "the misbehaving client's connection")

					// A good client on the same listener still gets a
					// session, and the bystander's session still works.
					h.pair("member-2")
					hb := Heartbeat{Sequence: uint64(i + 1)}
					send(t, bystanderClient.Control(), hb)
					expect(t, bystanderServer.Control(), hb)
				})
			}
		})
	}
}

func TestSessionViolationAfterHandshakeClosesTheSession(t *testing.T) {
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			h := startHarness(t, tr, ServerOptions{})
			bystanderClient, bystanderServer := h.pair("bystander")

			// A raw agent that completes the handshake, then sends status on
			// the work stream.
			mux, streams := h.rawSession("member-1")
			server := h.nextSession()
			writeRaw(t, streams[StreamWork], encode(StatusReport{WorkName: "a"}))

			if _, err := server.Work().Recv(); !errors.Is(err, ErrUnexpectedFrame) || !errors.Is(err, ErrSessionClosed) {
				t.Errorf("Recv = %v, want ErrUnexpectedFrame and ErrSessionClosed", err)
			}
			waitClosed(t, server.CloseChan(), "the server session")
			if err := server.Err(); !errors.Is(err, ErrUnexpectedFrame) {
				t.Errorf("Err() = %v, want ErrUnexpectedFrame", err)
			}
			// The error is sticky, and the other streams report it too.
			if _, err := server.Work().Recv(); !errors.Is(err, ErrUnexpectedFrame) {
				t.Errorf("second Recv = %v, want the same error", err)
			}
			if _, err := server.Status().Recv(); !errors.Is(err, ErrSessionClosed) {
				t.Errorf("Recv on another stream = %v, want ErrSessionClosed", err)
			}
			if err := server.Control().Send(HeartbeatAck{}); !errors.Is(err, ErrSessionClosed) {
				t.Errorf("Send after close = %v, want ErrSessionClosed", err)
			}
			waitClosed(t, mux.CloseChan(), "the misbehaving client's connection")

			send(t, bystanderClient.Control(), Heartbeat{Sequence: 1})
			expect(t, bystanderServer.Control(), Heartbeat{Sequence: 1})
		})
	}
}

func TestSessionWorkSyncFramesAppearOnce(t *testing.T) {
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			h := startHarness(t, tr, ServerOptions{})

			// The sender refuses a second one without closing the session.
			client, server := h.pair("member-1")
			send(t, client.Work(), WorkInventory{})
			expect(t, server.Work(), WorkInventory{})
			if err := client.Work().Send(WorkInventory{}); !errors.Is(err, ErrUnexpectedFrame) {
				t.Errorf("second WorkInventory: Send = %v, want ErrUnexpectedFrame", err)
			}
			send(t, server.Work(), WorkSyncDone{})
			expect(t, client.Work(), WorkSyncDone{})
			if err := server.Work().Send(WorkSyncDone{}); !errors.Is(err, ErrUnexpectedFrame) {
				t.Errorf("second WorkSyncDone: Send = %v, want ErrUnexpectedFrame", err)
			}
			send(t, server.Work(), WorkDelete{Name: "a"})
			expect(t, client.Work(), WorkDelete{Name: "a"})

			// The receiver closes the session on a second one.
			_, streams := h.rawSession("member-2")
			raw := h.nextSession()
			writeRaw(t, streams[StreamWork], encode(WorkInventory{}))
			writeRaw(t, streams[StreamWork], encode(WorkInventory{}))
			expect(t, raw.Work(), WorkInventory{})
			if _, err := raw.Work().Recv(); !errors.Is(err, ErrUnexpectedFrame) {
				t.Errorf("second WorkInventory: Recv = %v, want ErrUnexpectedFrame", err)
			}
			waitClosed(t, raw.CloseChan(), "the session")
		})
	}
}

func TestSessionClose(t *testing.T) {
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			h := startHarness(t, tr, ServerOptions{})

			t.Run("agent closes", func(t *testing.T) {
				client, server := h.pair("member-1")
				if err := client.Close(); err != nil {
					t.Fatal(err)
				}
				if err := client.Err(); !errors.Is(err, ErrSessionClosed) {
					t.Errorf("client Err() = %v, want ErrSessionClosed", err)
				}
				if _, err := server.Control().Recv(); !errors.Is(err, ErrSessionClosed) {
					t.Errorf("server Recv = %v, want ErrSessionClosed", err)
				}
				waitClosed(t, server.CloseChan(), "the server session")
				if err := server.Err(); err == nil {
					t.Error("server Err() = nil after the agent closed")
				}
			})

			t.Run("hub says goodbye", func(t *testing.T) {
				client, server := h.pair("member-1")
				if err := server.CloseWithReason("draining"); err != nil {
					t.Fatal(err)
				}
				expect(t, client.Control(), Goodbye{Reason: "draining"})
				if _, err := client.Control().Recv(); !errors.Is(err, ErrSessionClosed) {
					t.Errorf("Recv after goodbye = %v, want ErrSessionClosed", err)
				}
				waitClosed(t, client.CloseChan(), "the client session")
			})

			t.Run("a stream opened after the handshake closes the session", func(t *testing.T) {
				client, server := h.pair("member-1")
				// (OpenStream may already see the session closing.)
				_, _ = client.mux.OpenStream()
				waitClosed(t, server.CloseChan(), "the hub's session")
				if err := server.Err(); !errors.Is(err, ErrUnexpectedStream) {
					t.Errorf("hub Err() = %v, want ErrUnexpectedStream", err)
				}
				waitClosed(t, client.CloseChan(), "the agent's session")
			})
		})
	}
}

func send(t *testing.T, st *Stream, m Message) {
	t.Helper()
	if err := st.Send(m); err != nil {
		t.Fatalf("Send %s: %v", m.FrameType(), err)
	}
}

func expect(t *testing.T, st *Stream, want Message) {
	t.Helper()
	got := recvMsg(t, st)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("on the %s stream (-want +got):\n%s", st.Kind(), diff)
	}
}

func encode(m Message) []byte {
	frame, err := Encode(m)
	if err != nil {
		panic(err)
	}
	return frame
}

func openRaw(t *testing.T, mux *yamux.Session) *yamux.Stream {
	t.Helper()
	st, err := mux.OpenStream()
	if err != nil {
		t.Fatalf("OpenStream: %v", err)
	}
	return st
}

// writeRaw writes b as a misbehaving client would. A failed write is not a
// test failure: the hub may already have hung up, which is what the tests
// check for.
func writeRaw(t *testing.T, st *yamux.Stream, b []byte) {
	t.Helper()
	if _, err := st.Write(b); err != nil {
		t.Logf("raw client: write failed (the hub may have hung up already): %v", err)
	}
}

func bytesOf(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}

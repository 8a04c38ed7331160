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
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/yamux"
)

// FuzzDecodeFrame feeds arbitrary bytes to the frame decoder. It must never
// panic or allocate past its limit, and every message it accepts must encode
// again and decode to the same frame.
func FuzzDecodeFrame(f *testing.F) {
	var all []byte
	for _, m := range sampleMessages() {
		frame, err := Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frame)
		all = append(all, frame...)
	}
	f.Add(all) // several frames back to back
	bad := Header{Version: 2, Type: FrameHello, Length: 2}.Encode()
	f.Add(append(bad[:], "{}"...))
	huge := Header{Version: 1, Type: FrameWorkUpsert, Length: 1 << 30}.Encode()
	f.Add(huge[:])
	f.Add([]byte{})

	const maxFrameSize = 1 << 16
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := NewFrameReader(bytes.NewReader(data), maxFrameSize)
		for {
			h, payload, err := fr.ReadFrame()
			if err != nil {
				if !errors.Is(err, io.EOF) && !isFrameError(err) {
					t.Fatalf("ReadFrame returned an error that is not a protocol error: %v", err)
				}
				return
			}
			if h.Length > maxFrameSize || uint32(len(payload)) != h.Length {
				t.Fatalf("ReadFrame accepted %s with a %d-byte payload over a %d limit", h, len(payload), maxFrameSize)
			}
			m, err := Decode(h, payload)
			if err != nil {
				if !isFrameError(err) {
					t.Fatalf("Decode(%s) returned an error that is not a protocol error: %v", h, err)
				}
				return
			}
			if m.FrameType() != h.Type {
				t.Fatalf("Decode(%s) returned a %s", h, m.FrameType())
			}
			// What was accepted must survive a round trip.
			frame, err := Encode(m)
			if err != nil {
				// encoding/json accepts some values it cannot write back
				// (e.g. a time beyond year 9999); the decoder still did
				// its job safely.
				return
			}
			var h2 Header
			if err := h2.Decode(frame); err != nil {
				t.Fatalf("re-encoded %s has a bad header: %v", m.FrameType(), err)
			}
			if _, err := Decode(h2, frame[HeaderSize:]); err != nil {
				t.Fatalf("re-encoded %s does not decode: %v\n%s", m.FrameType(), err, frame[HeaderSize:])
			}
		}
	})
}

func isFrameError(err error) bool {
	for _, r := range frameErrorReasons {
		if errors.Is(err, r.err) {
			return true
		}
	}
	return false
}

// sessionScript encodes a sequence of writes for FuzzSession: each record is
// the index of the agent's stream to write to (streams are opened in index
// order as they are first named; index 3 and above are streams the
// protocol does not define), a 16-bit length and that many bytes.
func sessionScript(records ...any) []byte {
	var out []byte
	for i := 0; i+1 < len(records); i += 2 {
		idx := records[i].(int)
		var data []byte
		switch v := records[i+1].(type) {
		case Message:
			data, _ = Encode(v)
		case []byte:
			data = v
		}
		out = append(out, byte(idx), byte(len(data)>>8), byte(len(data)))
		out = append(out, data...)
	}
	return out
}

// FuzzSession drives the hub's side of a session (ServeConn and then every
// stream's Recv) with arbitrary sequences of frames on arbitrary streams. The
// hub must never panic or hang: the handshake ends within its timeout, an
// established session ends when the agent hangs up, and every error is a
// protocol error or the session closing.
func FuzzSession(f *testing.F) {
	hello := Hello{ProtocolVersion: ProtocolVersion, ClusterName: "member-1"}
	handshake := []any{
		0, StreamOpen{Kind: StreamControl}, 1, StreamOpen{Kind: StreamWork}, 2, StreamOpen{Kind: StreamStatus},
		0, hello,
	}
	f.Add(sessionScript(handshake...))
	f.Add(sessionScript(append(append([]any{}, handshake...),
		1, WorkInventory{}, 0, Heartbeat{Sequence: 1}, 2, StatusReport{WorkName: "w", Hash: "h"}, 0, Goodbye{Reason: "bye"})...))
	f.Add(sessionScript(append(append([]any{}, handshake...), 1, WorkInventory{}, 1, WorkInventory{})...))
	f.Add(sessionScript(append(append([]any{}, handshake...), 3, StreamOpen{Kind: StreamControl})...))
	// An agent announcing capabilities, known, unknown and empty.
	f.Add(sessionScript(0, StreamOpen{Kind: StreamControl}, 1, StreamOpen{Kind: StreamWork}, 2, StreamOpen{Kind: StreamStatus},
		0, Hello{ProtocolVersion: ProtocolVersion, ClusterName: "member-1", Capabilities: []string{CapabilityVersionSkew, "x", ""}}))
	f.Add(sessionScript(0, StreamOpen{Kind: StreamWork}, 1, StreamOpen{Kind: StreamWork}))
	// Only the hub opens API proxy streams.
	f.Add(sessionScript(0, StreamOpen{Kind: StreamControl}, 1, StreamOpen{Kind: StreamAPIProxy}))
	f.Add(sessionScript(0, StreamOpen{Kind: StreamControl}, 0, Heartbeat{Sequence: 1}))
	f.Add(sessionScript(0, []byte{1, 2, 0, 0, 0xff, 0xff, 0xff, 0xff}))

	f.Fuzz(fuzzSessionBody)
}

func fuzzSessionBody(t *testing.T, script []byte) {
	{
		server, client := net.Pipe()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		type result struct {
			s   *ServerSession
			err error
		}
		done := make(chan result, 1)
		go func() {
			s, err := ServeConn(ctx, server, ServerOptions{
				HandshakeTimeout: 500 * time.Millisecond,
				Authorize:        func(context.Context, Hello, *x509.Certificate) (HelloAck, error) { return HelloAck{}, nil },
				Version:          "v0.2.0",
				Capabilities:     []string{CapabilityVersionSkew},
				YamuxConfig:      quietYamux(),
			})
			done <- result{s, err}
		}()
		mux, err := yamux.Client(client, quietYamux())
		if err != nil {
			t.Fatal(err)
		}
		defer mux.Close()

		// The hub's receive loops, once the session is established.
		var loops sync.WaitGroup
		var established *ServerSession
		checkErr := func(what string, err error) {
			if err != nil && !isFrameError(err) && !errors.Is(err, ErrSessionClosed) && !errors.Is(err, ErrHandshakeTimeout) &&
				!errors.Is(err, ErrUnexpectedStream) && !errors.Is(err, ErrRefused) && !errors.Is(err, io.EOF) && !errors.Is(err, yamux.ErrSessionShutdown) {
				t.Errorf("%s returned an unexpected error: %v", what, err)
			}
		}
		startLoops := func(s *ServerSession) {
			established = s
			for _, st := range []*Stream{s.Control(), s.Work(), s.Status()} {
				loops.Go(func() {
					for {
						m, err := st.Recv()
						if err != nil {
							checkErr("Recv", err)
							return
						}
						if hb, ok := m.(Heartbeat); ok {
							_ = s.Control().Send(HeartbeatAck{Sequence: hb.Sequence})
						}
					}
				})
			}
		}

		var streams []*yamux.Stream
		for len(script) >= 3 {
			idx := int(script[0]) % 5
			n := int(script[1])<<8 | int(script[2])
			script = script[3:]
			n = min(n, len(script))
			data := script[:n]
			script = script[n:]
			for len(streams) <= idx {
				st, err := mux.OpenStream()
				if err != nil {
					break
				}
				_ = st.SetWriteDeadline(time.Now().Add(time.Second))
				streams = append(streams, st)
			}
			if idx < len(streams) {
				_, _ = streams[idx].Write(data)
			}
			if established == nil {
				select {
				case r := <-done:
					checkErr("ServeConn", r.err)
					if r.s == nil {
						return
					}
					startLoops(r.s)
				default:
				}
			}
		}
		if established == nil {
			// Without more input the handshake is complete by now or never
			// will be: the agent hangs up (the deadline is tested elsewhere).
			select {
			case r := <-done:
				done <- r
			case <-time.After(20 * time.Millisecond):
				_ = mux.Close()
			}
			r := <-done
			checkErr("ServeConn", r.err)
			if r.s != nil {
				startLoops(r.s)
			}
		}
		_ = mux.Close()
		finished := make(chan struct{})
		go func() { loops.Wait(); close(finished) }()
		select {
		case <-finished:
		case <-time.After(5 * time.Second):
			t.Fatal("the hub's session did not end after the agent hung up")
		}
		if established != nil {
			select {
			case <-established.CloseChan():
			case <-time.After(5 * time.Second):
				t.Fatal("the hub's session is still open after the agent hung up")
			}
		}
	}
}

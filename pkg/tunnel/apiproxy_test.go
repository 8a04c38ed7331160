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
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// proxyPair connects an agent announcing agentCaps to a hub announcing
// hubCaps over a pipe and returns both ends.
func proxyPair(t *testing.T, agentCaps, hubCaps []string) (*ClientSession, *ServerSession) {
	t.Helper()
	h := startHarness(t, transport{name: "pipe", listen: listenPipe}, ServerOptions{Capabilities: hubCaps})
	ctx := t.Context()
	conn, err := h.dial(ctx, "member-1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ClientHandshake(ctx, conn, ClientOptions{Hello: Hello{ClusterName: "member-1", Capabilities: agentCaps}, YamuxConfig: quietYamux()})
	if err != nil {
		t.Fatalf("ClientHandshake: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, h.nextSession()
}

// assertAlive checks that the session still carries a heartbeat.
func assertAlive(t *testing.T, c *ClientSession, s *ServerSession) {
	t.Helper()
	send(t, c.Control(), Heartbeat{Sequence: 1})
	if m := recvMsg(t, s.Control()); m.FrameType() != FrameHeartbeat {
		t.Fatalf("hub received %s, want Heartbeat", m.FrameType())
	}
}

func TestAPIProxyStreamCarriesBytesBothWays(t *testing.T) {
	c, s := proxyPair(t, []string{CapabilityAPIProxy}, []string{CapabilityAPIProxy})
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()

	l := c.APIProxyListener()
	defer l.Close()
	echoed := make(chan error, 1)
	go func() {
		conn, err := l.Accept()
		if err != nil {
			echoed <- err
			return
		}
		defer conn.Close()
		_, err = io.Copy(conn, conn)
		echoed <- err
	}()

	conn, err := s.OpenAPIProxy(ctx)
	if err != nil {
		t.Fatalf("OpenAPIProxy: %v", err)
	}
	// More than a yamux window, to go through flow control.
	want := bytes.Repeat([]byte("GET /api HTTP/1.1\r\n"), 30000)
	go func() {
		_, _ = conn.Write(want)
		_ = conn.Close() // a yamux Close is a half close: reading goes on
	}()
	got, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("reading the echo: %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("echo differs: sent %d bytes, got %d", len(want), len(got))
	}
	if err := receive(t, echoed, "the agent's echo"); err != nil {
		t.Errorf("agent side: %v", err)
	}
	assertAlive(t, c, s)
}

func TestAPIProxyIsNeverOpenedWithoutTheCapability(t *testing.T) {
	cases := map[string]struct{ agent, hub []string }{
		"an agent that does not announce it (--proxy=false, or older)": {agent: nil, hub: []string{CapabilityAPIProxy}},
		"a hub that does not announce it":                              {agent: []string{CapabilityAPIProxy}, hub: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, s := proxyPair(t, tc.agent, tc.hub)
			ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
			defer cancel()
			start := time.Now()
			_, err := s.OpenAPIProxy(ctx)
			if !errors.Is(err, ErrAPIProxyUnavailable) {
				t.Fatalf("OpenAPIProxy = %v, want ErrAPIProxyUnavailable", err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, `"api-proxy"`) || !strings.Contains(msg, "member-1") {
				t.Errorf("error %q, want one line naming the member and the capability", msg)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("OpenAPIProxy took %s to refuse, want at once", d)
			}
			assertAlive(t, c, s)
		})
	}
}

// TestAgentClosesUnnegotiatedProxyStreamOnly: a hub that opens an API proxy
// stream in a session that did not negotiate it loses that stream, not the
// session.
func TestAgentClosesUnnegotiatedProxyStreamOnly(t *testing.T) {
	c, s := proxyPair(t, nil, []string{CapabilityAPIProxy})
	ys, err := s.mux.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, ys, StreamOpen{Kind: StreamAPIProxy})
	_ = ys.SetReadDeadline(time.Now().Add(waitTimeout))
	if n, err := ys.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("reading the stream = %d, %v; want EOF (the agent closed it)", n, err)
	}
	assertAlive(t, c, s)
}

func TestAgentClosesProxyStreamWithBadOpeningOnly(t *testing.T) {
	cases := map[string]Message{
		"a stream opened as the work stream": StreamOpen{Kind: StreamWork},
		"a stream opened with another frame": Goodbye{Reason: "x"},
		"a stream opened as an unknown kind": nil,
	}
	for name, opening := range cases {
		t.Run(name, func(t *testing.T) {
			c, s := proxyPair(t, []string{CapabilityAPIProxy}, []string{CapabilityAPIProxy})
			ys, err := s.mux.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			if opening != nil {
				mustWrite(t, ys, opening)
			} else {
				h := Header{Version: ProtocolVersion, Type: FrameStreamOpen, Length: 10}.Encode()
				if _, err := ys.Write(append(h[:], `{"kind":9}`...)); err != nil {
					t.Fatal(err)
				}
			}
			_ = ys.SetReadDeadline(time.Now().Add(waitTimeout))
			if n, err := ys.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
				t.Fatalf("reading the stream = %d, %v; want EOF (the agent closed it)", n, err)
			}
			assertAlive(t, c, s)
		})
	}
}

// TestAgentMayNotOpenAProxyStream: the kind belongs to the hub; an agent
// naming it during the handshake fails the handshake.
func TestAgentMayNotOpenAProxyStream(t *testing.T) {
	h := startHarness(t, transport{name: "pipe", listen: listenPipe}, ServerOptions{Capabilities: []string{CapabilityAPIProxy}})
	mux := h.rawClient("member-1")
	ys, err := mux.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	frame, err := Encode(StreamOpen{Kind: StreamAPIProxy})
	if err != nil {
		t.Fatal(err)
	}
	// The hub may hang up before yamux reports the write done.
	_, _ = ys.Write(frame)
	if err := h.nextError(); !errors.Is(err, ErrUnexpectedStream) {
		t.Errorf("hub handshake = %v, want ErrUnexpectedStream", err)
	}
}

func TestAcceptAPIProxyEndsWithTheSession(t *testing.T) {
	c, _ := proxyPair(t, []string{CapabilityAPIProxy}, []string{CapabilityAPIProxy})
	l := c.APIProxyListener()
	errc := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		errc <- err
	}()
	_ = c.Close()
	if err := receive(t, errc, "Accept's error"); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("Accept = %v, want ErrSessionClosed", err)
	}
	l2 := c.APIProxyListener()
	_ = l2.Close()
	if _, err := l2.Accept(); err == nil {
		t.Error("Accept on a closed listener succeeded")
	}
	var _ net.Listener = l2
}

// FuzzAPIProxyOpen feeds arbitrary bytes to the reader of an API proxy
// stream's opening frame: it must never panic, accept only a StreamOpen
// naming StreamAPIProxy, fail only with protocol errors, and never read past
// the opening frame (the HTTP bytes after it belong to the proxy).
func FuzzAPIProxyOpen(f *testing.F) {
	good, err := Encode(StreamOpen{Kind: StreamAPIProxy})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(append(append([]byte{}, good...), "GET / HTTP/1.1\r\n\r\n"...))
	work, _ := Encode(StreamOpen{Kind: StreamWork})
	f.Add(work)
	bye, _ := Encode(Goodbye{Reason: "x"})
	f.Add(bye)
	huge := Header{Version: 1, Type: FrameStreamOpen, Length: 1 << 30}.Encode()
	f.Add(huge[:])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		err := ReadAPIProxyOpen(r)
		if err != nil {
			if !errors.Is(err, io.EOF) && !isFrameError(err) && !errors.Is(err, ErrUnexpectedStream) && !errors.Is(err, ErrUnexpectedFrame) {
				t.Fatalf("ReadAPIProxyOpen returned an error that is not a protocol error: %v", err)
			}
			return
		}
		var h Header
		if err := h.Decode(data); err != nil || h.Type != FrameStreamOpen {
			t.Fatalf("ReadAPIProxyOpen accepted %q", data)
		}
		if consumed := len(data) - r.Len(); consumed != HeaderSize+int(h.Length) {
			t.Fatalf("ReadAPIProxyOpen read %d bytes of a %d-byte frame", consumed, HeaderSize+int(h.Length))
		}
	})
}

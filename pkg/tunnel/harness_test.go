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
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/yamux"

	"github.com/flotilla-io/flotilla/pkg/tunnel/internal/testpki"
)

// waitTimeout bounds every wait in these tests. It is generous because the
// tests run with -race on small, busy machines; a passing test never waits
// for it.
const waitTimeout = 20 * time.Second

// transport is a way to carry a session: an in-memory pipe, TCP loopback or
// TLS loopback. The same session suite runs over each.
type transport struct {
	name string
	// listen returns a listener and a function that connects to it as
	// cluster clusterName (for TLS: with that cluster's client certificate,
	// the TLS handshake done and ALPNTunnel negotiated).
	listen func(t *testing.T) (l net.Listener, dial func(ctx context.Context, clusterName string) (net.Conn, error))
	// serverTLS, if set, is the hub's TLS configuration: the harness does
	// the TLS handshake before ServeConn.
	serverTLS *tls.Config
}

func transports(t *testing.T) []transport {
	pki := testpki.New()
	serverTLS := pki.ServerTLSConfig()
	serverTLS.NextProtos = []string{ALPNTunnel}
	return []transport{
		{name: "pipe", listen: listenPipe},
		{name: "tcp", listen: listenTCP},
		{
			name:      "tls",
			serverTLS: serverTLS,
			listen: func(t *testing.T) (net.Listener, func(context.Context, string) (net.Conn, error)) {
				l, dialTCP := listenTCP(t)
				return l, func(ctx context.Context, clusterName string) (net.Conn, error) {
					raw, err := dialTCP(ctx, clusterName)
					if err != nil {
						return nil, err
					}
					cfg := pki.ClientTLSConfig(clusterName)
					cfg.NextProtos = []string{ALPNTunnel}
					cfg.ServerName = "localhost"
					tc := tls.Client(raw, cfg)
					if err := tc.HandshakeContext(ctx); err != nil {
						_ = raw.Close()
						return nil, err
					}
					return tc, nil
				}
			},
		},
	}
}

func listenTCP(t *testing.T) (net.Listener, func(context.Context, string) (net.Conn, error)) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l, func(ctx context.Context, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", l.Addr().String())
	}
}

// pipeListener hands out the server ends of net.Pipe connections.
type pipeListener struct {
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

func listenPipe(t *testing.T) (net.Listener, func(context.Context, string) (net.Conn, error)) {
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	t.Cleanup(func() { _ = l.Close() })
	return l, func(ctx context.Context, _ string) (net.Conn, error) {
		client, server := net.Pipe()
		select {
		case l.conns <- server:
			return client, nil
		case <-l.done:
			return nil, net.ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// harness runs ServeConn for every connection to a transport's listener and
// reports the outcome of each handshake.
type harness struct {
	t        *testing.T
	ctx      context.Context
	dial     func(ctx context.Context, clusterName string) (net.Conn, error)
	sessions chan *ServerSession
	errs     chan error
}

// testAuthorize refuses cluster "refuse-me", checks the certificate when
// there is one, and accepts everything else.
func testAuthorize(_ context.Context, hello Hello, peer *x509.Certificate) (HelloAck, error) {
	if hello.ClusterName == "refuse-me" {
		return HelloAck{}, errors.New("cluster refuse-me is not a member of this fleet")
	}
	if peer != nil {
		if err := VerifyPeerIdentity(hello, peer); err != nil {
			return HelloAck{}, err
		}
	}
	return HelloAck{HubReplica: "hub-0"}, nil
}

func startHarness(t *testing.T, tr transport, opts ServerOptions) *harness {
	t.Helper()
	if opts.Authorize == nil {
		opts.Authorize = testAuthorize
	}
	opts.YamuxConfig = quietYamux()
	l, dial := tr.listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{
		t:        t,
		ctx:      ctx,
		dial:     dial,
		sessions: make(chan *ServerSession, 16),
		errs:     make(chan error, 16),
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		open []*ServerSession
	)
	t.Cleanup(func() {
		cancel()
		_ = l.Close()
		mu.Lock()
		for _, s := range open {
			_ = s.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if tr.serverTLS != nil {
					tc := tls.Server(conn, tr.serverTLS)
					if err := tc.HandshakeContext(ctx); err != nil {
						_ = conn.Close()
						h.errs <- err
						return
					}
					conn = tc
				}
				s, err := ServeConn(ctx, conn, opts)
				if err != nil {
					h.errs <- err
					return
				}
				mu.Lock()
				open = append(open, s)
				mu.Unlock()
				h.sessions <- s
			}()
		}
	}()
	return h
}

func quietYamux() *yamux.Config {
	cfg := DefaultYamuxConfig()
	cfg.LogOutput = io.Discard
	return cfg
}

// connect opens a client session as clusterName.
func (h *harness) connect(clusterName string) (*ClientSession, error) {
	ctx, cancel := context.WithTimeout(h.ctx, waitTimeout)
	defer cancel()
	conn, err := h.dial(ctx, clusterName)
	if err != nil {
		return nil, fmt.Errorf("failed to dial: %w", err)
	}
	return ClientHandshake(ctx, conn, ClientOptions{
		Hello:       Hello{AgentVersion: "v0.0.0-test", ClusterName: clusterName},
		YamuxConfig: quietYamux(),
	})
}

// pair connects as clusterName and returns both ends of the session.
func (h *harness) pair(clusterName string) (*ClientSession, *ServerSession) {
	h.t.Helper()
	c, err := h.connect(clusterName)
	if err != nil {
		h.t.Fatalf("connect %s: %v", clusterName, err)
	}
	h.t.Cleanup(func() { _ = c.Close() })
	s := h.nextSession()
	if s.PeerName() != clusterName {
		h.t.Fatalf("server session is for %q, want %q", s.PeerName(), clusterName)
	}
	return c, s
}

func (h *harness) nextSession() *ServerSession {
	h.t.Helper()
	return receive(h.t, h.sessions, "a server session")
}

func (h *harness) nextError() error {
	h.t.Helper()
	return receive(h.t, h.errs, "a server handshake error")
}

// rawClient connects as clusterName and starts a bare yamux client, for
// tests that misbehave below the level ClientSession allows.
func (h *harness) rawClient(clusterName string) *yamux.Session {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, waitTimeout)
	defer cancel()
	conn, err := h.dial(ctx, clusterName)
	if err != nil {
		h.t.Fatalf("dial: %v", err)
	}
	mux, err := yamux.Client(conn, quietYamux())
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = mux.Close() })
	return mux
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting for %s to close", what)
	}
}

// recvMsg receives one message from st within waitTimeout.
func recvMsg(t *testing.T, st *Stream) Message {
	t.Helper()
	type result struct {
		m   Message
		err error
	}
	ch := make(chan result, 1)
	go func() {
		m, err := st.Recv()
		ch <- result{m, err}
	}()
	r := receive(t, ch, fmt.Sprintf("a message on the %s stream", st.Kind()))
	if r.err != nil {
		t.Fatalf("Recv on the %s stream: %v", st.Kind(), r.err)
	}
	return r.m
}

// rawSession connects as clusterName and completes the handshake by hand,
// returning the yamux session and its streams by kind.
func (h *harness) rawSession(clusterName string) (*yamux.Session, map[StreamKind]*yamux.Stream) {
	h.t.Helper()
	mux := h.rawClient(clusterName)
	streams := map[StreamKind]*yamux.Stream{}
	for _, kind := range streamKinds {
		st, err := mux.OpenStream()
		if err != nil {
			h.t.Fatalf("OpenStream: %v", err)
		}
		streams[kind] = st
		mustWrite(h.t, st, StreamOpen{Kind: kind})
	}
	mustWrite(h.t, streams[StreamControl], Hello{ProtocolVersion: ProtocolVersion, ClusterName: clusterName})
	ack, err := NewFrameReader(streams[StreamControl], 0).ReadMessage()
	if err != nil {
		h.t.Fatalf("reading HelloAck: %v", err)
	}
	if a, ok := ack.(HelloAck); !ok || !a.Accepted {
		h.t.Fatalf("got %#v, want an accepting HelloAck", ack)
	}
	return mux, streams
}

func mustWrite(t *testing.T, w io.Writer, m Message) {
	t.Helper()
	if _, err := NewFrameWriter(w, 0).WriteMessage(m); err != nil {
		t.Fatalf("writing %s: %v", m.FrameType(), err)
	}
}

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
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/hashicorp/yamux"
)

// Session is an established tunnel: a yamux session over one connection,
// carrying the control, work and status streams. ClientSession (agent) and
// ServerSession (hub) embed it.
//
// A session ends when either side closes it, the connection fails, or a
// stream sees a protocol violation; CloseChan is then closed and Err says
// why. Closing one session never affects another.
type Session struct {
	side         side
	conn         net.Conn
	mux          *yamux.Session
	log          logr.Logger
	metrics      *Metrics
	maxFrameSize uint32

	// control, work and status are set during the handshake, before the
	// session is handed to the caller.
	control, work, status *Stream

	established atomic.Bool
	// capabilities are those both sides announced, set by establish.
	capabilities []string

	closeOnce sync.Once
	done      chan struct{}
	errMu     sync.Mutex
	err       error
	// afterClose are run once the session has closed (onClose); closed is
	// set when they have been. Both under errMu.
	afterClose []func()
	closed     bool

	// apiProxy hands the API proxy streams the hub opened to
	// ClientSession.AcceptAPIProxy (agent side only).
	apiProxy chan net.Conn
}

func newSession(s side, conn net.Conn, mux *yamux.Session, log logr.Logger, metrics *Metrics, maxFrameSize uint32) *Session {
	return &Session{
		side:         s,
		conn:         conn,
		mux:          mux,
		log:          log,
		metrics:      metrics,
		maxFrameSize: maxFrameSize,
		done:         make(chan struct{}),
		apiProxy:     make(chan net.Conn),
	}
}

// Capabilities returns the capabilities the session uses: those both sides
// announced in Hello and HelloAck, in the agent's order. Empty with a peer
// that predates capabilities.
func (s *Session) Capabilities() []string { return s.capabilities }

// HasCapability reports whether both sides announced capability c.
func (s *Session) HasCapability(c string) bool { return slices.Contains(s.capabilities, c) }

// Control returns the control stream: heartbeats and Goodbye.
func (s *Session) Control() *Stream { return s.control }

// Work returns the work stream: WorkInventory from the agent; WorkUpsert,
// WorkDelete and WorkSyncDone from the hub.
func (s *Session) Work() *Stream { return s.work }

// Status returns the status stream: StatusReport from the agent.
func (s *Session) Status() *Stream { return s.status }

// LocalAddr returns the local address of the underlying connection.
func (s *Session) LocalAddr() net.Addr { return s.conn.LocalAddr() }

// RemoteAddr returns the remote address of the underlying connection.
func (s *Session) RemoteAddr() net.Addr { return s.conn.RemoteAddr() }

// CloseChan is closed when the session has closed.
func (s *Session) CloseChan() <-chan struct{} { return s.done }

// Err returns nil while the session is open, and after it closed the reason
// it closed (ErrSessionClosed for a local Close).
func (s *Session) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Close closes the session, its streams and the connection. It is safe to
// call more than once and concurrently.
func (s *Session) Close() error {
	s.closeWithError(ErrSessionClosed)
	return nil
}

// CloseWithReason sends Goodbye with reason on the control stream (best
// effort, bounded by a short timeout) and closes the session.
func (s *Session) CloseWithReason(reason string) error {
	if s.isClosed() {
		return nil
	}
	s.control.setWriteDeadline(time.Now().Add(goodbyeTimeout))
	if err := s.control.Send(Goodbye{Reason: reason}); err != nil {
		s.log.V(1).Info("Failed to send goodbye", "err", err)
	}
	s.closeWithError(fmt.Errorf("%w: goodbye: %s", ErrSessionClosed, reason))
	return nil
}

// closeWithError closes the session once, recording cause as Err.
func (s *Session) closeWithError(cause error) {
	s.closeOnce.Do(func() {
		s.errMu.Lock()
		s.err = cause
		s.errMu.Unlock()
		_ = s.mux.Close() // also closes the connection and every stream
		close(s.done)
		s.errMu.Lock()
		hooks := s.afterClose
		s.afterClose, s.closed = nil, true
		s.errMu.Unlock()
		for _, f := range hooks {
			f()
		}
		if !errors.Is(cause, ErrSessionClosed) || errors.Unwrap(cause) != nil {
			s.log.V(1).Info("Tunnel session closed", "reason", cause)
		}
	})
}

// onClose runs f once the session has closed, at once if it has: a goroutine
// waiting on CloseChan would do the same, at the cost of its stack for every
// session a hub holds.
func (s *Session) onClose(f func()) {
	s.errMu.Lock()
	if !s.closed {
		s.afterClose = append(s.afterClose, f)
		s.errMu.Unlock()
		return
	}
	s.errMu.Unlock()
	f()
}

func (s *Session) isClosed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// closedError returns the error for an operation on a closed session: it
// matches ErrSessionClosed and wraps the cause.
func (s *Session) closedError() error {
	cause := s.Err()
	if cause == nil || errors.Is(cause, ErrSessionClosed) {
		if cause == nil {
			return ErrSessionClosed
		}
		return cause
	}
	return fmt.Errorf("%w: %w", ErrSessionClosed, cause)
}

func (s *Session) phase() phase {
	if s.established.Load() {
		return phaseEstablished
	}
	return phaseHandshake
}

func (s *Session) stream(kind StreamKind) **Stream {
	switch kind {
	case StreamControl:
		return &s.control
	case StreamWork:
		return &s.work
	case StreamStatus:
		return &s.status
	}
	return nil
}

// establish ends the handshake: it limits sends to what the peer accepts,
// and starts taking the streams the peer opens after it.
func (s *Session) establish(peerMaxFrameSize uint32, capabilities []string) {
	s.capabilities = capabilities
	for _, st := range []*Stream{s.control, s.work, s.status} {
		st.w.SetMaxFrameSize(peerMaxFrameSize)
		st.r.SetMaxFrameSize(s.maxFrameSize)
	}
	s.established.Store(true)
	go s.acceptStreams()
}

// acceptStreams takes the streams the peer opens after the handshake until
// the session ends, and closes the session when the yamux session ends on
// its own (connection lost, keepalive timeout).
//
// The hub may open API proxy streams (agent side): each is checked and
// handed to AcceptAPIProxy, or closed, alone, if the session did not
// negotiate CapabilityAPIProxy. The agent may open no stream after the
// handshake (hub side): one that does closes the session.
func (s *Session) acceptStreams() {
	for {
		ys, err := s.mux.AcceptStream()
		if err != nil {
			s.closeWithError(fmt.Errorf("connection closed: %w", err))
			return
		}
		if s.side == sideHub {
			s.metrics.unexpectedStream()
			s.log.V(1).Info("Closing the session: the agent opened a stream after the handshake", "streamID", ys.StreamID())
			s.closeWithError(fmt.Errorf("%w: stream %d opened after the handshake", ErrUnexpectedStream, ys.StreamID()))
			return
		}
		if !s.HasCapability(CapabilityAPIProxy) {
			s.metrics.unexpectedStream()
			s.log.Info("Closing a stream the hub opened without negotiating the API proxy", "streamID", ys.StreamID(), "capabilities", s.capabilities)
			_ = ys.Close()
			continue
		}
		go s.admitAPIProxy(ys)
	}
}

// admitAPIProxy reads the StreamOpen of an API proxy stream the hub opened
// and hands the stream to AcceptAPIProxy; a stream whose opening frame is
// wrong or late, or that nobody takes within APIProxyOpenTimeout, is closed
// alone.
func (s *Session) admitAPIProxy(ys *yamux.Stream) {
	_ = ys.SetReadDeadline(time.Now().Add(APIProxyOpenTimeout))
	if err := ReadAPIProxyOpen(ys); err != nil {
		s.metrics.frameError(err)
		s.log.Info("Closing an API proxy stream with a bad opening", "streamID", ys.StreamID(), "err", err)
		_ = ys.Close()
		return
	}
	_ = ys.SetReadDeadline(time.Time{})
	timer := time.NewTimer(APIProxyOpenTimeout)
	defer timer.Stop()
	select {
	case s.apiProxy <- ys:
	case <-s.done:
		_ = ys.Close()
	case <-timer.C:
		s.log.Info("Closing an API proxy stream nobody took", "streamID", ys.StreamID(), "waited", APIProxyOpenTimeout)
		_ = ys.Close()
	}
}

// ReadAPIProxyOpen reads and checks the opening frame of an API proxy
// stream from r: a StreamOpen naming StreamAPIProxy, at most
// HandshakeMaxFrameSize long. It reads nothing past that frame.
func ReadAPIProxyOpen(r io.Reader) error {
	m, err := NewFrameReader(r, HandshakeMaxFrameSize).ReadMessage()
	if err != nil {
		return fmt.Errorf("failed to read the opening of an API proxy stream: %w", err)
	}
	open, ok := m.(StreamOpen)
	if !ok {
		return fmt.Errorf("%w: %s instead of StreamOpen opening an API proxy stream", ErrUnexpectedFrame, m.FrameType())
	}
	if open.Kind != StreamAPIProxy {
		return fmt.Errorf("%w: the hub opened a %s stream", ErrUnexpectedStream, open.Kind)
	}
	return nil
}

// startHandshake arranges for the session to close, with a handshake error,
// if ctx ends before stop is called. stop reports false if that already
// happened.
func (s *Session) startHandshake(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, func() {
		cause := context.Cause(ctx)
		if errors.Is(cause, context.DeadlineExceeded) {
			s.closeWithError(fmt.Errorf("%w: %w", ErrHandshakeTimeout, cause))
			return
		}
		s.closeWithError(fmt.Errorf("handshake canceled: %w", cause))
	})
}

// handshakeFailed closes the session with err (unless it already closed for
// another reason) and returns the session's cause.
func (s *Session) handshakeFailed(err error) error {
	s.closeWithError(err)
	return fmt.Errorf("tunnel handshake failed: %w", s.Err())
}

// ClientSession is the agent's end of an established session.
type ClientSession struct {
	*Session
	ack HelloAck
}

// HelloAck returns the hub's answer to Hello.
func (c *ClientSession) HelloAck() HelloAck { return c.ack }

// AcceptAPIProxy waits for the next API proxy stream the hub opens and
// returns it as a net.Conn carrying one HTTP/1.1 client connection (its
// StreamOpen already read). It returns an error matching ErrSessionClosed
// once the session has closed. Streams arrive only in sessions that
// negotiated CapabilityAPIProxy; a stream nobody accepts within
// APIProxyOpenTimeout is closed.
func (c *ClientSession) AcceptAPIProxy() (net.Conn, error) {
	select {
	case conn := <-c.apiProxy:
		return conn, nil
	case <-c.done:
		return nil, c.closedError()
	}
}

// APIProxyListener returns a net.Listener whose Accept is AcceptAPIProxy,
// for an http.Server. Closing the listener ends its Accept calls but not the
// session.
func (c *ClientSession) APIProxyListener() net.Listener {
	return &apiProxyListener{c: c, closed: make(chan struct{})}
}

type apiProxyListener struct {
	c         *ClientSession
	closeOnce sync.Once
	closed    chan struct{}
}

func (l *apiProxyListener) Accept() (net.Conn, error) {
	select {
	case conn := <-l.c.apiProxy:
		return conn, nil
	case <-l.c.done:
		return nil, l.c.closedError()
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *apiProxyListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

func (l *apiProxyListener) Addr() net.Addr { return l.c.LocalAddr() }

// ServerSession is the hub's end of an established session.
type ServerSession struct {
	*Session
	hello Hello
	peer  *x509.Certificate
}

// PeerName returns the member cluster's name: Hello.ClusterName, which
// Authorize accepted (by default, checked against the client certificate).
func (s *ServerSession) PeerName() string { return s.hello.ClusterName }

// Hello returns the agent's Hello.
func (s *ServerSession) Hello() Hello { return s.hello }

// PeerCertificate returns the leaf of the client's verified certificate
// chain, or nil.
func (s *ServerSession) PeerCertificate() *x509.Certificate { return s.peer }

// OpenAPIProxy opens an API proxy stream to the agent and returns it as a
// net.Conn on which to write one HTTP/1.1 client connection to the member's
// API server. In a session that did not negotiate CapabilityAPIProxy it
// opens nothing and returns an error matching ErrAPIProxyUnavailable, whose
// text is one line saying what to do. ctx bounds the opening.
func (s *ServerSession) OpenAPIProxy(ctx context.Context) (net.Conn, error) {
	if !s.HasCapability(CapabilityAPIProxy) {
		return nil, fmt.Errorf("%w: the agent of member %q (version %q) did not announce capability %q: upgrade it, or run it with --proxy=true",
			ErrAPIProxyUnavailable, s.PeerName(), s.hello.AgentVersion, CapabilityAPIProxy)
	}
	if s.isClosed() {
		return nil, s.closedError()
	}
	type opened struct {
		ys  *yamux.Stream
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		ys, err := s.mux.OpenStream()
		ch <- opened{ys, err}
	}()
	var ys *yamux.Stream
	select {
	case o := <-ch:
		if o.err != nil {
			return nil, fmt.Errorf("failed to open an API proxy stream to member %q: %w", s.PeerName(), o.err)
		}
		ys = o.ys
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.ys != nil {
				_ = o.ys.Close()
			}
		}()
		return nil, fmt.Errorf("failed to open an API proxy stream to member %q: %w", s.PeerName(), context.Cause(ctx))
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = ys.SetWriteDeadline(deadline)
	}
	if _, err := NewFrameWriter(ys, HandshakeMaxFrameSize).WriteMessage(StreamOpen{Kind: StreamAPIProxy}); err != nil {
		_ = ys.Close()
		return nil, fmt.Errorf("failed to open an API proxy stream to member %q: %w", s.PeerName(), err)
	}
	_ = ys.SetWriteDeadline(time.Time{})
	return ys, nil
}

// Dial connects to the hub at opts.Address: TCP, TLS with ALPNTunnel (the
// hub must negotiate it), a yamux client session, the control, work and
// status streams, and the Hello/HelloAck exchange. A refused session returns
// a *RefusedError. Everything is bounded by ctx and opts.HandshakeTimeout.
func Dial(ctx context.Context, opts DialOptions) (*ClientSession, error) {
	copts, err := opts.ClientOptions.complete(ctx)
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, copts.HandshakeTimeout)
	defer cancel()
	cs, err := dial(hctx, opts, copts)
	copts.Metrics.handshake(sideAgent, err)
	return cs, err
}

func dial(ctx context.Context, opts DialOptions, copts ClientOptions) (*ClientSession, error) {
	if opts.Address == "" {
		return nil, errors.New("tunnel: DialOptions.Address is required")
	}
	if opts.TLSConfig == nil {
		return nil, errors.New("tunnel: DialOptions.TLSConfig is required")
	}
	dialContext := opts.DialContext
	if dialContext == nil {
		dialContext = (&net.Dialer{}).DialContext
	}
	raw, err := dialContext(ctx, "tcp", opts.Address)
	if err != nil {
		return nil, fmt.Errorf("failed to connect to hub %s: %w", opts.Address, err)
	}
	cfg := opts.TLSConfig.Clone()
	cfg.NextProtos = []string{ALPNTunnel}
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(opts.Address)
		if err != nil {
			host = opts.Address
		}
		cfg.ServerName = host
	}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, fmt.Errorf("failed TLS handshake with hub %s: %w", opts.Address, err)
	}
	if p := conn.ConnectionState().NegotiatedProtocol; p != ALPNTunnel {
		_ = conn.Close()
		return nil, fmt.Errorf("%w: hub %s negotiated %q, want %q", ErrALPNMismatch, opts.Address, p, ALPNTunnel)
	}
	return clientHandshake(ctx, conn, copts)
}

// ClientHandshake runs the agent's side of the tunnel handshake over conn,
// which the caller has connected (and, for TLS, handshaken with ALPNTunnel).
// Dial uses it; it is also what tests use over pipes and plain TCP. On error
// conn is closed.
func ClientHandshake(ctx context.Context, conn net.Conn, opts ClientOptions) (*ClientSession, error) {
	copts, err := opts.complete(ctx)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, copts.HandshakeTimeout)
	defer cancel()
	cs, err := clientHandshake(hctx, conn, copts)
	copts.Metrics.handshake(sideAgent, err)
	return cs, err
}

func clientHandshake(ctx context.Context, conn net.Conn, opts ClientOptions) (*ClientSession, error) {
	mux, err := yamux.Client(conn, opts.YamuxConfig)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("failed to start yamux client: %w", err)
	}
	s := newSession(sideAgent, conn, mux, opts.Logger, opts.Metrics, opts.MaxFrameSize)
	stop := s.startHandshake(ctx)
	defer stop()

	for _, kind := range streamKinds {
		ys, err := mux.OpenStream()
		if err != nil {
			return nil, s.handshakeFailed(fmt.Errorf("failed to open the %s stream: %w", kind, err))
		}
		st := newStream(s, kind, ys)
		*s.stream(kind) = st
		if err := st.Send(StreamOpen{Kind: kind}); err != nil {
			return nil, s.handshakeFailed(err)
		}
	}
	if err := s.control.Send(opts.Hello); err != nil {
		return nil, s.handshakeFailed(err)
	}
	m, err := s.control.Recv()
	if err != nil {
		return nil, s.handshakeFailed(err)
	}
	var ack HelloAck
	switch m := m.(type) {
	case HelloAck:
		ack = m
	case Goodbye:
		return nil, s.handshakeFailed(fmt.Errorf("%w: hub said goodbye: %s", ErrSessionClosed, m.Reason))
	default:
		return nil, s.handshakeFailed(fmt.Errorf("%w: %s instead of HelloAck", ErrUnexpectedFrame, m.FrameType()))
	}
	if err := checkAck(opts, ack); err != nil {
		if ack.Accepted {
			s.control.setWriteDeadline(time.Now().Add(goodbyeTimeout))
			_ = s.control.Send(Goodbye{Reason: err.Error()})
		}
		s.closeWithError(err)
		return nil, err
	}
	if !ack.Accepted {
		refused := &RefusedError{Reason: ack.Reason}
		s.closeWithError(refused)
		return nil, refused
	}
	if !stop() {
		return nil, fmt.Errorf("tunnel handshake failed: %w", s.Err())
	}
	s.establish(ack.MaxFrameSize, Intersect(opts.Hello.Capabilities, ack.Capabilities))
	s.log.V(1).Info("Tunnel session established", "hubReplica", ack.HubReplica, "hubVersion", ack.HubVersion, "capabilities", s.capabilities, "remote", conn.RemoteAddr().String())
	return &ClientSession{Session: s, ack: ack}, nil
}

// ServeConn runs the hub's side of the tunnel handshake over conn. If conn
// is a *tls.Conn its TLS handshake is completed if the caller has not done
// so, ALPNTunnel must have been negotiated, and the leaf of the verified
// client certificate chain is passed to Authorize (an unverified certificate
// is never used as an identity).
//
// ServeConn accepts exactly three streams, identified by their StreamOpen
// (any order; a duplicate or unknown kind fails), reads Hello, calls
// opts.Authorize and answers HelloAck. Any failure, and a handshake that
// does not finish within opts.HandshakeTimeout, closes this connection and
// returns an error; it never affects other sessions. A refused session
// returns a *RefusedError.
func ServeConn(ctx context.Context, conn net.Conn, opts ServerOptions) (*ServerSession, error) {
	opts = opts.complete(ctx)
	hctx, cancel := context.WithTimeout(ctx, opts.HandshakeTimeout)
	defer cancel()
	ss, err := serverHandshake(hctx, conn, opts)
	opts.Metrics.handshake(sideHub, err)
	return ss, err
}

func serverHandshake(ctx context.Context, conn net.Conn, opts ServerOptions) (*ServerSession, error) {
	peer, err := verifiedPeer(ctx, conn)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	mux, err := yamux.Server(conn, opts.YamuxConfig)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("failed to start yamux server: %w", err)
	}
	s := newSession(sideHub, conn, mux, opts.Logger, opts.Metrics, opts.MaxFrameSize)
	stop := s.startHandshake(ctx)
	defer stop()

	for range streamKinds {
		ys, err := mux.AcceptStream()
		if err != nil {
			return nil, s.handshakeFailed(fmt.Errorf("failed to accept a stream: %w", err))
		}
		st := newStream(s, 0, ys)
		m, err := st.Recv()
		if err != nil {
			return nil, s.handshakeFailed(err)
		}
		open, ok := m.(StreamOpen)
		if !ok { // unreachable: placement rules allow only StreamOpen here
			return nil, s.handshakeFailed(fmt.Errorf("%w: %s instead of StreamOpen", ErrUnexpectedFrame, m.FrameType()))
		}
		slot := s.stream(open.Kind)
		if slot == nil {
			// Only the hub opens the other kinds, after the handshake.
			s.metrics.unexpectedStream()
			return nil, s.handshakeFailed(fmt.Errorf("%w: the agent opened a %s stream", ErrUnexpectedStream, open.Kind))
		}
		if *slot != nil {
			s.metrics.frameError(ErrDuplicateStream)
			return nil, s.handshakeFailed(fmt.Errorf("%w: %s", ErrDuplicateStream, open.Kind))
		}
		st.kind = open.Kind
		*slot = st
	}

	m, err := s.control.Recv()
	if err != nil {
		return nil, s.handshakeFailed(err)
	}
	var hello Hello
	switch m := m.(type) {
	case Hello:
		hello = m
	case Goodbye:
		return nil, s.handshakeFailed(fmt.Errorf("%w: agent said goodbye: %s", ErrSessionClosed, m.Reason))
	default:
		return nil, s.handshakeFailed(fmt.Errorf("%w: %s instead of Hello", ErrUnexpectedFrame, m.FrameType()))
	}

	ack := authorize(ctx, opts, hello, peer)
	// Once the hub accepts, the handshake deadline no longer applies: the
	// agent takes the session as established as soon as it reads HelloAck.
	// (yamux bounds the write with ConnectionWriteTimeout.)
	if ack.Accepted && !stop() {
		return nil, fmt.Errorf("tunnel handshake failed: %w", s.Err())
	}
	if err := s.control.Send(ack); err != nil {
		if ack.Accepted {
			return nil, s.handshakeFailed(err)
		}
		// A refusal stays a refusal. (yamux may report a write as failed
		// when the agent, having read it, hangs up at once.)
		s.log.V(1).Info("Failed to send a refusal", "err", err)
	}
	if !ack.Accepted {
		// Let the agent read the refusal and hang up first.
		linger := time.NewTimer(refusalLinger)
		select {
		case <-mux.CloseChan():
		case <-ctx.Done():
		case <-linger.C:
		}
		linger.Stop()
		refused := &RefusedError{Reason: ack.Reason}
		s.closeWithError(refused)
		opts.Logger.Info("Refused tunnel session", "cluster", hello.ClusterName, "reason", ack.Reason, "remote", conn.RemoteAddr().String())
		return nil, refused
	}
	s.establish(hello.MaxFrameSize, Intersect(hello.Capabilities, opts.Capabilities))
	s.log.V(1).Info("Tunnel session established", "cluster", hello.ClusterName, "agentVersion", hello.AgentVersion, "capabilities", s.capabilities, "remote", conn.RemoteAddr().String())
	return &ServerSession{Session: s, hello: hello, peer: peer}, nil
}

// authorize builds the HelloAck for hello. Every answer, a refusal too,
// announces the hub's version and capabilities.
func authorize(ctx context.Context, opts ServerOptions, hello Hello, peer *x509.Certificate) HelloAck {
	refuse := func(reason string) HelloAck {
		return HelloAck{Reason: reason, HubVersion: opts.Version, Capabilities: opts.Capabilities}
	}
	if hello.ProtocolVersion != ProtocolVersion {
		return refuse(fmt.Sprintf("unsupported protocol version %d; the hub speaks %d", hello.ProtocolVersion, ProtocolVersion))
	}
	ack, err := opts.Authorize(ctx, hello, peer)
	if err != nil {
		return refuse(err.Error())
	}
	// Only an authorized peer learns what it lacks.
	if missing := Missing(opts.RequiredCapabilities, hello.Capabilities); missing != "" {
		return refuse(fmt.Sprintf("the agent does not speak capability %q, which this hub (%s) requires: upgrade the agent", missing, opts.Version))
	}
	ack.HubVersion = opts.Version
	ack.Capabilities = opts.Capabilities
	ack.Accepted = true
	ack.Reason = ""
	if ack.HeartbeatPeriodSeconds <= 0 {
		ack.HeartbeatPeriodSeconds = int32(max(opts.HeartbeatPeriod/time.Second, 1))
	}
	if ack.HubReplica == "" {
		ack.HubReplica = opts.ReplicaName
	}
	if ack.MaxFrameSize == 0 {
		ack.MaxFrameSize = opts.MaxFrameSize
	}
	return ack
}

// checkAck is the agent's verdict on the hub's HelloAck: the caller's check
// (CheckHub), then, for an accepted session, the capabilities the agent
// requires.
func checkAck(opts ClientOptions, ack HelloAck) error {
	if opts.CheckHub != nil {
		if err := opts.CheckHub(ack); err != nil {
			return fmt.Errorf("%w: %w", ErrIncompatiblePeer, err)
		}
	}
	if !ack.Accepted {
		return nil
	}
	if missing := Missing(opts.RequiredCapabilities, ack.Capabilities); missing != "" {
		return fmt.Errorf("%w: the hub does not speak capability %q, which this agent requires: upgrade the hub", ErrMissingCapability, missing)
	}
	return nil
}

// Intersect returns the capabilities in both ours and theirs, in our order,
// without duplicates. Names only one side knows are ignored.
func Intersect(ours, theirs []string) []string {
	var both []string
	for _, c := range ours {
		if slices.Contains(theirs, c) && !slices.Contains(both, c) {
			both = append(both, c)
		}
	}
	return both
}

// Missing returns the first of required that announced lacks, or "".
func Missing(required, announced []string) string {
	for _, c := range required {
		if !slices.Contains(announced, c) {
			return c
		}
	}
	return ""
}

// verifiedPeer returns the leaf of the verified client certificate chain of
// a TLS connection (nil if there is none, or conn is not TLS), completing
// the TLS handshake if needed and checking the negotiated ALPN protocol.
func verifiedPeer(ctx context.Context, conn net.Conn) (*x509.Certificate, error) {
	tc, ok := conn.(*tls.Conn)
	if !ok {
		return nil, nil
	}
	if !tc.ConnectionState().HandshakeComplete {
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, fmt.Errorf("failed TLS handshake: %w", err)
		}
	}
	state := tc.ConnectionState()
	if state.NegotiatedProtocol != ALPNTunnel {
		return nil, fmt.Errorf("%w: negotiated %q, want %q", ErrALPNMismatch, state.NegotiatedProtocol, ALPNTunnel)
	}
	if len(state.VerifiedChains) > 0 && len(state.VerifiedChains[0]) > 0 {
		return state.VerifiedChains[0][0], nil
	}
	return nil, nil
}

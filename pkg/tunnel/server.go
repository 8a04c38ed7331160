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
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
)

// Server accepts tunnel and join connections on one TLS listener and
// dispatches them by the ALPN protocol the TLS handshake negotiated:
// ALPNTunnel to ServeConn and OnTunnel, ALPNJoin to OnJoin. Each connection
// runs in its own goroutine; a panic in a handler is recovered, logged and
// closes only that connection.
type Server struct {
	// TLSConfig is the hub's TLS configuration. It is copied; if NextProtos
	// is empty it is set to the protocols that have a handler. Its
	// ClientAuth applies to join connections (use
	// tls.VerifyClientCertIfGiven: a joining agent has no certificate yet,
	// a leaving or renewing one has); a tunnel connection must always
	// present a certificate that ClientCAs verify, in the TLS handshake.
	// Required.
	TLSConfig *tls.Config

	// HandshakeTimeout bounds the TLS handshake. The tunnel handshake that
	// follows is bounded by Tunnel.HandshakeTimeout. Default
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration

	// Tunnel configures ServeConn for tunnel connections.
	Tunnel ServerOptions

	// OnTunnel serves an established session. Its ctx is cancelled when
	// the session closes; when Serve stops, the session is closed after a
	// Goodbye is sent. The session is closed when OnTunnel returns. Nil
	// refuses tunnel connections.
	OnTunnel func(ctx context.Context, s *ServerSession)

	// OnJoin serves a join connection. The connection is closed when OnJoin
	// returns or Serve stops. Nil refuses join connections.
	OnJoin func(ctx context.Context, conn *tls.Conn)

	// MaxConnections caps the connections served at once (handshaking,
	// joining and established); more are closed as soon as they are
	// accepted. Default DefaultMaxConnections.
	MaxConnections int

	// MaxHandshakes caps the connections that are in their TLS or tunnel
	// handshake or in a join exchange at once, i.e. not authorized yet; more
	// are closed as soon as they are accepted. Default DefaultMaxHandshakes.
	MaxHandshakes int

	// Admission paces new connections: one is served only when Admission
	// allows it at once; the others are closed as soon as they are
	// accepted, before any TLS work, and counted as refused (reason
	// "rate"). Agents redial after their jittered backoff
	// (RunWithReconnect), so a fleet that reconnects at once, after a hub
	// restart, arrives at the limiter's rate instead of all together. Nil:
	// no pacing.
	Admission *rate.Limiter

	// Logger receives the server's logs. Default: the logger in Serve's
	// context, else none.
	Logger logr.Logger
}

// Defaults of Server's connection caps.
const (
	// DefaultMaxConnections is Server.MaxConnections' default.
	DefaultMaxConnections = 10000
	// DefaultMaxHandshakes is Server.MaxHandshakes' default.
	DefaultMaxHandshakes = 64
)

// perProtocolConfig makes the TLS configuration depend on the protocol the
// client asks for: a client that offers ALPNTunnel must present a
// certificate the CAs in cfg.ClientCAs verify, during the TLS handshake, so
// that an unauthenticated peer never reaches yamux; a client that offers
// ALPNJoin (which has no certificate before it joins) is served with cfg's
// own ClientAuth, and only the join protocol.
func perProtocolConfig(cfg *tls.Config) *tls.Config {
	tunnelCfg := cfg.Clone()
	tunnelCfg.ClientAuth = tls.RequireAndVerifyClientCert
	tunnelCfg.NextProtos = []string{ALPNTunnel}
	joinCfg := cfg.Clone()
	joinCfg.NextProtos = []string{ALPNJoin}
	out := cfg.Clone()
	out.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		for _, p := range hello.SupportedProtos {
			switch {
			case p == ALPNTunnel && slices.Contains(cfg.NextProtos, ALPNTunnel):
				return tunnelCfg, nil
			case p == ALPNJoin && slices.Contains(cfg.NextProtos, ALPNJoin):
				return joinCfg, nil
			}
		}
		return nil, nil // neither: the connection is closed after the handshake
	}
	return out
}

// Serve accepts connections on l until ctx is done, then closes l, closes
// every connection and waits for their handlers to return. It returns nil
// when ctx ended it, and the listener's error otherwise.
func (srv *Server) Serve(ctx context.Context, l net.Listener) error {
	if srv.TLSConfig == nil {
		return errors.New("tunnel: Server.TLSConfig is required")
	}
	if srv.OnTunnel == nil && srv.OnJoin == nil {
		return errors.New("tunnel: Server needs OnTunnel or OnJoin")
	}
	log := srv.Logger
	if log.GetSink() == nil {
		log = logr.FromContextOrDiscard(ctx)
	}
	cfg := srv.TLSConfig.Clone()
	if len(cfg.NextProtos) == 0 {
		if srv.OnTunnel != nil {
			cfg.NextProtos = append(cfg.NextProtos, ALPNTunnel)
		}
		if srv.OnJoin != nil {
			cfg.NextProtos = append(cfg.NextProtos, ALPNJoin)
		}
	}

	cfg = perProtocolConfig(cfg)
	maxConns, maxHandshakes := srv.MaxConnections, srv.MaxHandshakes
	if maxConns <= 0 {
		maxConns = DefaultMaxConnections
	}
	if maxHandshakes <= 0 {
		maxHandshakes = DefaultMaxHandshakes
	}
	var conns, handshakes atomic.Int64

	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = l.Close() })
	defer stop()

	var delay time.Duration
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("tunnel listener closed: %w", err)
			}
			// Out of file descriptors and the like: wait and retry.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			log.Error(err, "Failed to accept a connection; retrying", "delay", delay)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(delay):
			}
			continue
		}
		delay = 0
		if conns.Load() >= int64(maxConns) || handshakes.Load() >= int64(maxHandshakes) {
			srv.Tunnel.Metrics.connectionRefused(refusedOverCap)
			log.V(1).Info("Closing a connection over the caps", "connections", conns.Load(), "handshakes", handshakes.Load())
			_ = conn.Close()
			continue
		}
		if srv.Admission != nil && !srv.Admission.Allow() {
			srv.Tunnel.Metrics.connectionRefused(refusedOverRate)
			log.V(2).Info("Closing a connection over the admission rate")
			_ = conn.Close()
			continue
		}
		conns.Add(1)
		handshakes.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conns.Add(-1)
			var once sync.Once
			authorized := func() { once.Do(func() { handshakes.Add(-1) }) }
			defer authorized()
			srv.serveConn(ctx, conn, cfg, authorized, log.WithValues("remote", conn.RemoteAddr().String()))
		}()
	}
}

// serveConn serves one connection; it calls authorized once the connection
// no longer counts against MaxHandshakes (its session is established).
func (srv *Server) serveConn(ctx context.Context, conn net.Conn, cfg *tls.Config, authorized func(), log logr.Logger) {
	defer func() {
		if r := recover(); r != nil {
			log.Error(fmt.Errorf("panic: %v", r), "Recovered from a panic serving a tunnel connection; closing it", "stack", string(debug.Stack()))
		}
	}()
	defer func() { _ = conn.Close() }()

	tc := tls.Server(conn, cfg)
	timeout := srv.HandshakeTimeout
	if timeout <= 0 {
		timeout = DefaultHandshakeTimeout
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	err := tc.HandshakeContext(hctx)
	cancel()
	if err != nil {
		log.V(1).Info("TLS handshake failed", "err", err)
		return
	}

	proto := tc.ConnectionState().NegotiatedProtocol
	switch {
	case proto == ALPNTunnel && srv.OnTunnel != nil:
		opts := srv.Tunnel
		if opts.Logger.GetSink() == nil {
			opts.Logger = log
		}
		sess, err := ServeConn(ctx, tc, opts)
		if err != nil {
			if !errors.Is(err, ErrRefused) { // refusals are logged by ServeConn
				log.Info("Tunnel handshake failed", "err", err)
			}
			return
		}
		authorized()
		defer func() { _ = sess.Close() }()
		// On shutdown the agent is told why before the session closes, and
		// OnTunnel's context ends only when the session has closed.
		stopOnShutdown := context.AfterFunc(ctx, func() { _ = sess.CloseWithReason("hub is shutting down") })
		defer stopOnShutdown()
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		sess.onClose(cancel)
		srv.OnTunnel(sctx, sess)
	case proto == ALPNJoin && srv.OnJoin != nil:
		defer func() { _ = tc.Close() }() // sends close_notify
		stopOnShutdown := context.AfterFunc(ctx, func() { _ = tc.Close() })
		defer stopOnShutdown()
		srv.OnJoin(ctx, tc)
	default:
		log.V(1).Info("Closing a connection that negotiated no served protocol", "protocol", proto, "served", cfg.NextProtos)
	}
}

// ClosedBeforeHandshake reports whether err, from a client's TLS handshake
// with the hub, is the connection closed before the handshake was done: what
// Server does to a connection over its admission rate or caps. Nothing was
// exchanged, so the client may try again after a backoff.
func ClosedBeforeHandshake(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

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
	"fmt"
	"net"
	"time"

	"github.com/go-logr/logr"
	"github.com/hashicorp/yamux"
)

// Defaults for the options below. They are local policy, not part of the
// wire protocol.
const (
	// DefaultHandshakeTimeout bounds connection setup: TCP dial, TLS
	// handshake and the tunnel handshake (streams, Hello, HelloAck).
	DefaultHandshakeTimeout = 15 * time.Second
	// DefaultHeartbeatPeriod is the heartbeat period: what the hub announces
	// in HelloAck for a member whose MemberCluster names none, and what an
	// agent uses when a HelloAck names none. The one place it is set: the
	// MemberCluster CRD's default for spec.heartbeatPeriodSeconds is checked
	// against it (apis/cluster/v1beta1).
	DefaultHeartbeatPeriod = 5 * time.Second

	// refusalLinger is how long a hub that refused a session waits for the
	// agent to hang up before closing, so that the HelloAck is not lost to a
	// connection reset.
	refusalLinger = 2 * time.Second
	// goodbyeTimeout bounds sending Goodbye in CloseWithReason.
	goodbyeTimeout = time.Second
)

// ClientOptions configure the agent's side of a session.
type ClientOptions struct {
	// Hello is sent to the hub. ClusterName is required. ProtocolVersion
	// defaults to ProtocolVersion and MaxFrameSize to the MaxFrameSize below.
	// Hello.Capabilities announces the capabilities the agent speaks.
	Hello Hello

	// RequiredCapabilities are capabilities the agent cannot work without: a
	// hub that does not announce one of them is hung up on (Goodbye) and the
	// handshake fails with ErrMissingCapability. Default none.
	RequiredCapabilities []string

	// CheckHub, if set, inspects the hub's HelloAck, accepting or refusing,
	// before the session is used (the agent's version-skew check). An error
	// ends the handshake (an accepted session with a Goodbye carrying the
	// error's text) and is returned wrapped in ErrIncompatiblePeer. Default
	// none.
	CheckHub func(ack HelloAck) error

	// MaxFrameSize is the largest payload the agent accepts. Default
	// DefaultMaxFrameSize; at most MaxFrameSizeLimit.
	MaxFrameSize uint32

	// HandshakeTimeout bounds connection setup (for Dial: TCP, TLS and the
	// tunnel handshake). Default DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration

	// YamuxConfig tunes the yamux session. It is copied; if it sets neither
	// Logger nor LogOutput, yamux logs go to Logger at V(1). Default
	// DefaultYamuxConfig().
	YamuxConfig *yamux.Config

	// Logger receives the session's logs. Default: the logger in the
	// context passed to Dial or ClientHandshake, else none.
	Logger logr.Logger

	// Metrics records frame and handshake metrics. Default nil (none).
	Metrics *Metrics
}

// DialOptions configure Dial.
type DialOptions struct {
	// Address is the hub's host:port. Required.
	Address string

	// TLSConfig carries the agent's client certificate and the hub CA. It is
	// copied; NextProtos is set to ALPNTunnel and ServerName defaults to the
	// host of Address. Required.
	TLSConfig *tls.Config

	// DialContext opens the TCP connection. Default: a net.Dialer.
	DialContext func(ctx context.Context, network, address string) (net.Conn, error)

	ClientOptions
}

// AuthorizeFunc decides whether the hub accepts a session. hello has passed
// validation and carries this hub's protocol version; peer is the leaf of the
// verified client certificate chain, or nil when the connection is not TLS or
// the client presented no verified certificate. ctx is bounded by the
// handshake timeout.
//
// To refuse, return an error: its text is sent to the agent as
// HelloAck.Reason, so it must not reveal secrets. Otherwise the session is
// accepted; the returned HelloAck may set HeartbeatPeriodSeconds, HubReplica
// and MaxFrameSize (zero fields take the ServerOptions values) and its
// Accepted and Reason fields are ignored.
type AuthorizeFunc func(ctx context.Context, hello Hello, peer *x509.Certificate) (HelloAck, error)

// ServerOptions configure the hub's side of a session.
type ServerOptions struct {
	// Authorize decides whether to accept a session. Default
	// AuthorizeByCertificate: the verified client certificate's CommonName
	// must equal Hello.ClusterName.
	Authorize AuthorizeFunc

	// HeartbeatPeriod is announced in HelloAck.HeartbeatPeriodSeconds.
	// Default DefaultHeartbeatPeriod.
	HeartbeatPeriod time.Duration

	// ReplicaName is announced in HelloAck.HubReplica. Default empty.
	ReplicaName string

	// Version is the hub's build version, announced in HelloAck.HubVersion
	// (with a refusal too). Default empty (not announced).
	Version string

	// Capabilities are the capabilities the hub speaks, announced in
	// HelloAck.Capabilities. Default none.
	Capabilities []string

	// RequiredCapabilities are capabilities the hub cannot work without: an
	// authorized agent whose Hello lacks one of them is refused with a
	// one-line reason naming it. Default none.
	RequiredCapabilities []string

	// MaxFrameSize is the largest payload the hub accepts. Default
	// DefaultMaxFrameSize; at most MaxFrameSizeLimit.
	MaxFrameSize uint32

	// HandshakeTimeout bounds the tunnel handshake (streams, Hello,
	// Authorize, HelloAck); the TLS handshake is the caller's (or Server's).
	// Default DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration

	// YamuxConfig tunes the yamux session, as in ClientOptions.
	YamuxConfig *yamux.Config

	// Logger receives the session's logs. Default: the logger in the
	// context passed to ServeConn, else none.
	Logger logr.Logger

	// Metrics records frame and handshake metrics. Default nil (none).
	Metrics *Metrics
}

// AuthorizeByCertificate is the default AuthorizeFunc: it accepts a session
// whose verified client certificate names the cluster in Hello (see
// VerifyPeerIdentity).
func AuthorizeByCertificate(_ context.Context, hello Hello, peer *x509.Certificate) (HelloAck, error) {
	return HelloAck{}, VerifyPeerIdentity(hello, peer)
}

// VerifyPeerIdentity checks that peer, the verified client certificate, is
// the identity of hello.ClusterName: its Subject CommonName must equal the
// cluster name. The error matches ErrIdentityMismatch.
func VerifyPeerIdentity(hello Hello, peer *x509.Certificate) error {
	if peer == nil {
		return fmt.Errorf("%w: no verified client certificate", ErrIdentityMismatch)
	}
	if cn := peer.Subject.CommonName; cn != hello.ClusterName {
		return fmt.Errorf("%w: client certificate is for %q but hello names cluster %q", ErrIdentityMismatch, cn, hello.ClusterName)
	}
	return nil
}

func (o ClientOptions) complete(ctx context.Context) (ClientOptions, error) {
	if o.Hello.ClusterName == "" {
		return o, fmt.Errorf("%w: Hello.ClusterName is required", ErrInvalidMessage)
	}
	o.MaxFrameSize = clampMaxFrameSize(o.MaxFrameSize)
	if o.Hello.ProtocolVersion == 0 {
		o.Hello.ProtocolVersion = ProtocolVersion
	}
	if o.Hello.MaxFrameSize == 0 {
		o.Hello.MaxFrameSize = o.MaxFrameSize
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.FromContextOrDiscard(ctx)
	}
	o.YamuxConfig = completeYamuxConfig(o.YamuxConfig, o.Logger)
	return o, nil
}

func (o ServerOptions) complete(ctx context.Context) ServerOptions {
	if o.Authorize == nil {
		o.Authorize = AuthorizeByCertificate
	}
	if o.HeartbeatPeriod <= 0 {
		o.HeartbeatPeriod = DefaultHeartbeatPeriod
	}
	o.MaxFrameSize = clampMaxFrameSize(o.MaxFrameSize)
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.FromContextOrDiscard(ctx)
	}
	o.YamuxConfig = completeYamuxConfig(o.YamuxConfig, o.Logger)
	return o
}

// Limits of the default yamux configuration (DefaultYamuxConfig). yamux
// buffers at most one stream window per stream of unread data, so what a
// peer can make the other side hold is about (open streams + backlog) x
// window.
const (
	// yamuxAcceptBacklog is how many streams may wait to be accepted; more
	// are reset by yamux. The hub accepts three during the handshake and
	// none after it (a later stream closes the session).
	yamuxAcceptBacklog = 4
	// yamuxStreamWindow is yamux's smallest (and initial) stream window,
	// 256 KiB: the most one stream buffers unread.
	yamuxStreamWindow = 256 << 10
	// yamuxWriteTimeout bounds a write to a peer that stopped reading.
	yamuxWriteTimeout = 10 * time.Second
	// yamuxStreamOpenTimeout bounds how long an opened stream waits for the
	// peer's acknowledgement.
	yamuxStreamOpenTimeout = 15 * time.Second
	// yamuxStreamCloseTimeout bounds a half-closed stream.
	yamuxStreamCloseTimeout = 5 * time.Second
)

// DefaultYamuxConfig is the yamux configuration sessions use unless
// configured otherwise: yamux's defaults with a small accept backlog, the
// smallest stream window and bounded open, close and write timeouts, so that
// a peer cannot make the other side buffer much (see spec.md, "Limits").
func DefaultYamuxConfig() *yamux.Config {
	cfg := yamux.DefaultConfig()
	cfg.LogOutput = nil
	cfg.AcceptBacklog = yamuxAcceptBacklog
	cfg.MaxStreamWindowSize = yamuxStreamWindow
	cfg.ConnectionWriteTimeout = yamuxWriteTimeout
	cfg.StreamOpenTimeout = yamuxStreamOpenTimeout
	cfg.StreamCloseTimeout = yamuxStreamCloseTimeout
	return cfg
}

func completeYamuxConfig(cfg *yamux.Config, log logr.Logger) *yamux.Config {
	if cfg == nil {
		cfg = DefaultYamuxConfig()
	} else {
		cfg = cfg.Clone()
	}
	if cfg.Logger == nil && cfg.LogOutput == nil {
		cfg.Logger = yamuxLogger{log: log.WithName("yamux")}
	}
	return cfg
}

// yamuxLogger adapts logr to yamux's Logger. yamux logs connection-level
// trouble (failed reads, keepalive timeouts) that the session also reports
// through Err, so its lines go to V(1).
type yamuxLogger struct{ log logr.Logger }

func (l yamuxLogger) Print(v ...any)                 { l.log.V(1).Info(fmt.Sprint(v...)) }
func (l yamuxLogger) Printf(format string, v ...any) { l.log.V(1).Info(fmt.Sprintf(format, v...)) }
func (l yamuxLogger) Println(v ...any)               { l.log.V(1).Info(fmt.Sprint(v...)) }

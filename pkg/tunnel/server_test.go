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
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/pkg/tunnel/internal/testpki"
)

// startServer serves srv on a loopback listener until the test ends, and
// checks that Serve then returns nil.
func startServer(t *testing.T, srv *Server) (addr string, stop func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	var stopped bool
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := receive(t, done, "Serve to return"); err != nil {
			t.Errorf("Serve = %v, want nil after its context ended", err)
		}
	}
	t.Cleanup(stop)
	return l.Addr().String(), stop
}

func dialOptions(pki *testpki.PKI, addr, certName, clusterName string) DialOptions {
	return DialOptions{
		Address:   addr,
		TLSConfig: pki.ClientTLSConfig(certName),
		ClientOptions: ClientOptions{
			Hello:       Hello{AgentVersion: "v0.0.0-test", ClusterName: clusterName},
			YamuxConfig: quietYamux(),
		},
	}
}

// echoHeartbeats answers every heartbeat until the session closes.
func echoHeartbeats(ctx context.Context, s *ServerSession) {
	for {
		m, err := s.Control().Recv()
		if err != nil {
			return
		}
		if hb, ok := m.(Heartbeat); ok {
			if err := s.Control().Send(HeartbeatAck{Sequence: hb.Sequence}); err != nil {
				return
			}
		}
	}
}

func TestServerDispatchesByALPN(t *testing.T) {
	pki := testpki.New()
	peers := make(chan string, 1)
	addr, _ := startServer(t, &Server{
		TLSConfig: pki.ServerTLSConfig(),
		Tunnel:    ServerOptions{YamuxConfig: quietYamux()},
		OnTunnel: func(ctx context.Context, s *ServerSession) {
			peers <- s.PeerName()
			echoHeartbeats(ctx, s)
		},
		OnJoin: func(ctx context.Context, conn *tls.Conn) {
			line, err := bufio.NewReader(conn).ReadString('\n')
			if err != nil {
				return
			}
			_, _ = io.WriteString(conn, "joined with "+line)
		},
	})

	t.Run("tunnel", func(t *testing.T) {
		s, err := Dial(t.Context(), dialOptions(pki, addr, "member-1", "member-1"))
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		defer s.Close()
		if got := receive(t, peers, "OnTunnel"); got != "member-1" {
			t.Errorf("OnTunnel got %q, want member-1", got)
		}
		send(t, s.Control(), Heartbeat{Sequence: 3})
		expect(t, s.Control(), HeartbeatAck{Sequence: 3})
	})

	t.Run("join, without a client certificate", func(t *testing.T) {
		cfg := pki.ClientTLSConfig("")
		cfg.NextProtos = []string{ALPNJoin}
		conn, err := tls.Dial("tcp", addr, cfg)
		if err != nil {
			t.Fatalf("tls.Dial: %v", err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, "abcdef.0123456789abcdef\n"); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(conn)
		if err != nil {
			t.Fatal(err)
		}
		if want := "joined with abcdef.0123456789abcdef\n"; string(got) != want {
			t.Errorf("join answered %q, want %q", got, want)
		}
	})

	t.Run("a protocol the hub does not serve", func(t *testing.T) {
		cfg := pki.ClientTLSConfig("member-1")
		cfg.NextProtos = []string{"h2"}
		if conn, err := tls.Dial("tcp", addr, cfg); err == nil {
			conn.Close()
			t.Error("TLS handshake offering only h2 succeeded")
		}
	})

	t.Run("no ALPN at all", func(t *testing.T) {
		conn, err := tls.Dial("tcp", addr, pki.ClientTLSConfig("member-1"))
		if err != nil {
			t.Fatalf("tls.Dial: %v", err)
		}
		defer conn.Close()
		if n, err := conn.Read(make([]byte, 1)); err == nil {
			t.Errorf("Read = %d bytes, want the hub to hang up", n)
		}
	})
}

func TestServerChecksIdentity(t *testing.T) {
	pki := testpki.New()
	addr, _ := startServer(t, &Server{
		TLSConfig: pki.ServerTLSConfig(),
		Tunnel:    ServerOptions{YamuxConfig: quietYamux()},
		OnTunnel:  echoHeartbeats,
	})
	tests := []struct {
		name       string
		certName   string
		cluster    string
		wantReason string
	}{
		{"certificate of another cluster", "member-1", "member-2", `tunnel: peer identity mismatch: client certificate is for "member-1" but hello names cluster "member-2"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Dial(t.Context(), dialOptions(pki, addr, tt.certName, tt.cluster))
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("Dial = %v, want a *RefusedError", err)
			}
			if refused.Reason != tt.wantReason {
				t.Errorf("Reason = %q, want %q", refused.Reason, tt.wantReason)
			}
		})
	}

	t.Run("no client certificate fails the TLS handshake", func(t *testing.T) {
		_, err := Dial(t.Context(), dialOptions(pki, addr, "", "member-1"))
		// With TLS 1.3 the agent learns of the failure only when it reads
		// the hub's alert, after its side of the handshake.
		if err == nil || errors.Is(err, ErrRefused) {
			t.Fatalf("Dial without a certificate = %v, want the TLS handshake to fail", err)
		}
	})

	t.Run("certificate from another CA", func(t *testing.T) {
		opts := dialOptions(pki, addr, "member-1", "member-1")
		opts.TLSConfig.Certificates = []tls.Certificate{testpki.New().ClientCertificate("member-1")}
		if _, err := Dial(t.Context(), opts); err == nil {
			t.Fatal("Dial with a certificate from another CA succeeded")
		}
	})

	t.Run("hub from another CA", func(t *testing.T) {
		opts := dialOptions(testpki.New(), addr, "member-1", "member-1")
		if _, err := Dial(t.Context(), opts); err == nil {
			t.Fatal("Dial trusting another CA succeeded")
		}
	})
}

func TestServerRecoversFromPanics(t *testing.T) {
	pki := testpki.New()
	addr, _ := startServer(t, &Server{
		TLSConfig: pki.ServerTLSConfig(),
		Tunnel:    ServerOptions{YamuxConfig: quietYamux()},
		OnTunnel: func(ctx context.Context, s *ServerSession) {
			if s.PeerName() == "panicky" {
				panic("handler bug")
			}
			echoHeartbeats(ctx, s)
		},
	})
	good, err := Dial(t.Context(), dialOptions(pki, addr, "member-1", "member-1"))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer good.Close()

	// The hub closes the session as soon as the handshake is done, so the
	// agent may see Dial fail or the session close.
	if bad, err := Dial(t.Context(), dialOptions(pki, addr, "panicky", "panicky")); err == nil {
		waitClosed(t, bad.CloseChan(), "the session whose handler panicked")
	}

	send(t, good.Control(), Heartbeat{Sequence: 1})
	expect(t, good.Control(), HeartbeatAck{Sequence: 1})
	again, err := Dial(t.Context(), dialOptions(pki, addr, "member-2", "member-2"))
	if err != nil {
		t.Fatalf("Dial after a panic: %v", err)
	}
	again.Close()
}

func TestServerShutdownSaysGoodbye(t *testing.T) {
	pki := testpki.New()
	addr, stop := startServer(t, &Server{
		TLSConfig: pki.ServerTLSConfig(),
		Tunnel:    ServerOptions{YamuxConfig: quietYamux()},
		Logger:    testr.NewWithOptions(t, testr.Options{Verbosity: 2}),
		OnTunnel: func(ctx context.Context, s *ServerSession) {
			<-ctx.Done()
		},
	})
	s, err := Dial(t.Context(), dialOptions(pki, addr, "member-1", "member-1"))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer s.Close()
	stop()
	expect(t, s.Control(), Goodbye{Reason: "hub is shutting down"})
	waitClosed(t, s.CloseChan(), "the session")
}

func TestDialRequiresALPN(t *testing.T) {
	pki := testpki.New()
	l, err := tls.Listen("tcp", "127.0.0.1:0", pki.ServerTLSConfig()) // negotiates no ALPN protocol
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_ = conn.(*tls.Conn).Handshake()
				_, _ = io.Copy(io.Discard, conn)
			}()
		}
	}()
	_, err = Dial(t.Context(), dialOptions(pki, l.Addr().String(), "member-1", "member-1"))
	if !errors.Is(err, ErrALPNMismatch) {
		t.Fatalf("Dial = %v, want ErrALPNMismatch", err)
	}
}

func TestDialOptionsAreChecked(t *testing.T) {
	pki := testpki.New()
	tests := []struct {
		name    string
		opts    DialOptions
		wantErr string
	}{
		{"no cluster name", DialOptions{Address: "127.0.0.1:1", TLSConfig: pki.ClientTLSConfig("")}, "Hello.ClusterName is required"},
		{"no address", DialOptions{TLSConfig: pki.ClientTLSConfig(""), ClientOptions: ClientOptions{Hello: Hello{ClusterName: "c"}}}, "Address is required"},
		{"no TLS", DialOptions{Address: "127.0.0.1:1", ClientOptions: ClientOptions{Hello: Hello{ClusterName: "c"}}}, "TLSConfig is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Dial(t.Context(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Dial = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestServerNeedsAHandler(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := []string{}
	for _, srv := range []*Server{{}, {TLSConfig: &tls.Config{}}} {
		if err := srv.Serve(t.Context(), l); err != nil {
			got = append(got, err.Error())
		}
	}
	want := []string{"tunnel: Server.TLSConfig is required", "tunnel: Server needs OnTunnel or OnJoin"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

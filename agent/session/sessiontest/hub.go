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

// Package sessiontest runs a fake hub for the agent's tests: pkg/tunnel's real
// Server on a loopback TLS listener, with a throwaway CA (hub/pki), a join
// endpoint that signs member certificates for one token, and tunnel sessions
// that record what the agent sends and let the test send Work.
package sessiontest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pki"
	joinproto "github.com/flotilla-io/flotilla/pkg/join"
	"github.com/flotilla-io/flotilla/pkg/poll"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
	"github.com/flotilla-io/flotilla/pkg/workhash"
)

// Token is the only bootstrap token the fake hub accepts.
const Token = "abcdef.0123456789abcdef"

// UnknownTokenMessage is the fake hub's answer to any other token.
const UnknownTokenMessage = "the token is unknown to the hub (never created, or deleted): create one with `hub token create`"

// Options configure a Hub.
type Options struct {
	// HeartbeatPeriod is announced to agents. Default 1s.
	HeartbeatPeriod time.Duration
	// MemberLifetime is how long the member certificates it signs are
	// valid. Default: pki.DefaultMemberLifetime.
	MemberLifetime time.Duration
	// Admission and Metrics are the tunnel server's (tunnel.Server.Admission,
	// ServerOptions.Metrics). Default: no pacing, no metrics.
	Admission *rate.Limiter
	Metrics   *tunnel.Metrics
	// Capabilities are announced to agents (tunnel.ServerOptions). Default
	// none.
	Capabilities []string
}

// Hub is a running fake hub.
type Hub struct {
	// CA is the hub's tunnel CA.
	CA *pki.CA
	// Addr is the hub's address, 127.0.0.1:PORT.
	Addr string
	// Hash is the CA's public-key hash, for --discovery-token-ca-cert-hash.
	Hash string

	cancel   context.CancelFunc
	done     chan struct{}
	sessions chan *Session

	memberLifetime time.Duration

	mu     sync.Mutex
	joins  []joinproto.Request
	leaves []string
}

// Start starts a fake hub; it stops when the test ends.
func Start(t testing.TB, opts Options) *Hub {
	t.Helper()
	if opts.HeartbeatPeriod <= 0 {
		opts.HeartbeatPeriod = time.Second
	}
	ca := NewCA(t)
	serving, err := ca.ServingCertificate([]string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Hub{CA: ca, Addr: l.Addr().String(), Hash: ca.Hash(), cancel: cancel, done: make(chan struct{}), sessions: make(chan *Session, 16),
		memberLifetime: opts.MemberLifetime}
	srv := &tunnel.Server{
		TLSConfig: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			Certificates: []tls.Certificate{serving},
			ClientAuth:   tls.VerifyClientCertIfGiven,
			ClientCAs:    ca.Pool(),
		},
		Tunnel: tunnel.ServerOptions{HeartbeatPeriod: opts.HeartbeatPeriod, ReplicaName: "fake-hub", Metrics: opts.Metrics,
			Capabilities: opts.Capabilities},
		OnTunnel:  h.serveTunnel,
		OnJoin:    h.serveJoin,
		Admission: opts.Admission,
	}
	go func() {
		defer close(h.done)
		_ = srv.Serve(ctx, l)
	}()
	t.Cleanup(h.Stop)
	return h
}

// Stop stops the hub: it says Goodbye to every session and closes the port.
func (h *Hub) Stop() {
	h.cancel()
	<-h.done
}

// URL is the hub's address as --hub takes it.
func (h *Hub) URL() string { return "https://" + h.Addr }

// Joins returns the join requests the hub accepted or refused.
func (h *Hub) Joins() []joinproto.Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]joinproto.Request(nil), h.joins...)
}

// Leaves returns the members that left.
func (h *Hub) Leaves() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.leaves...)
}

func (h *Hub) serveJoin(_ context.Context, conn *tls.Conn) {
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	var req joinproto.Request
	if err := joinproto.Read(conn, &req); err != nil {
		return
	}
	h.mu.Lock()
	h.joins = append(h.joins, req)
	h.mu.Unlock()
	var resp joinproto.Response
	switch req.Action {
	case joinproto.ActionJoin:
		if req.Token != Token {
			resp.Error = UnknownTokenMessage
			break
		}
		cert, _, err := h.CA.SignMemberFor(req.CSR, req.ClusterName, h.memberLifetime)
		if err != nil {
			resp.Error = err.Error()
			break
		}
		resp.Certificate, resp.CA = cert, h.CA.CertPEM
	case joinproto.ActionRenew:
		chains := conn.ConnectionState().VerifiedChains
		if len(chains) == 0 || chains[0][0].Subject.CommonName != req.ClusterName {
			resp.Error = fmt.Sprintf("only member %q itself can renew its certificate", req.ClusterName)
			break
		}
		cert, _, err := h.CA.SignMemberFor(req.CSR, req.ClusterName, h.memberLifetime)
		if err != nil {
			resp.Error = err.Error()
			break
		}
		resp.Certificate, resp.CA = cert, h.CA.CertPEM
	case joinproto.ActionLeave:
		chains := conn.ConnectionState().VerifiedChains
		if len(chains) == 0 || chains[0][0].Subject.CommonName != req.ClusterName {
			resp.Error = fmt.Sprintf("only member %q itself can leave", req.ClusterName)
			break
		}
		h.mu.Lock()
		h.leaves = append(h.leaves, req.ClusterName)
		h.mu.Unlock()
	default:
		resp.Error = fmt.Sprintf("unknown action %q", req.Action)
	}
	_ = joinproto.Write(conn, resp)
}

// NextSession waits for the next session whose inventory has arrived.
func (h *Hub) NextSession(t testing.TB, timeout time.Duration) *Session {
	t.Helper()
	select {
	case s := <-h.sessions:
		return s
	case <-time.After(timeout):
		t.Fatalf("no agent session within %s", timeout)
		return nil
	}
}

func (h *Hub) serveTunnel(ctx context.Context, ss *tunnel.ServerSession) {
	s := &Session{S: ss, Hello: ss.Hello()}
	go s.readControl()
	go s.readStatus()
	m, err := ss.Work().Recv()
	if err != nil {
		return
	}
	inv, ok := m.(tunnel.WorkInventory)
	if !ok {
		return
	}
	s.Inventory = inv
	h.sessions <- s
	<-ctx.Done()
}

// Session is one agent session on the fake hub.
type Session struct {
	// S is the hub's end of the session.
	S *tunnel.ServerSession
	// Hello is what the agent said first.
	Hello tunnel.Hello
	// Inventory is the agent's WorkInventory.
	Inventory tunnel.WorkInventory

	mu         sync.Mutex
	heartbeats []tunnel.Heartbeat
	reports    []tunnel.StatusReport
	goodbye    *tunnel.Goodbye
}

func (s *Session) readControl() {
	for {
		m, err := s.S.Control().Recv()
		if err != nil {
			return
		}
		switch m := m.(type) {
		case tunnel.Heartbeat:
			s.mu.Lock()
			s.heartbeats = append(s.heartbeats, m)
			s.mu.Unlock()
			_ = s.S.Control().Send(tunnel.HeartbeatAck{Sequence: m.Sequence})
		case tunnel.Goodbye:
			s.mu.Lock()
			s.goodbye = &m
			s.mu.Unlock()
		}
	}
}

func (s *Session) readStatus() {
	for {
		m, err := s.S.Status().Recv()
		if err != nil {
			return
		}
		if r, ok := m.(tunnel.StatusReport); ok {
			s.mu.Lock()
			s.reports = append(s.reports, r)
			s.mu.Unlock()
		}
	}
}

// Heartbeats returns the heartbeats received so far.
func (s *Session) Heartbeats() []tunnel.Heartbeat {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tunnel.Heartbeat(nil), s.heartbeats...)
}

// Reports returns the status reports received so far.
func (s *Session) Reports() []tunnel.StatusReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tunnel.StatusReport(nil), s.reports...)
}

// Goodbye returns the agent's Goodbye, if it sent one.
func (s *Session) Goodbye() *tunnel.Goodbye {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.goodbye
}

// Upsert sends a Work with its workhash.Of hash, which it returns.
func (s *Session) Upsert(work *placementv1beta1.Work) (string, error) {
	data, err := json.Marshal(work)
	if err != nil {
		return "", err
	}
	hash := workhash.Of(&work.Spec)
	return hash, s.S.Work().Send(tunnel.WorkUpsert{Name: work.Name, Hash: hash, Work: data})
}

// Delete sends a WorkDelete.
func (s *Session) Delete(name string) error {
	return s.S.Work().Send(tunnel.WorkDelete{Name: name})
}

// SyncDone sends WorkSyncDone.
func (s *Session) SyncDone() error {
	return s.S.Work().Send(tunnel.WorkSyncDone{})
}

// NewCA returns a throwaway CA.
func NewCA(t testing.TB) *pki.CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "fake-hub-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := pki.ParseCA(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// ClientTLSConfig returns a member's mutual-TLS configuration for the tunnel,
// with a certificate the hub's CA signed for name.
func (h *Hub) ClientTLSConfig(t testing.TB, name string) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name}}, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := h.CA.SignMember(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr}), name)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}, RootCAs: h.CA.Pool(), ServerName: "127.0.0.1"}
}

// Eventually polls check every 100ms until it returns nil, and fails the
// test with its last error if that does not happen within timeout.
func Eventually(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	poll.Eventually(t, timeout, 100*time.Millisecond, check)
}

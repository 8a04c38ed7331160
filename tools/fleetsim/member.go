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

package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	joinproto "github.com/flotilla-io/flotilla/pkg/join"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// simProperties are what every simulated member reports: constant, so that
// steady heartbeats change nothing.
var simProperties = tunnel.ClusterProperties{
	NodeCount: 3, KubernetesVersion: "v1.37.1", Provider: "fleetsim", APIServerHealthy: true,
	Capacity:    map[string]string{"cpu": "24", "memory": "96Gi", "pods": "330"},
	Allocatable: map[string]string{"cpu": "22", "memory": "90Gi", "pods": "330"},
	Available:   map[string]string{"cpu": "16", "memory": "64Gi", "pods": "300"},
}

// member is one simulated member cluster: a real agent session (join over
// TLS with a bootstrap token, then the tunnel with the signed certificate)
// whose cluster is this struct. It applies Work by recording it and reports
// every Work Applied and Available at once.
type member struct {
	name   string
	labels map[string]string
	// bad members send garbage on their tunnel once connected.
	bad bool

	cert tls.Certificate
	pool *x509.CertPool

	mu    sync.Mutex
	works map[string]string // Work name → hash applied
	sess  *tunnel.ClientSession
	// pause is when a churned member may dial again.
	pause time.Time
	// syncedAt is when the current session's work sync ended (WorkSyncDone).
	syncedAt time.Time

	// lost is set while the member is lost: killed for good, or its zone
	// down until restore. A lost member holds no session and dials nothing.
	lost atomic.Bool
	// restored is closed by restore; run waits on it while the member is lost.
	restored chan struct{}
	// applies counts upserts that changed what the member holds; reapplies
	// counts upserts of a hash it already held (work the hub sent again).
	applies, reapplies atomic.Int64
	// sessions counts sessions established; drops counts sessions that ended
	// without the simulator ending them.
	sessions, drops atomic.Int64
	// closedByHub is set when the hub closed a bad member's session.
	closedByHub atomic.Bool
	ending      atomic.Bool
}

// join asks the hub's join endpoint for a certificate with token, as
// `agent join` does: a key made here, a CSR, the CA pinned by its hash.
func (m *member) join(ctx context.Context, addr, caHash, token string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		return err
	}
	csr, err := x509.CreateCertificateRequest(crand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: m.name}}, key)
	if err != nil {
		return err
	}
	d := tls.Dialer{Config: &tls.Config{
		NextProtos:         []string{tunnel.ALPNJoin},
		InsecureSkipVerify: true, // verified against the pinned CA hash below, as the agent does
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			_, err := joinproto.VerifyPinnedChain(raw, caHash)
			return err
		},
	}}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// A hub pacing connections closes this one before the TLS handshake;
	// `agent join` tries again after a backoff, and so does this.
	b := backoff.WithContext(backoff.NewExponentialBackOff(backoff.WithInitialInterval(250*time.Millisecond), backoff.WithMaxInterval(5*time.Second)), ctx)
	var conn net.Conn
	err = backoff.Retry(func() error {
		var err error
		conn, err = d.DialContext(ctx, "tcp", addr)
		if err != nil && !tunnel.ClosedBeforeHandshake(err) {
			return backoff.Permanent(err)
		}
		return err
	}, b)
	if err != nil {
		return fmt.Errorf("join %s: %w", m.name, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	req := joinproto.Request{Action: joinproto.ActionJoin, Token: token, ClusterName: m.name, Labels: m.labels, AgentVersion: "fleetsim",
		CSR: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr})}
	if err := joinproto.Write(conn, req); err != nil {
		return fmt.Errorf("join %s: %w", m.name, err)
	}
	resp := joinproto.Response{}
	if err := joinproto.Read(conn, &resp); err != nil {
		return fmt.Errorf("join %s: %w", m.name, err)
	}
	if resp.Error != "" {
		return fmt.Errorf("join %s refused: %s", m.name, resp.Error)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	m.cert, err = tls.X509KeyPair(resp.Certificate, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
	if err != nil {
		return err
	}
	m.pool = x509.NewCertPool()
	m.pool.AppendCertsFromPEM(resp.CA)
	return nil
}

// run keeps the member connected until ctx ends, redialling
// as the real agent does (tunnel.RunWithReconnect's defaults): after an
// exponential, jittered backoff that a session of a minute or more resets, so
// the hub's admission pacing sees what a real fleet does. dialSlots bounds
// dials at once. While the member is lost it waits for restore (for good when
// it was killed).
func (m *member) run(ctx context.Context, addr string, dialSlots chan struct{}) {
	b := &backoff.ExponentialBackOff{
		InitialInterval:     tunnel.DefaultReconnectInitialInterval,
		RandomizationFactor: tunnel.DefaultReconnectRandomizationFactor,
		Multiplier:          tunnel.DefaultReconnectMultiplier,
		MaxInterval:         tunnel.DefaultReconnectMaxInterval,
		Stop:                backoff.Stop,
		Clock:               backoff.SystemClock,
	}
	b.Reset()
	for ctx.Err() == nil {
		m.mu.Lock()
		wait := time.Until(m.pause)
		restored := m.restored
		m.mu.Unlock()
		if m.lost.Load() {
			select {
			case <-ctx.Done():
				return
			case <-restored:
			}
			b.Reset()
			continue
		}
		if wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		select {
		case dialSlots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		if m.lost.Load() {
			<-dialSlots
			continue
		}
		s, tconn, err := m.dial(ctx, addr)
		<-dialSlots
		if err == nil {
			began := time.Now()
			m.serve(ctx, s, tconn)
			if time.Since(began) >= tunnel.DefaultReconnectResetAfter {
				b.Reset()
			}
		}
		if m.bad && m.closedByHub.Load() {
			return // a bad member is counted once and stays away
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(b.NextBackOff()):
		}
	}
}

func (m *member) dial(ctx context.Context, addr string) (*tunnel.ClientSession, *tls.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	host, _, _ := net.SplitHostPort(addr)
	tconn := tls.Client(raw, &tls.Config{Certificates: []tls.Certificate{m.cert}, RootCAs: m.pool, ServerName: host, NextProtos: []string{tunnel.ALPNTunnel}})
	if err := tconn.HandshakeContext(dctx); err != nil {
		raw.Close()
		return nil, nil, err
	}
	s, err := tunnel.ClientHandshake(dctx, tconn, tunnel.ClientOptions{Hello: tunnel.Hello{ClusterName: m.name, AgentVersion: "fleetsim"}})
	if err != nil {
		tconn.Close()
		return nil, nil, err
	}
	return s, tconn, nil
}

// serve runs one session until it ends.
func (m *member) serve(ctx context.Context, s *tunnel.ClientSession, tconn *tls.Conn) {
	m.mu.Lock()
	if m.lost.Load() {
		// Lost while this session was being dialled: a lost member holds no
		// session (lose closes only the session it sees, under mu).
		m.mu.Unlock()
		_ = s.Close()
		return
	}
	m.sessions.Add(1)
	m.ending.Store(false)
	m.sess = s
	m.syncedAt = time.Time{}
	inv := tunnel.WorkInventory{Items: make([]tunnel.WorkRef, 0, len(m.works))}
	for n, h := range m.works {
		inv.Items = append(inv.Items, tunnel.WorkRef{Name: n, Hash: h})
	}
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.sess = nil
		m.mu.Unlock()
		_ = s.Close()
		if !m.ending.Load() && !m.lost.Load() && ctx.Err() == nil {
			m.drops.Add(1)
		}
	}()
	stopped := make(chan struct{})
	defer close(stopped)
	go func() { // the run ending ends the session
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-stopped:
		}
	}()
	if err := s.Work().Send(inv); err != nil {
		return
	}
	if m.bad {
		// Garbage where yamux frames belong, through the established TLS
		// session: the hub must close this session and no other.
		junk := make([]byte, 4096)
		for i := range junk {
			junk[i] = byte(rand.N(256))
		}
		_, _ = tconn.Write(junk)
		select {
		case <-s.CloseChan():
			m.closedByHub.Store(true)
		case <-time.After(time.Minute):
		case <-ctx.Done():
		}
		m.ending.Store(true)
		return
	}
	period := time.Duration(s.HelloAck().HeartbeatPeriodSeconds) * time.Second
	if period <= 0 {
		period = 5 * time.Second
	}
	done := make(chan struct{})
	defer close(done)
	go m.heartbeats(s, period, done)
	go func() { // acks
		for {
			if _, err := s.Control().Recv(); err != nil {
				return
			}
		}
	}()
	for {
		msg, err := s.Work().Recv()
		if err != nil {
			return
		}
		switch w := msg.(type) {
		case tunnel.WorkUpsert:
			m.mu.Lock()
			held := m.works[w.Name]
			m.works[w.Name] = w.Hash
			m.mu.Unlock()
			if held == w.Hash {
				m.reapplies.Add(1)
			} else {
				m.applies.Add(1)
			}
			if err := s.Status().Send(statusReport(w)); err != nil {
				return
			}
		case tunnel.WorkDelete:
			m.mu.Lock()
			delete(m.works, w.Name)
			m.mu.Unlock()
			if err := s.Status().Send(tunnel.StatusReport{WorkName: w.Name, Removed: true}); err != nil {
				return
			}
		case tunnel.WorkSyncDone:
			m.mu.Lock()
			m.syncedAt = time.Now()
			m.mu.Unlock()
		}
	}
}

func (m *member) heartbeats(s *tunnel.ClientSession, period time.Duration, done <-chan struct{}) {
	t := time.NewTicker(period)
	defer t.Stop()
	for seq := uint64(1); ; seq++ {
		if err := s.Control().Send(tunnel.Heartbeat{Sequence: seq, SentAt: time.Now(), Properties: simProperties}); err != nil {
			return
		}
		select {
		case <-done:
			return
		case <-s.CloseChan():
			return
		case <-t.C:
		}
	}
}

// disconnect ends the member's session as a network cut would (no goodbye);
// it dials again after pause.
func (m *member) disconnect(pause time.Duration) {
	m.mu.Lock()
	m.pause = time.Now().Add(pause)
	s := m.sess
	m.mu.Unlock()
	m.ending.Store(true)
	if s != nil {
		_ = s.Close()
	}
}

// lose takes the member down as a lost cluster: its session ends (no
// goodbye), it stops heartbeating, and a session being dialled right now is
// closed as soon as it is established (serve). It stays joined; restore brings
// it back, and a member killed for good is lost and never restored.
func (m *member) lose() {
	m.mu.Lock()
	m.lost.Store(true)
	m.restored = make(chan struct{})
	m.mu.Unlock()
	m.disconnect(0)
}

// restore brings a lost member back: it dials again at once and, connected,
// heartbeats and syncs its Work as a returning agent does.
func (m *member) restore() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lost.Load() {
		m.lost.Store(false)
		close(m.restored)
	}
}

// synced reports whether the member's current session finished its work sync
// after t.
func (m *member) synced(after time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sess != nil && !m.syncedAt.IsZero() && m.syncedAt.After(after)
}

// statusReport is what the member says about an applied Work: every manifest
// Applied and Available at the Work's generation.
func statusReport(u tunnel.WorkUpsert) tunnel.StatusReport {
	w := placementv1beta1.Work{}
	if err := json.Unmarshal(u.Work, &w); err != nil {
		return tunnel.StatusReport{WorkName: u.Name, Hash: u.Hash}
	}
	now := metav1.Now()
	cond := func(t, reason string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: "fleetsim", ObservedGeneration: w.Generation, LastTransitionTime: now}
	}
	st := placementv1beta1.WorkStatus{Conditions: []metav1.Condition{
		cond(placementv1beta1.ConditionApplied, placementv1beta1.ReasonApplied), cond(placementv1beta1.ConditionAvailable, placementv1beta1.ReasonAvailable),
	}}
	for i, mf := range w.Spec.Workload.Manifests {
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(mf.Raw, &obj)
		group, version := "", obj.APIVersion
		if gv := splitGroupVersion(obj.APIVersion); gv[0] != "" {
			group, version = gv[0], gv[1]
		}
		st.ManifestConditions = append(st.ManifestConditions, placementv1beta1.ManifestCondition{
			Identifier: placementv1beta1.WorkResourceIdentifier{Ordinal: i, Group: group, Version: version, Kind: obj.Kind, Name: obj.Metadata.Name, Namespace: obj.Metadata.Namespace},
			Conditions: []metav1.Condition{cond(placementv1beta1.ConditionApplied, placementv1beta1.ReasonApplied), cond(placementv1beta1.ConditionAvailable, placementv1beta1.ReasonAvailable)},
		})
	}
	data, _ := json.Marshal(st)
	return tunnel.StatusReport{WorkName: u.Name, Hash: u.Hash, Status: data}
}

func splitGroupVersion(gv string) [2]string {
	for i := 0; i < len(gv); i++ {
		if gv[i] == '/' {
			return [2]string{gv[:i], gv[i+1:]}
		}
	}
	return [2]string{"", gv}
}

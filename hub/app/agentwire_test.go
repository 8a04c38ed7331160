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

package app

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
	"net"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/join"
	"github.com/flotilla-io/flotilla/hub/tunnelserver"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	joinproto "github.com/flotilla-io/flotilla/pkg/join"
	"github.com/flotilla-io/flotilla/pkg/testenv"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// wireAgent is the agent's side of the hub's join and tunnel protocols, played
// over the real wire (TLS, the join exchange, the tunnel's frames) against the
// hub's own join and tunnel servers: it joins, connects, heartbeats, reports
// every Work it is sent applied and available, confirms removals (while
// confirm is set) and leaves. It applies nothing anywhere.
type wireAgent struct {
	name string
	addr string
	cert tls.Certificate
	pool *x509.CertPool
	// confirm makes the agent confirm the removal of a deleted Work's objects.
	confirm atomic.Bool
	// unhealthy makes the heartbeats report the member's API server unhealthy.
	unhealthy atomic.Bool
	// lateHeartbeat makes the agent send its first heartbeat only after the
	// tunnel server has stopped waiting for it (it then records the
	// connection alone, health unknown, and the health at the heartbeat).
	lateHeartbeat bool
	sess          *tunnel.ClientSession
	cancel        context.CancelFunc
}

// unavailablePlacement is the placement whose Work the agents report
// unavailable.
const unavailablePlacement = "own-unavailable"

// freeAddress returns a local TCP address nobody listens on now.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// joinWire joins member name with labels through the hub's join server at
// addr, with a bootstrap token minted for it, as `agent join` does.
func joinWire(t *testing.T, addr, name string, labels map[string]string) *wireAgent {
	t.Helper()
	ctx := context.Background()
	token, _, err := join.CreateToken(ctx, env.Client, clusterv1beta1.HubNamespace, join.TokenOptions{Name: name, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	info := &corev1.ConfigMap{}
	testenv.Eventually(t, 20*time.Second, func() error {
		return env.Client.Get(ctx, types.NamespacedName{Namespace: clusterv1beta1.HubNamespace, Name: tunnelserver.InfoConfigMapName}, info)
	})
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name}}, key)
	if err != nil {
		t.Fatal(err)
	}
	pinned := &tls.Config{
		NextProtos:         []string{tunnel.ALPNJoin},
		InsecureSkipVerify: true, // verified by the pinned hash, as the agent does
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			_, err := joinproto.VerifyPinnedChain(raw, info.Data[tunnelserver.InfoKeyCAHash])
			return err
		},
	}
	resp := exchangeJoin(t, addr, pinned, joinproto.Request{Action: joinproto.ActionJoin, Token: token, ClusterName: name, Labels: labels,
		CSR: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr}), AgentVersion: "test"})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(resp.Certificate, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(resp.CA)
	a := &wireAgent{name: name, addr: addr, cert: cert, pool: pool}
	a.confirm.Store(true)
	return a
}

// exchangeJoin sends one request to the join server and fails the test unless
// it is granted.
func exchangeJoin(t *testing.T, addr string, cfg *tls.Config, req joinproto.Request) joinproto.Response {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := joinproto.Write(conn, req); err != nil {
		t.Fatal(err)
	}
	resp := joinproto.Response{}
	if err := joinproto.Read(conn, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error != "" {
		t.Fatalf("the hub refused %s of %s: %s", req.Action, req.ClusterName, resp.Error)
	}
	return resp
}

// connect opens the agent's tunnel session, sends an empty inventory and keeps
// heartbeating with steady properties until disconnect or the test's end.
func (a *wireAgent) connect(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := tunnel.Dial(ctx, tunnel.DialOptions{
		Address:       a.addr,
		TLSConfig:     &tls.Config{Certificates: []tls.Certificate{a.cert}, RootCAs: a.pool, ServerName: "127.0.0.1", NextProtos: []string{tunnel.ALPNTunnel}},
		ClientOptions: tunnel.ClientOptions{Hello: tunnel.Hello{ClusterName: a.name, AgentVersion: "test"}},
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	a.sess, a.cancel = s, cancel
	t.Cleanup(a.disconnect)
	if err := s.Work().Send(tunnel.WorkInventory{}); err != nil {
		t.Fatal(err)
	}
	go a.heartbeat(ctx)
	go a.drainControl()
	go a.serveWork()
}

// disconnect ends the session (the agent stops).
func (a *wireAgent) disconnect() {
	if a.sess == nil {
		return
	}
	a.cancel()
	_ = a.sess.Close()
	a.sess = nil
}

func (a *wireAgent) heartbeat(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	s := a.sess
	if a.lateHeartbeat {
		select {
		case <-ctx.Done():
			return
		case <-time.After(3 * time.Second):
		}
	}
	for seq := uint64(1); ; seq++ {
		props := tunnel.ClusterProperties{
			NodeCount: 2, KubernetesVersion: "v1.37.1", Provider: "kwok", APIServerHealthy: !a.unhealthy.Load(),
			Allocatable: map[string]string{"cpu": "8", "memory": "32Gi"}, Available: map[string]string{"cpu": "6", "memory": "30Gi"},
		}
		if err := s.Control().Send(tunnel.Heartbeat{Sequence: seq, SentAt: time.Now(), Properties: props}); err != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// drainControl reads the heartbeat acks.
func (a *wireAgent) drainControl() {
	s := a.sess
	for {
		if _, err := s.Control().Recv(); err != nil {
			return
		}
	}
}

// serveWork reports every Work it is sent applied and available, and confirms
// removals while confirm is set.
func (a *wireAgent) serveWork() {
	s := a.sess
	for {
		m, err := s.Work().Recv()
		if err != nil {
			return
		}
		switch msg := m.(type) {
		case tunnel.WorkUpsert:
			w := &placementv1beta1.Work{}
			if err := json.Unmarshal(msg.Work, w); err != nil {
				return
			}
			raw, err := json.Marshal(a.report(w))
			if err != nil {
				return
			}
			if err := s.Status().Send(tunnel.StatusReport{WorkName: msg.Name, Hash: msg.Hash, Status: raw}); err != nil {
				return
			}
		case tunnel.WorkDelete:
			if !a.confirm.Load() {
				continue
			}
			if err := s.Status().Send(tunnel.StatusReport{WorkName: msg.Name, Removed: true}); err != nil {
				return
			}
		}
	}
}

// report is the agent's report on a Work: applied, with a drift, a
// difference and a feedback value on its first manifest; available, except
// the Work of a placement named unavailablePlacement, whose first manifest is
// not.
func (a *wireAgent) report(w *placementv1beta1.Work) placementv1beta1.WorkStatus {
	status := placementv1beta1.WorkStatus{}
	avail, reason := metav1.ConditionTrue, placementv1beta1.ReasonAvailable
	if w.Labels[placementv1beta1.LabelPlacementName] == unavailablePlacement {
		avail, reason = metav1.ConditionFalse, placementv1beta1.ReasonNotAvailableYet
	}
	conditions.Set(&status.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, "all applied", w.Generation)
	conditions.Set(&status.Conditions, placementv1beta1.ConditionAvailable, avail, reason, "as the first manifest", w.Generation)
	now := metav1.Now()
	drift := []placementv1beta1.PatchDetail{{Path: "/data/k", ValueInMember: "edited", ValueInHub: "v"}}
	mc := placementv1beta1.ManifestCondition{
		Identifier:   placementv1beta1.WorkResourceIdentifier{Ordinal: 0, Version: "v1", Kind: "ConfigMap", Name: "settings", Namespace: "own"},
		DriftDetails: &placementv1beta1.DriftDetails{ObservationTime: &now, FirstDriftedObservedTime: &now, ObservedDrifts: drift},
		DiffDetails:  &placementv1beta1.DiffDetails{ObservationTime: &now, ObservedDiffs: drift},
		Feedback:     []placementv1beta1.FeedbackValue{{Name: "k", Value: "v"}},
	}
	conditions.Set(&mc.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, "applied", w.Generation)
	conditions.Set(&mc.Conditions, placementv1beta1.ConditionAvailable, avail, reason, "the first manifest", w.Generation)
	status.ManifestConditions = []placementv1beta1.ManifestCondition{mc}
	return status
}

// renew gets a new member certificate from the hub's join server, as the
// agent's renewer does, and reconnects with it.
func (a *wireAgent) renew(t *testing.T) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: a.name}}, key)
	if err != nil {
		t.Fatal(err)
	}
	resp := exchangeJoin(t, a.addr, &tls.Config{Certificates: []tls.Certificate{a.cert}, RootCAs: a.pool, ServerName: "127.0.0.1", NextProtos: []string{tunnel.ALPNJoin}},
		joinproto.Request{Action: joinproto.ActionRenew, ClusterName: a.name, CSR: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr}), AgentVersion: "test"})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(resp.Certificate, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	a.disconnect()
	a.cert = cert
	a.connect(t)
}

// leave tells the hub the member left (`agent leave`, after the agent removed
// what it applied and stopped): over mutual TLS with the member's certificate.
func (a *wireAgent) leave(t *testing.T) {
	t.Helper()
	a.disconnect()
	exchangeJoin(t, a.addr, &tls.Config{Certificates: []tls.Certificate{a.cert}, RootCAs: a.pool, ServerName: "127.0.0.1", NextProtos: []string{tunnel.ALPNJoin}},
		joinproto.Request{Action: joinproto.ActionLeave, ClusterName: a.name})
}

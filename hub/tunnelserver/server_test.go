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

package tunnelserver

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
	"net"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/join"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	joinproto "github.com/flotilla-io/flotilla/pkg/join"
	"github.com/flotilla-io/flotilla/pkg/testenv"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
	"github.com/flotilla-io/flotilla/pkg/workhash"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	os.Exit(testenv.Run(m, testenv.Options{}, func(e *testenv.Env) error {
		env = e
		return env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterv1beta1.HubNamespace}})
	}))
}

// startServer runs a tunnel server against the test API server and returns its address.
func startServer(t *testing.T) string {
	t.Helper()
	return startServerWith(t, Options{})
}

// startServerWith runs a tunnel server with opts (namespace, replica "test",
// and address filled in) and returns its address.
func startServerWith(t *testing.T, opts Options) string {
	t.Helper()
	addr, _ := startServerOn(t, opts, env.Client)
	return addr
}

// startServerOn is startServerWith with direct as the server's uncached
// client; it also returns the server.
func startServerOn(t *testing.T, opts Options, direct client.Client) (string, *Server) {
	t.Helper()
	var srv *Server
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	env.StartManager(t, func(mgr ctrl.Manager) error {
		opts.Namespace, opts.BindAddress = clusterv1beta1.HubNamespace, addr
		if opts.ReplicaName == "" {
			opts.ReplicaName = "test"
		}
		var err error
		srv, err = New(opts, mgr.GetClient(), direct, mgr.GetCache(), prometheus.NewRegistry(), mgr.GetEventRecorder("tunnel"), ctrl.Log.WithName("tunnel"))
		if err != nil {
			return err
		}
		return mgr.Add(srv)
	})
	testenv.Eventually(t, 30*time.Second, func() error {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	})
	return addr, srv
}

// joinMember joins a member the way `agent join` does and returns its TLS identity.
func joinMember(t *testing.T, addr, name string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	cert, pool, refusal := joinWith(t, addr, name, newToken(t, join.TokenOptions{Name: name}))
	if refusal != "" {
		t.Fatalf("join refused: %s", refusal)
	}
	return cert, pool
}

// newToken mints a bootstrap token valid for an hour (unless opts says).
func newToken(t *testing.T, opts join.TokenOptions) string {
	t.Helper()
	if opts.TTL == 0 {
		opts.TTL = time.Hour
	}
	token, _, err := join.CreateToken(context.Background(), env.Client, clusterv1beta1.HubNamespace, opts)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// joinWith sends a join request as name with token and returns the identity,
// or the hub's refusal.
func joinWith(t *testing.T, addr, name, token string) (tls.Certificate, *x509.CertPool, string) {
	t.Helper()
	ctx := context.Background()
	info := &corev1.ConfigMap{}
	testenv.Eventually(t, 10*time.Second, func() error {
		return env.Client.Get(ctx, types.NamespacedName{Namespace: clusterv1beta1.HubNamespace, Name: InfoConfigMapName}, info)
	})
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csrDER, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name}}, key)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{
		NextProtos:         []string{tunnel.ALPNJoin},
		InsecureSkipVerify: true, // verified by hash below, as the agent does
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			_, err := joinproto.VerifyPinnedChain(raw, info.Data[InfoKeyCAHash])
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := joinproto.Request{Action: joinproto.ActionJoin, Token: token, ClusterName: name,
		CSR: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csrDER})}
	if err := joinproto.Write(conn, req); err != nil {
		t.Fatal(err)
	}
	resp := joinproto.Response{}
	if err := joinproto.Read(conn, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error != "" {
		return tls.Certificate{}, nil, resp.Error
	}
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
	return cert, pool, ""
}

func dial(t *testing.T, addr, name string, cert tls.Certificate, pool *x509.CertPool) *tunnel.ClientSession {
	t.Helper()
	s := dialUnmanaged(t, addr, name, cert, pool)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// dialUnmanaged is dial without closing the session when the test ends.
func dialUnmanaged(t *testing.T, addr, name string, cert tls.Certificate, pool *x509.CertPool) *tunnel.ClientSession {
	t.Helper()
	s, err := tunnel.Dial(context.Background(), tunnel.DialOptions{
		Address:       addr,
		TLSConfig:     &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{tunnel.ALPNTunnel}},
		ClientOptions: tunnel.ClientOptions{Hello: tunnel.Hello{ClusterName: name, AgentVersion: "test"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// connect dials as name, sends an empty inventory and a first heartbeat (and
// waits for its ack): a member that holds nothing and is healthy.
func connect(t *testing.T, addr, name string, cert tls.Certificate, pool *x509.CertPool) *tunnel.ClientSession {
	t.Helper()
	s := dial(t, addr, name, cert, pool)
	if err := s.Work().Send(tunnel.WorkInventory{}); err != nil {
		t.Fatal(err)
	}
	heartbeat(t, s, 1)
	return s
}

func member(t *testing.T, name string) *clusterv1beta1.MemberCluster {
	t.Helper()
	mc := &clusterv1beta1.MemberCluster{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, mc); err != nil {
		t.Fatal(err)
	}
	return mc
}

// steadyProperties are what heartbeat reports.
func steadyProperties() tunnel.ClusterProperties {
	return tunnel.ClusterProperties{
		NodeCount: 2, KubernetesVersion: "v1.37.1", APIServerHealthy: true,
		Allocatable: map[string]string{"cpu": "8", "memory": "32Gi"}, Available: map[string]string{"cpu": "6", "memory": "30Gi"},
	}
}

func heartbeat(t *testing.T, s *tunnel.ClientSession, seq uint64) {
	t.Helper()
	heartbeatWith(t, s, seq, steadyProperties())
}

// heartbeatWith sends a heartbeat with props and waits for its ack.
func heartbeatWith(t *testing.T, s *tunnel.ClientSession, seq uint64, props tunnel.ClusterProperties) {
	t.Helper()
	if err := s.Control().Send(tunnel.Heartbeat{Sequence: seq, SentAt: time.Now(), Properties: props}); err != nil {
		t.Fatal(err)
	}
	m, err := s.Control().Recv()
	if err != nil {
		t.Fatal(err)
	}
	if ack, ok := m.(tunnel.HeartbeatAck); !ok || ack.Sequence != seq {
		t.Fatalf("got %#v, want the ack of heartbeat %d", m, seq)
	}
}

// A member that joins and connects is recorded connected and healthy on its first
// heartbeat; later heartbeats cost no write; when its heartbeats stop for three
// periods it is recorded disconnected.
func TestHeartbeatsAreKeptInMemoryAndSilenceDisconnects(t *testing.T) {
	ctx := context.Background()
	addr := startServer(t)
	cert, pool := joinMember(t, addr, "alpha")
	mc := member(t, "alpha")
	mc.Spec.HeartbeatPeriodSeconds = 1
	if err := env.Client.Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
	// The hub reads the period from its cache: connect once it tells the agent
	// 1s (a session started before would count periods of the default 5s).
	testenv.Eventually(t, 10*time.Second, func() error {
		probe := dialUnmanaged(t, addr, "alpha", cert, pool)
		defer func() { _ = probe.Close() }()
		if got := probe.HelloAck().HeartbeatPeriodSeconds; got != 1 {
			return fmt.Errorf("the hub still tells a period of %ds", got)
		}
		return nil
	})
	s := connect(t, addr, "alpha", cert, pool)
	testenv.Eventually(t, 10*time.Second, func() error {
		mc := member(t, "alpha")
		if !conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) ||
			!conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionHealthy) ||
			mc.Status.Properties[clusterv1beta1.PropertyNodeCount].Value != "2" {
			return fmt.Errorf("status: %+v", mc.Status)
		}
		return nil
	})
	rv := member(t, "alpha").ResourceVersion
	for seq := uint64(2); seq <= 4; seq++ {
		heartbeat(t, s, seq)
		time.Sleep(500 * time.Millisecond) // heartbeats at the member's pace
	}
	if got := member(t, "alpha").ResourceVersion; got != rv {
		t.Fatalf("steady heartbeats wrote the MemberCluster (resourceVersion %s -> %s)", rv, got)
	}
	// Silence: no heartbeat for 3 periods of 1s.
	silent := time.Now()
	testenv.Eventually(t, 10*time.Second, func() error {
		c := conditions.Get(member(t, "alpha").Status.Conditions, clusterv1beta1.ConditionAgentConnected)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != clusterv1beta1.ReasonHeartbeatTimeout {
			return fmt.Errorf("AgentConnected: %+v", c)
		}
		return nil
	})
	if d := time.Since(silent); d > 5*time.Second {
		t.Errorf("silence noticed after %s, want about 3 heartbeat periods", d)
	}
}

// On connect the hub sends only the Work the member lacks or holds in another
// version, deletes what it should not hold, and records the status it reports.
func TestWorkIsSyncedByDifferenceAndStatusIsRecorded(t *testing.T) {
	ctx := context.Background()
	addr := startServer(t)
	cert, pool := joinMember(t, addr, "beta")
	ns := clusterv1beta1.MemberNamespace("beta")
	mk := func(name, data string) *placementv1beta1.Work {
		w := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		w.Spec.Workload.Manifests = []placementv1beta1.Manifest{{RawExtension: runtime.RawExtension{
			Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"},"data":{"k":"` + data + `"}}`)}}}
		if err := env.Client.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	held := mk("held", "1")
	mk("missing", "1")
	s := dial(t, addr, "beta", cert, pool)
	inv := tunnel.WorkInventory{Items: []tunnel.WorkRef{
		{Name: "held", Hash: workhash.Of(&held.Spec)},
		{Name: "stale", Hash: "abc"},
	}}
	if err := s.Work().Send(inv); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		m, err := s.Work().Recv()
		if err != nil {
			t.Fatal(err)
		}
		switch msg := m.(type) {
		case tunnel.WorkUpsert:
			got = append(got, "upsert "+msg.Name)
		case tunnel.WorkDelete:
			got = append(got, "delete "+msg.Name)
		case tunnel.WorkSyncDone:
			got = append(got, "done")
		}
		if len(got) > 0 && got[len(got)-1] == "done" {
			break
		}
	}
	if fmt.Sprint(got) != "[upsert missing delete stale done]" {
		t.Fatalf("sync sent %v, want only the missing Work, the stale deletion and done", got)
	}

	// A status report for the current spec is recorded; one for an older spec is not.
	status := placementv1beta1.WorkStatus{}
	conditions.Set(&status.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, "ok", held.Generation)
	raw, _ := json.Marshal(status)
	if err := s.Status().Send(tunnel.StatusReport{WorkName: "held", Hash: "old", Status: raw}); err != nil {
		t.Fatal(err)
	}
	if err := s.Status().Send(tunnel.StatusReport{WorkName: "held", Hash: workhash.Of(&held.Spec), Status: raw}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		w := &placementv1beta1.Work{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "held"}, w); err != nil {
			return err
		}
		if !conditions.IsTrue(w.Status.Conditions, placementv1beta1.ConditionApplied) {
			return fmt.Errorf("work status: %+v", w.Status)
		}
		return nil
	})

	// A change on the hub is pushed as it happens.
	w := &placementv1beta1.Work{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "missing"}, w); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	m, err := s.Work().Recv()
	if err != nil {
		t.Fatal(err)
	}
	if del, ok := m.(tunnel.WorkDelete); !ok || del.Name != "missing" {
		t.Fatalf("got %#v, want the deletion of Work missing", m)
	}
}

// A tunnel whose certificate names another member is refused, and the server
// keeps serving others.
func TestAnImpostorIsRefusedAndOthersAreServed(t *testing.T) {
	addr := startServer(t)
	cert, pool := joinMember(t, addr, "gamma")
	_, err := tunnel.Dial(context.Background(), tunnel.DialOptions{
		Address:       addr,
		TLSConfig:     &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{tunnel.ALPNTunnel}},
		ClientOptions: tunnel.ClientOptions{Hello: tunnel.Hello{ClusterName: "delta"}},
	})
	if err == nil {
		t.Fatal("a certificate of gamma opened a tunnel as delta")
	}
	connect(t, addr, "gamma", cert, pool)
}

// A replica that stops writes no disconnections: its members stay connected
// (a member that does not come back is the leader's sweep's, once the stopped
// replica's Lease is gone), and the replica that takes the session over
// records it.
func TestAStoppingReplicaWritesNoDisconnections(t *testing.T) {
	var cert tls.Certificate
	var pool *x509.CertPool
	var first int64
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "stopping-member"}})
	})
	t.Run("the first replica", func(t *testing.T) {
		// The session is closed only after the replica has stopped (cleanups
		// run last-registered first): the replica ends it, not the agent.
		var s *tunnel.ClientSession
		t.Cleanup(func() {
			if s != nil {
				_ = s.Close()
			}
		})
		addr := startServerWith(t, Options{ReplicaName: "stopping"})
		cert, pool = joinMember(t, addr, "stopping-member")
		s = dialUnmanaged(t, addr, "stopping-member", cert, pool)
		if err := s.Work().Send(tunnel.WorkInventory{}); err != nil {
			t.Fatal(err)
		}
		heartbeat(t, s, 1)
		testenv.Eventually(t, 10*time.Second, func() error {
			mc := member(t, "stopping-member")
			if !conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) || mc.Status.AgentSession == nil {
				return fmt.Errorf("status: %+v", mc.Status)
			}
			first = mc.Status.AgentSession.Generation
			return nil
		})
	}) // the replica stops here, with the session open; its sessions have ended when it returns

	mc := member(t, "stopping-member")
	if !conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) {
		t.Errorf("after the replica stopped AgentConnected is %+v, want still True", conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected))
	}
	if as := mc.Status.AgentSession; as == nil || as.Generation != first || as.HubReplica != "stopping" {
		t.Errorf("after the replica stopped agentSession is %+v, want generation %d on replica stopping", as, first)
	}

	addr := startServerWith(t, Options{ReplicaName: "taking-over"})
	connect(t, addr, "stopping-member", cert, pool)
	testenv.Eventually(t, 10*time.Second, func() error {
		mc := member(t, "stopping-member")
		if as := mc.Status.AgentSession; as == nil || as.HubReplica != "taking-over" || as.Generation <= first {
			return fmt.Errorf("agentSession: %+v", as)
		}
		if !conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) {
			return fmt.Errorf("AgentConnected: %+v", conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected))
		}
		return nil
	})
}

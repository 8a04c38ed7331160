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

package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/hub/pki"
	"github.com/flotilla-io/flotilla/hub/replica"
	"github.com/flotilla-io/flotilla/pkg/apiproxy"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// owners is a Directory whose owners are given (the test's API server has
// no MemberCluster CRD) and whose Leases are the real ones in namespace
// default.
type owners struct {
	LeaseDirectory
	of map[string]string
}

func (o owners) Owner(_ context.Context, member string) (string, error) { return o.of[member], nil }

// replicaFixture is one hub replica's API proxy, served over TLS with the
// hub's serving certificate, as kube-apiserver and the other replicas reach
// it.
type replicaFixture struct {
	h       *Handler
	url     string
	address string
	proxied *http.Client // presents the front proxy's certificate
	direct  *http.Client // presents none
	tls     *tls.Config  // the front proxy's
}

func startReplica(t *testing.T, name string, hubCA *pki.CA, front *testCA, d Dialer, dir Directory) *replicaFixture {
	t.Helper()
	serving, err := hubCA.IssueServing([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{
		Dialer: d,
		Authenticator: &RequestHeader{ClientCA: front.pool, AllowedNames: []string{"front-proxy-client"},
			UsernameHeaders: []string{"X-Remote-User"}, GroupHeaders: []string{"X-Remote-Group"}, ExtraHeaderPrefixes: []string{"X-Remote-Extra-"}},
		Authorizer: SubjectAccessReviewer{Client: env.Client},
		Registerer: prometheus.NewRegistry(),
		Logger:     testr.New(t).WithName(name),
		Peers:      PeerOptions{Replica: name, Directory: dir, CA: func() *pki.CA { return hubCA }},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serving}, ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	client := func(certs ...tls.Certificate) (*http.Client, *tls.Config) {
		cfg := &tls.Config{RootCAs: hubCA.Pool(), Certificates: certs, MinVersion: tls.VersionTLS12}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: time.Minute}, cfg
	}
	f := &replicaFixture{h: h, url: srv.URL, address: strings.TrimPrefix(srv.URL, "https://")}
	f.proxied, f.tls = client(front.clientCert(t, "front-proxy-client", x509.ExtKeyUsageClientAuth))
	f.direct, _ = client()
	return f
}

// get sends GET path to f as user, the way kube-apiserver's front proxy does,
// with the extra headers given.
func (f *replicaFixture) get(t *testing.T, c *http.Client, path, user string, extra http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, f.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range extra {
		req.Header[k] = vs
	}
	if user != "" {
		req.Header.Set("X-Remote-User", user)
		req.Header.Add("X-Remote-Group", "system:authenticated")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp
}

// TestForwardingBetweenReplicas: member-1's agent is connected to replica B;
// kube-apiserver sends the request to replica A, which authenticates and
// authorizes it and forwards it to B over mutually authenticated TLS.
func TestForwardingBetweenReplicas(t *testing.T) {
	setupRBAC(t)
	ctx := t.Context()
	hubCA, err := pki.LoadOrCreateCA(ctx, env.Client, metav1.NamespaceDefault)
	if err != nil {
		t.Fatal(err)
	}
	front := newTestCA(t)

	// member-2 is a stand-in API server that upgrades and echoes (exec).
	standIn := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "SPDY/3.1" || r.Header.Get("Impersonate-User") != "flotilla:hub:alice" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.String()+" as "+r.Header.Get("Impersonate-User"), http.StatusBadRequest)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n")
		_ = rw.Flush()
		_, _ = io.Copy(conn, rw)
	}))
	defer standIn.Close()
	standInCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: standIn.Certificate().Raw})
	for _, o := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "proxy-forwarded-exec"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{apiproxy.Group}, Resources: []string{"memberclusters/proxy"}, ResourceNames: []string{"member-2", "member-4", "member-5", "member-6"}, Verbs: []string{"get", "create"},
		}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "proxy-forwarded-exec"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "proxy-forwarded-exec"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}},
	} {
		if err := env.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}

	dA := &sessions{m: map[string]*tunnel.ServerSession{}}
	dB := &sessions{m: map[string]*tunnel.ServerSession{}}
	connectAgent(t, dB, "member-1", true)
	connectAgentTo(t, dB, "member-2", true, &rest.Config{Host: standIn.URL, TLSClientConfig: rest.TLSClientConfig{CAData: standInCA}})
	dir := &owners{LeaseDirectory: LeaseDirectory{Leases: env.Client, Namespace: metav1.NamespaceDefault},
		of: map[string]string{"member-1": "replica-b", "member-2": "replica-b", "member-3": "replica-c", "member-4": "replica-d", "member-6": "replica-e"}}
	b := startReplica(t, "replica-b", hubCA, front, checkedSessions{dB}, dir)
	a := startReplica(t, "replica-a", hubCA, front, checkedSessions{dA}, dir)

	// B publishes its address on its Lease, as tunnelserver has it do.
	lease := &replica.Lease{Client: env.Client, Namespace: metav1.NamespaceDefault, Replica: "replica-b", Duration: time.Minute,
		Log: testr.New(t), Annotations: map[string]string{replica.AnnotationProxyAddress: b.address}}
	if err := lease.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lease.Release(context.Background()) })
	// replica-d's Lease ran out long ago; replica-c has none.
	old := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	seconds := int32(30)
	expired := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: replica.LeaseName("replica-d"),
		Annotations: map[string]string{replica.AnnotationProxyAddress: "127.0.0.1:1"}},
		Spec: coordinationv1.LeaseSpec{RenewTime: &old, LeaseDurationSeconds: &seconds}}
	if err := env.Client.Create(ctx, expired); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// replica-e's Lease is live, but nothing listens where it says.
	now, long := metav1.NewMicroTime(time.Now()), int32(3600)
	unreachable := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: replica.LeaseName("replica-e"),
		Annotations: map[string]string{replica.AnnotationProxyAddress: "127.0.0.1:1"}},
		Spec: coordinationv1.LeaseSpec{RenewTime: &now, LeaseDurationSeconds: &long}}
	if err := env.Client.Create(ctx, unreachable); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}

	cm := apiproxy.PathPrefix("member-1") + "/api/v1/namespaces/team-a/configmaps"
	t.Run("a GET arriving at the replica without the member is forwarded to its owner", func(t *testing.T) {
		// A forged forwarded identity from kube-apiserver's side is dropped.
		forged := http.Header{HeaderForwardedUser: {"root"}, HeaderForwardedGroup: {"system:masters"}}
		resp := a.get(t, a.proxied, cm+"/cm-1", "alice", forged)
		defer resp.Body.Close()
		code, body := status(t, resp)
		if code != http.StatusOK || !strings.Contains(body, `"name":"cm-1"`) {
			t.Fatalf("got %d %s, want 200 with cm-1", code, body)
		}
		// Each replica counts the request once it has answered it.
		counted := func() bool {
			return testutil.ToFloat64(a.h.requests.WithLabelValues("member-1", "get", "200", "replica-b", "")) == 1 &&
				testutil.ToFloat64(b.h.requests.WithLabelValues("member-1", "get", "200", "", "replica-a")) == 1
		}
		for deadline := time.Now().Add(5 * time.Second); !counted(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("flotilla_proxy_requests_total: A forwarded_to=replica-b %g, B forwarded_by=replica-a %g, want 1 and 1",
					testutil.ToFloat64(a.h.requests.WithLabelValues("member-1", "get", "200", "replica-b", "")),
					testutil.ToFloat64(b.h.requests.WithLabelValues("member-1", "get", "200", "", "replica-a")))
			}
		}
	})

	t.Run("the user stays who kube-apiserver said, not who a forged forward header says", func(t *testing.T) {
		forged := http.Header{HeaderForwardedUser: {"alice"}}
		resp := a.get(t, a.proxied, cm+"/cm-1", "bob", forged)
		defer resp.Body.Close()
		code, body := status(t, resp)
		if code != http.StatusForbidden || !strings.Contains(body, `User \"flotilla:hub:bob\" cannot get`) {
			t.Errorf("got %d %s, want 403 for flotilla:hub:bob", code, body)
		}
	})

	t.Run("a forged forward without a replica certificate is refused", func(t *testing.T) {
		forged := http.Header{HeaderForwardedUser: {"alice"}}
		resp := b.get(t, b.direct, cm+"/cm-1", "", forged)
		defer resp.Body.Close()
		code, body := status(t, resp)
		if code != http.StatusUnauthorized {
			t.Errorf("got %d %s, want 401", code, body)
		}
	})

	t.Run("a watch through the other replica sees a change as it happens", func(t *testing.T) {
		resp := a.get(t, a.proxied, cm+"?watch=true&fieldSelector=metadata.name%3Dcm-forwarded", "alice", nil) //nolint:bodyclose // closed below; the linter loses it in the decoding goroutine
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			code, body := status(t, resp)
			t.Fatalf("watch: %d %s", code, body)
		}
		if err := env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-forwarded", Namespace: "team-a"}}); err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Type   string
			Object corev1.ConfigMap
		}
		done := make(chan error, 1)
		go func() { done <- json.NewDecoder(resp.Body).Decode(&ev) }()
		select {
		case err := <-done:
			if err != nil || ev.Type != "ADDED" || ev.Object.Name != "cm-forwarded" {
				t.Errorf("event %s %s (%v), want ADDED cm-forwarded", ev.Type, ev.Object.Name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no watch event within 30s")
		}
	})

	t.Run("an exec-like upgrade through the other replica carries bytes both ways", func(t *testing.T) {
		conn, err := tls.Dial("tcp", a.address, a.tls)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		req := "POST " + apiproxy.PathPrefix("member-2") + "/api/v1/namespaces/a/pods/p/exec?command=sh&stdin=true HTTP/1.1\r\n" +
			"Host: hub\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n" +
			"X-Remote-User: alice\r\nX-Remote-Group: devs\r\n\r\n"
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(conn)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("reading the upgrade response: %v", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusSwitchingProtocols {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("upgrade: %d %s, want 101", resp.StatusCode, b)
		}
		payload := strings.Repeat("stdin and stdout ", 20000)
		go func() { _, _ = io.WriteString(conn, payload) }()
		got := make([]byte, len(payload))
		if _, err := io.ReadFull(r, got); err != nil {
			t.Fatalf("reading the echo: %v", err)
		}
		if string(got) != payload {
			t.Error("the echo differs from what was sent")
		}
		// Each limit is held once: the member's slot by the replica with its
		// tunnel, the user's by the replica the request entered.
		inflight := func(h *Handler) int {
			h.mu.Lock()
			defer h.mu.Unlock()
			return h.inflight["member-2"]
		}
		if gotA, gotB := inflight(a.h), inflight(b.h); gotA != 0 || gotB != 1 {
			t.Errorf("member-2's slots in flight during the stream: A %d, B %d; want 0 and 1", gotA, gotB)
		}
		if gotA, gotB := a.h.users.inflightOf("alice"), b.h.users.inflightOf("alice"); gotA != 1 || gotB != 0 {
			t.Errorf("alice's requests in flight during the stream: A %d, B %d; want 1 and 0", gotA, gotB)
		}
	})

	for member, want := range map[string]string{
		"member-3": `hub replica replica-c, which is gone (it has no Lease)`,
		"member-4": `hub replica replica-d, whose Lease expired at`,
		"member-5": `has no agent connected to any hub replica`,
		"member-6": `hub replica replica-e, which holds the member's session, cannot be reached at 127.0.0.1:1`,
	} {
		t.Run("a stale owner gives 503 with the reason at once: "+member, func(t *testing.T) {
			start := time.Now()
			resp := a.get(t, a.proxied, apiproxy.PathPrefix(member)+"/api", "alice", nil)
			defer resp.Body.Close()
			code, body := status(t, resp)
			if code != http.StatusServiceUnavailable || !strings.Contains(body, want) {
				t.Errorf("got %d %s, want 503 with %s", code, body, want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %s, want at most 5s", d)
			}
		})
	}
}

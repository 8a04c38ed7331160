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
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentproxy "github.com/flotilla-io/flotilla/agent/proxy"
	"github.com/flotilla-io/flotilla/hub/tunnelserver"
	"github.com/flotilla-io/flotilla/pkg/apiproxy"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// sessions is a Dialer over real tunnel sessions, by member.
type sessions struct {
	mu sync.Mutex
	m  map[string]*tunnel.ServerSession
}

func (s *sessions) OpenAPIProxy(ctx context.Context, member string) (net.Conn, error) {
	s.mu.Lock()
	ss := s.m[member]
	s.mu.Unlock()
	if ss == nil {
		return nil, fmt.Errorf("%w: member %q has no agent connected to hub replica test", tunnelserver.ErrNotConnected, member)
	}
	return ss.OpenAPIProxy(ctx)
}

// connectAgent runs the tunnel handshake between a hub and an agent over a
// pipe. An agent announcing the API proxy serves it with agent/proxy,
// forwarding to env's API server.
func connectAgent(t *testing.T, d *sessions, member string, serveProxy bool) {
	t.Helper()
	connectAgentTo(t, d, member, serveProxy, env.Config)
}

// connectAgentTo is connectAgent with the agent forwarding to the API server
// of cfg.
func connectAgentTo(t *testing.T, d *sessions, member string, serveProxy bool, cfg *rest.Config) {
	t.Helper()
	hub, cs := handshake(t, member, serveProxy)
	drain(cs.Work(), cs.Status(), hub.Work(), hub.Status())
	connectSession(t, d, member, hub, cs, serveProxy, cfg)
}

// handshake runs the tunnel handshake between a hub and an agent over a
// pipe, the agent announcing the API proxy if serveProxy. The control
// streams are kept drained; the work and status streams are the caller's.
func handshake(t *testing.T, member string, serveProxy bool) (*tunnel.ServerSession, *tunnel.ClientSession) {
	t.Helper()
	ctx := t.Context()
	hubConn, agentConn := net.Pipe()
	type served struct {
		s   *tunnel.ServerSession
		err error
	}
	ch := make(chan served, 1)
	go func() {
		s, err := tunnel.ServeConn(ctx, hubConn, tunnel.ServerOptions{Capabilities: tunnelserver.Capabilities,
			// A pipe has no certificate: the name in Hello is the identity.
			Authorize: func(context.Context, tunnel.Hello, *x509.Certificate) (tunnel.HelloAck, error) {
				return tunnel.HelloAck{}, nil
			}})
		ch <- served{s, err}
	}()
	var caps []string
	if serveProxy {
		caps = []string{tunnel.CapabilityAPIProxy}
	}
	cs, err := tunnel.ClientHandshake(ctx, agentConn, tunnel.ClientOptions{Hello: tunnel.Hello{ClusterName: member, Capabilities: caps}})
	if err != nil {
		t.Fatalf("agent handshake: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	hub := <-ch
	if hub.err != nil {
		t.Fatalf("hub handshake: %v", hub.err)
	}
	drain(cs.Control(), hub.s.Control())
	return hub.s, cs
}

// drain keeps streams read, as the real loops do, throwing away what comes.
func drain(streams ...*tunnel.Stream) {
	for _, st := range streams {
		go func() {
			for {
				if _, err := st.Recv(); err != nil {
					return
				}
			}
		}()
	}
}

// connectSession serves the API proxy on the agent's side of a handshaken
// session (forwarding to cfg's API server) and lets d dial member through it.
func connectSession(t *testing.T, d *sessions, member string, hub *tunnel.ServerSession, cs *tunnel.ClientSession, serveProxy bool, cfg *rest.Config) {
	t.Helper()
	ctx := t.Context()
	if serveProxy {
		h, err := agentproxy.New(cfg, agentproxy.Options{Logger: testr.New(t)})
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = h.Serve(ctx, cs.APIProxyListener()) }()
	}
	d.mu.Lock()
	d.m[member] = hub
	d.mu.Unlock()
}

// hubFixture is the hub's proxy, served over TLS as kube-apiserver reaches
// it, with clients that present the front proxy's certificate.
type hubFixture struct {
	h       *Handler
	url     string
	ca      *testCA
	proxied *http.Client // presents the front proxy's certificate
	direct  *http.Client // presents none
}

func startHub(t *testing.T, d Dialer, opts Options) *hubFixture {
	t.Helper()
	ca := newTestCA(t)
	opts.Dialer = d
	opts.Authenticator = &RequestHeader{ClientCA: ca.pool, AllowedNames: []string{"front-proxy-client"},
		UsernameHeaders: []string{"X-Remote-User"}, GroupHeaders: []string{"X-Remote-Group"}, ExtraHeaderPrefixes: []string{"X-Remote-Extra-"}}
	if opts.Authorizer == nil {
		opts.Authorizer = SubjectAccessReviewer{Client: env.Client}
	}
	opts.Registerer = prometheus.NewRegistry()
	if opts.Logger.GetSink() == nil {
		opts.Logger = testr.New(t)
	}
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	client := func(certs ...tls.Certificate) *http.Client {
		tr := srv.Client().Transport.(*http.Transport).Clone()
		tr.TLSClientConfig.Certificates = certs
		return &http.Client{Transport: tr, Timeout: time.Minute}
	}
	return &hubFixture{h: h, url: srv.URL, ca: ca,
		proxied: client(ca.clientCert(t, "front-proxy-client", x509.ExtKeyUsageClientAuth)), direct: client()}
}

// get sends method path as user (in groups), the way kube-apiserver's front
// proxy does.
func (f *hubFixture) do(t *testing.T, c *http.Client, method, path, user string, body io.Reader) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, f.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.Header.Set("X-Remote-User", user)
		req.Header.Add("X-Remote-Group", "system:authenticated")
	}
	// What a client might try: none of it may reach the member.
	req.Header.Set("Impersonate-User", "system:admin")
	req.Header.Set("Impersonate-Group", "system:masters")
	req.Header.Set(apiproxy.HeaderUser, "admin")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// status reads a response's code and body.
func status(t *testing.T, resp *http.Response) (int, string) {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// setupRBAC gives alice and bob the proxy of member-1 and member-2 on the
// hub (get only) and alice read access to ConfigMaps of team-a on the
// member, as User flotilla:hub:alice.
func setupRBAC(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-1", Namespace: "team-a"}, Data: map[string]string{"k": "v"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "proxy-get"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{apiproxy.Group}, Resources: []string{"memberclusters/proxy"},
			ResourceNames: []string{"member-1", "member-2", "member-3"}, Verbs: []string{"get"},
		}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "proxy-get"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "proxy-get"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}, {Kind: rbacv1.UserKind, Name: "bob"}}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps", Namespace: "team-a"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"},
		}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "hub-alice", Namespace: "team-a"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-configmaps"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: apiproxy.DefaultIdentityPrefix + "alice"}}},
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

func TestProxyThroughARealTunnelToAMemberAPIServer(t *testing.T) {
	setupRBAC(t)
	d := &sessions{m: map[string]*tunnel.ServerSession{}}
	connectAgent(t, d, "member-1", true)
	connectAgent(t, d, "member-2", false) // an agent run with --proxy=false, or older
	f := startHub(t, d, Options{})
	cm := apiproxy.PathPrefix("member-1") + "/api/v1/namespaces/team-a/configmaps"

	cases := []struct {
		name     string
		client   *http.Client
		method   string
		path     string
		user     string
		wantCode int
		// wantBody is part of the response body.
		wantBody string
		// within bounds the whole exchange (an error must not hang).
		within time.Duration
	}{
		{name: "a hub user gets an object the member's RBAC lets them read", client: f.proxied, method: http.MethodGet, path: cm + "/cm-1", user: "alice",
			wantCode: http.StatusOK, wantBody: `"name":"cm-1"`},
		{name: "a hub user lists objects", client: f.proxied, method: http.MethodGet, path: cm, user: "alice",
			wantCode: http.StatusOK, wantBody: `"kind":"ConfigMapList"`},
		{name: "the member's RBAC refuses a hub user it grants nothing, by their prefixed name", client: f.proxied, method: http.MethodGet, path: cm + "/cm-1", user: "bob",
			wantCode: http.StatusForbidden, wantBody: `User \"flotilla:hub:bob\" cannot get resource \"configmaps\"`},
		{name: "the hub refuses a user without the proxy subresource, with the review's words", client: f.proxied, method: http.MethodGet, path: cm + "/cm-1", user: "carol",
			wantCode: http.StatusForbidden, wantBody: `User \"carol\" cannot get resource \"memberclusters/proxy\" in API group \"proxy.flotilla.io\"`},
		{name: "the hub authorizes by method: a POST needs create", client: f.proxied, method: http.MethodPost, path: cm, user: "alice",
			wantCode: http.StatusForbidden, wantBody: `cannot create resource \"memberclusters/proxy\"`},
		{name: "an agent without the capability gives a one-line error at once", client: f.proxied, method: http.MethodGet, path: apiproxy.PathPrefix("member-2") + "/api", user: "alice",
			wantCode: http.StatusBadGateway, wantBody: `did not announce capability \"api-proxy\"`, within: 5 * time.Second},
		{name: "a member not connected gives a one-line error at once", client: f.proxied, method: http.MethodGet, path: apiproxy.PathPrefix("member-3") + "/api", user: "alice",
			wantCode: http.StatusServiceUnavailable, wantBody: `member \"member-3\" has no agent connected`, within: 5 * time.Second},
		{name: "a request not from the hub's front proxy is unauthorized", client: f.direct, method: http.MethodGet, path: cm + "/cm-1", user: "alice",
			wantCode: http.StatusUnauthorized, wantBody: "front proxy"},
		{name: "discovery of the aggregated API", client: f.direct, method: http.MethodGet, path: "/apis/proxy.flotilla.io/v1beta1",
			wantCode: http.StatusOK, wantBody: `"name":"memberclusters/proxy"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			var body io.Reader
			if tc.method == http.MethodPost {
				body = strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"new"}}`)
			}
			resp := f.do(t, tc.client, tc.method, tc.path, tc.user, body)
			defer resp.Body.Close()
			code, got := status(t, resp)
			if code != tc.wantCode || !strings.Contains(got, tc.wantBody) {
				t.Errorf("got %d %s\nwant %d with %s", code, got, tc.wantCode, tc.wantBody)
			}
			if tc.within > 0 && time.Since(start) > tc.within {
				t.Errorf("took %s, want at most %s", time.Since(start), tc.within)
			}
		})
	}

	t.Run("a hub user watches objects, and sees a change as it happens", func(t *testing.T) {
		resp := f.do(t, f.proxied, http.MethodGet, cm+"?watch=true", "alice", nil)
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			code, body := status(t, resp)
			t.Fatalf("watch: %d %s", code, body)
		}
		events := json.NewDecoder(bufio.NewReader(resp.Body))
		next := func() (string, string) {
			t.Helper()
			var ev struct {
				Type   string
				Object corev1.ConfigMap
			}
			if err := events.Decode(&ev); err != nil {
				t.Fatalf("reading the watch: %v", err)
			}
			return ev.Type, ev.Object.Name
		}
		if typ, name := next(); typ != "ADDED" || name != "cm-1" {
			t.Errorf("first event %s %s, want ADDED cm-1", typ, name)
		}
		if err := env.Client.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-2", Namespace: "team-a"}}); err != nil {
			t.Fatal(err)
		}
		if typ, name := next(); typ != "ADDED" || name != "cm-2" {
			t.Errorf("next event %s %s, want ADDED cm-2", typ, name)
		}
	})

	if got := testutil.ToFloat64(f.h.requests.WithLabelValues("member-1", "get", "200", "", "")); got < 2 {
		t.Errorf("flotilla_proxy_requests_total{member-1,get,200} = %g, want at least 2", got)
	}
	if got := testutil.ToFloat64(f.h.requests.WithLabelValues("member-3", "get", "503", "", "")); got != 1 {
		t.Errorf("flotilla_proxy_requests_total{member-3,get,503} = %g, want 1", got)
	}
}

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
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/hub/tunnelserver"
	"github.com/flotilla-io/flotilla/pkg/apiproxy"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// TestUpgradedConnectionsPassThrough: an upgrade (what kubectl exec, attach
// and port-forward send) goes from the hub's front proxy through the tunnel
// and the agent to the member API server, with the agent's credentials and
// the impersonated user, and then carries bytes both ways. The member API
// server is a stand-in that upgrades and echoes: envtest runs no kubelet.
func TestUpgradedConnectionsPassThrough(t *testing.T) {
	seen := make(chan http.Header, 1)
	member := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		if r.Header.Get("Upgrade") != "SPDY/3.1" || r.URL.Path != "/api/v1/namespaces/a/pods/p/exec" || r.URL.Query().Get("command") != "sh" {
			http.Error(w, fmt.Sprintf("unexpected %s %s", r.Method, r.URL), http.StatusBadRequest)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n")
		_ = rw.Flush()
		_, _ = io.Copy(conn, rw) // echo until the client hangs up
	}))
	defer member.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: member.Certificate().Raw})
	cfg := &rest.Config{Host: member.URL, BearerToken: "agent-token", TLSClientConfig: rest.TLSClientConfig{CAData: ca}}

	// erin may exec on member-1: an exec is a POST, authorized as create.
	ctx := t.Context()
	for _, o := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "proxy-exec"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{apiproxy.Group}, Resources: []string{"memberclusters/proxy"}, ResourceNames: []string{"member-1"}, Verbs: []string{"get", "create"},
		}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "proxy-exec"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "proxy-exec"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "erin"}}},
	} {
		if err := env.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	d := &sessions{m: map[string]*tunnel.ServerSession{}}
	connectAgentTo(t, d, "member-1", true, cfg)
	f := startHub(t, d, Options{RequestTimeout: time.Second})

	// kubectl's request, as kube-apiserver's front proxy forwards it.
	tr := f.proxied.Transport.(*http.Transport)
	conn, err := tls.Dial("tcp", strings.TrimPrefix(f.url, "https://"), tr.TLSClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	req := "POST /apis/proxy.flotilla.io/v1beta1/memberclusters/member-1/proxy/api/v1/namespaces/a/pods/p/exec?command=sh&stdin=true HTTP/1.1\r\n" +
		"Host: hub\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n" +
		"X-Remote-User: erin\r\nX-Remote-Group: devs\r\nAuthorization: Bearer stolen\r\nImpersonate-User: system:admin\r\n\r\n"
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
	// More than a yamux window each way: flow control on the stream.
	payload := strings.Repeat("stdin and stdout ", 40000)
	go func() { _, _ = io.WriteString(conn, payload) }()
	got := make([]byte, len(payload))
	if _, err := io.ReadFull(r, got); err != nil {
		t.Fatalf("reading the echo: %v", err)
	}
	if string(got) != payload {
		t.Error("the echo differs from what was sent")
	}
	// Long-running: the upgraded connection outlives the request timeout.
	time.Sleep(1500 * time.Millisecond) // outliving the 1s request timeout is the point
	if _, err := io.WriteString(conn, "still there?"); err != nil {
		t.Fatal(err)
	}
	more := make([]byte, len("still there?"))
	if _, err := io.ReadFull(r, more); err != nil || string(more) != "still there?" {
		t.Errorf("after the request timeout: %q %v, want the echo", more, err)
	}

	h := <-seen
	for name, want := range map[string]string{
		"Authorization":       "Bearer agent-token",
		"Impersonate-User":    "flotilla:hub:erin",
		"Impersonate-Group":   "flotilla:hub:devs",
		"X-Remote-User":       "",
		"X-Flotilla-Hub-User": "",
	} {
		if got := strings.Join(h.Values(name), ","); got != want {
			t.Errorf("the member API server got %s %q, want %q", name, got, want)
		}
	}
}

// checkedSessions can tell at once why a member cannot be reached, as
// tunnelserver.Server can.
type checkedSessions struct{ *sessions }

func (s checkedSessions) CheckAPIProxy(member string) error {
	s.mu.Lock()
	ss := s.m[member]
	s.mu.Unlock()
	if ss == nil {
		return fmt.Errorf("%w: member %q has no agent connected to hub replica test", tunnelserver.ErrNotConnected, member)
	}
	if !ss.HasCapability(tunnel.CapabilityAPIProxy) {
		_, err := ss.OpenAPIProxy(context.Background())
		return err
	}
	return nil
}

// An exec into a member whose agent does not serve the proxy, or that is not
// connected, gets the same one-line answer as a plain request: the upgrade
// path would lose why.
func TestUpgradeToAMemberWithoutTheProxySaysWhy(t *testing.T) {
	setupRBAC(t)
	d := &sessions{m: map[string]*tunnel.ServerSession{}}
	connectAgent(t, d, "member-2", false)
	f := startHub(t, checkedSessions{d}, Options{})
	for member, want := range map[string]struct {
		code int
		text string
	}{
		"member-2": {http.StatusBadGateway, `did not announce capability \"api-proxy\"`},
		"member-3": {http.StatusServiceUnavailable, `member \"member-3\" has no agent connected`},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, f.url+apiproxy.PathPrefix(member)+"/api/v1/namespaces/a/pods/p/exec?command=sh", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Remote-User", "alice")
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		resp, err := f.proxied.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		code, body := status(t, resp)
		if code != want.code || !strings.Contains(body, want.text) {
			t.Errorf("%s: %d %s, want %d with %s", member, code, body, want.code, want.text)
		}
	}
}

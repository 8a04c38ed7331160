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
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flotilla-io/flotilla/pkg/apiproxy"
)

func TestVerbFor(t *testing.T) {
	got := map[string]string{}
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"} {
		got[m] = VerbFor(m)
	}
	want := map[string]string{
		"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete",
		"OPTIONS": "", "CONNECT": "", "TRACE": "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verbs (-want +got):\n%s", diff)
	}
}

func TestSubjectAccessReviewSpecNamesTheMembersProxy(t *testing.T) {
	spec := SubjectAccessReviewSpec(Identity{User: "alice", Groups: []string{"devs"}, Extra: map[string][]string{"scopes": {"a"}}}, "member-1", "patch")
	ra := spec.ResourceAttributes
	got := []string{spec.User, strings.Join(spec.Groups, ","), ra.Group, ra.Version, ra.Resource, ra.Subresource, ra.Name, ra.Verb, ra.Namespace, strings.Join(spec.Extra["scopes"], ",")}
	want := []string{"alice", "devs", "proxy.flotilla.io", "v1beta1", "memberclusters", "proxy", "member-1", "patch", "", "a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("review (-want +got):\n%s", diff)
	}
}

func TestStripIdentity(t *testing.T) {
	h := http.Header{
		"Authorization":           {"Bearer x"},
		"Proxy-Authorization":     {"Basic y"},
		"Impersonate-User":        {"admin"},
		"Impersonate-Group":       {"system:masters"},
		"Impersonate-Extra-Scope": {"all"},
		"X-Remote-User":           {"alice"},
		"X-Remote-Group":          {"devs"},
		"X-Remote-Extra-Scopes":   {"a"},
		"X-Custom-User":           {"configured"},
		"X-Flotilla-Hub-User":     {"forged"},
		"X-Flotilla-Hub-Group":    {"forged"},
		"Accept":                  {"application/json"},
		"Upgrade":                 {"websocket"},
	}
	stripIdentity(h, &RequestHeader{UsernameHeaders: []string{"x-custom-user"}})
	want := http.Header{"Accept": {"application/json"}, "Upgrade": {"websocket"}}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("headers left (-want +got):\n%s", diff)
	}
}

func TestLongRunning(t *testing.T) {
	for target, want := range map[string]bool{
		"/api/v1/pods":                                false,
		"/api/v1/pods?watch=true":                     true,
		"/api/v1/pods?watch=1":                        true,
		"/api/v1/pods?watch=false":                    false,
		"/api/v1/namespaces/a/pods/p/log?follow=true": true,
		"/api/v1/namespaces/a/pods/p/log":             false,
		"/api/v1/watch/namespaces/a/pods":             true,
		"/api/v1/namespaces/a/pods/p/exec?command=ls": false, // long-running by its upgrade header, below
	} {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		if got := longRunning(r); got != want {
			t.Errorf("longRunning(%s) = %v, want %v", target, got, want)
		}
	}
	r := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/a/pods/p/exec?command=ls", nil)
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", "SPDY/3.1")
	if !longRunning(r) {
		t.Error("an upgrade request is not long-running")
	}
}

// fixedAuth authenticates every request as one user, and allows all.
type fixedAuth struct{}

func (fixedAuth) Authenticate(*http.Request) (Identity, error) { return Identity{User: "alice"}, nil }
func (fixedAuth) Authorize(context.Context, Identity, string, string) (Decision, error) {
	return Decision{Allowed: true}, nil
}

// blockingDialer hands out connections to an HTTP server that answers only
// once release is closed.
type blockingDialer struct {
	srv *httptest.Server
}

func (d blockingDialer) OpenAPIProxy(ctx context.Context, _ string) (net.Conn, error) {
	var dialer net.Dialer
	return dialer.DialContext(ctx, "tcp", d.srv.Listener.Addr().String())
}

func TestMemberInflightLimitAndRequestTimeout(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 8)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.RawQuery, "slow") {
			<-r.Context().Done()
			return
		}
		arrived <- struct{}{}
		<-release
		_, _ = w.Write([]byte("ok"))
	}))
	defer backend.Close()
	h, err := New(Options{Dialer: blockingDialer{backend}, Authenticator: fixedAuth{}, Authorizer: fixedAuth{}, MaxInflightPerMember: 2, RequestTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	serve := func(member, query string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, apiproxy.PathPrefix(member)+"/api?watch=true"+query, nil))
		return rec
	}

	// Two long-running requests take member-1's two slots.
	done := make(chan int, 3)
	for range 2 {
		go func() { done <- serve("member-1", "").Code }()
	}
	<-arrived
	<-arrived
	if rec := serve("member-1", ""); rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "--proxy-max-inflight-per-member") {
		t.Errorf("a third request to a full member: %d %s, want 429 naming the flag", rec.Code, rec.Body)
	}
	// Another member has slots of its own.
	go func() { done <- serve("member-2", "").Code }()
	<-arrived
	close(release)
	for range 3 {
		if code := <-done; code != http.StatusOK {
			t.Errorf("a request within the limit: %d, want 200", code)
		}
	}
	if rec := serve("member-1", ""); rec.Code != http.StatusOK {
		t.Errorf("after the others ended: %d, want 200 (slots are given back)", rec.Code)
	}

	// A request that is not long-running is bounded by the timeout.
	rec := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, apiproxy.PathPrefix("member-1")+"/api?slow", nil))
	if rec.Code != http.StatusGatewayTimeout || !strings.Contains(rec.Body.String(), "--proxy-request-timeout") {
		t.Errorf("a slow request: %d %s, want 504 naming the flag", rec.Code, rec.Body)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a slow request took %s with a 200ms timeout", d)
	}
}

func TestRequestHeaderAuthentication(t *testing.T) {
	ca, other := newTestCA(t), newTestCA(t)
	a := &RequestHeader{ClientCA: ca.pool, AllowedNames: []string{"front-proxy-client"},
		UsernameHeaders: []string{"X-Remote-User"}, GroupHeaders: []string{"X-Remote-Group"}, ExtraHeaderPrefixes: []string{"X-Remote-Extra-"}}
	withCert := func(c *tls.Certificate) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-Remote-User", "alice")
		r.Header.Add("X-Remote-Group", "devs")
		r.Header.Add("X-Remote-Group", "system:authenticated")
		r.Header.Set("X-Remote-Extra-Acme.com%2Fproject", "p1")
		if c != nil {
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c.Leaf}}
		}
		return r
	}
	good := ca.clientCert(t, "front-proxy-client", x509.ExtKeyUsageClientAuth)
	cases := map[string]struct {
		req     *http.Request
		want    Identity
		wantErr string
	}{
		"the front proxy's certificate makes the headers count": {req: withCert(&good),
			want: Identity{User: "alice", Groups: []string{"devs", "system:authenticated"}, Extra: map[string][]string{"acme.com/project": {"p1"}}}},
		"no certificate":                    {req: withCert(nil), wantErr: "front proxy"},
		"a certificate of another CA":       {req: withCert(ptr(other.clientCert(t, "front-proxy-client", x509.ExtKeyUsageClientAuth))), wantErr: "front proxy"},
		"a certificate for another name":    {req: withCert(ptr(ca.clientCert(t, "someone", x509.ExtKeyUsageClientAuth))), wantErr: `is for "someone"`},
		"a certificate not for client auth": {req: withCert(ptr(ca.clientCert(t, "front-proxy-client", x509.ExtKeyUsageServerAuth))), wantErr: "front proxy"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := a.Authenticate(tc.req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Authenticate = %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("identity (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestParseRequestHeader(t *testing.T) {
	ca := newTestCA(t)
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}))
	a, err := parseRequestHeader(map[string]string{
		"requestheader-client-ca-file":       caPEM,
		"requestheader-allowed-names":        `["front-proxy-client"]`,
		"requestheader-username-headers":     `["X-Remote-User"]`,
		"requestheader-group-headers":        `["X-Remote-Group"]`,
		"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := [][]string{a.AllowedNames, a.UsernameHeaders, a.GroupHeaders, a.ExtraHeaderPrefixes}
	want := [][]string{{"front-proxy-client"}, {"X-Remote-User"}, {"X-Remote-Group"}, {"X-Remote-Extra-"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	if _, err := parseRequestHeader(map[string]string{"client-ca-file": caPEM}); err == nil || !strings.Contains(err.Error(), "--requestheader-client-ca-file") {
		t.Errorf("without the front proxy CA: %v, want an error naming --requestheader-client-ca-file", err)
	}
	if _, err := parseRequestHeader(map[string]string{"requestheader-client-ca-file": caPEM, "requestheader-allowed-names": "front-proxy-client"}); err == nil {
		t.Error("allowed names that are not JSON were accepted")
	}
}

// countingAuthorizer allows users named in allow and counts its calls.
type countingAuthorizer struct {
	allow map[string]bool
	calls int
}

func (a *countingAuthorizer) Authorize(_ context.Context, id Identity, _, _ string) (Decision, error) {
	a.calls++
	return Decision{Allowed: a.allow[id.User]}, nil
}

func TestCachingAuthorizerKeepsDecisionsForItsTTL(t *testing.T) {
	inner := &countingAuthorizer{allow: map[string]bool{"alice": true}}
	now := time.Unix(0, 0)
	c := &CachingAuthorizer{Authorizer: inner, TTL: 10 * time.Second, Now: func() time.Time { return now }}
	ask := func(user string, groups []string, member, verb string) bool {
		t.Helper()
		d, err := c.Authorize(t.Context(), Identity{User: user, Groups: groups}, member, verb)
		if err != nil {
			t.Fatal(err)
		}
		return d.Allowed
	}
	steps := []struct {
		name          string
		advance       time.Duration
		user          string
		groups        []string
		member, verb  string
		want          bool
		wantCallsThen int
	}{
		{"a first question is asked", 0, "alice", nil, "m1", "get", true, 1},
		{"the same question within the TTL is answered from the cache", 5 * time.Second, "alice", nil, "m1", "get", true, 1},
		{"another verb is another question", 0, "alice", nil, "m1", "create", true, 2},
		{"another member is another question", 0, "alice", nil, "m2", "get", true, 3},
		{"other groups are another question", 0, "alice", []string{"devs"}, "m1", "get", true, 4},
		{"a denial is kept too", 0, "bob", nil, "m1", "get", false, 5},
		{"a denial within the TTL is not asked again", time.Second, "bob", nil, "m1", "get", false, 5},
		{"after the TTL the question is asked again", 10 * time.Second, "alice", nil, "m1", "get", true, 6},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		if got := ask(s.user, s.groups, s.member, s.verb); got != s.want || inner.calls != s.wantCallsThen {
			t.Errorf("%s: allowed %v after %d calls, want %v after %d", s.name, got, inner.calls, s.want, s.wantCallsThen)
		}
	}
}

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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/hub/pki"
	"github.com/flotilla-io/flotilla/hub/tunnelserver"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

func TestDecideRoute(t *testing.T) {
	notHere := fmt.Errorf("%w: member %q has no agent connected to hub replica a", tunnelserver.ErrNotConnected, "m")
	live := PeerState{Found: true, Address: "10.0.0.2:8445"}
	expiredAt := time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC)
	// facts builds the facts of a request for m arriving at replica a.
	facts := func(f routeFacts) routeFacts {
		f.Self, f.Member = "a", "m"
		return f
	}
	cases := []struct {
		name string
		in   routeFacts
		want route
		// refusal is part of want.Refusal, when it is one.
		refusal string
	}{
		{name: "a member connected here is served here", in: facts(routeFacts{Forwarding: true}), want: route{}},
		{name: "a member whose agent here has no API proxy is answered here (502)",
			in: facts(routeFacts{Forwarding: true, Local: tunnel.ErrAPIProxyUnavailable}), want: route{}},
		{name: "a member connected to a live peer is forwarded to its published address",
			in: facts(routeFacts{Forwarding: true, Local: notHere, Owner: "b", Peer: live}), want: route{Peer: "b", Address: "10.0.0.2:8445"}},
		{name: "a forwarded request is never forwarded again",
			in: facts(routeFacts{Forwarding: true, Local: notHere, ForwardedBy: "b", Owner: "c", Peer: live}), refusal: `no longer connected to hub replica a, to which hub replica b forwarded`},
		{name: "without forwarding, not connected here is the answer",
			in: facts(routeFacts{Local: notHere, Owner: "b", Peer: live}), refusal: `has no agent connected to hub replica a`},
		{name: "a member no replica holds",
			in: facts(routeFacts{Forwarding: true, Local: notHere}), refusal: `has no agent connected to any hub replica`},
		{name: "a member recorded here whose session just ended",
			in: facts(routeFacts{Forwarding: true, Local: notHere, Owner: "a"}), refusal: `session here just ended`},
		{name: "an owner without a Lease is gone",
			in: facts(routeFacts{Forwarding: true, Local: notHere, Owner: "b"}), refusal: `hub replica b, which is gone (it has no Lease)`},
		{name: "an owner whose Lease expired is gone",
			in:      facts(routeFacts{Forwarding: true, Local: notHere, Owner: "b", Peer: PeerState{Found: true, ExpiredAt: expiredAt, Address: "x:1"}}),
			refusal: `hub replica b, whose Lease expired at 2026-11-27T21:00:00Z`},
		{name: "an owner that publishes no address",
			in: facts(routeFacts{Forwarding: true, Local: notHere, Owner: "b", Peer: PeerState{Found: true}}), refusal: `publishes no API proxy address`},
		{name: "an owner that cannot be read",
			in: facts(routeFacts{Forwarding: true, Local: notHere, OwnerErr: fmt.Errorf("boom")}), refusal: `cannot be told: boom`},
		{name: "a Lease that cannot be read",
			in: facts(routeFacts{Forwarding: true, Local: notHere, Owner: "b", PeerErr: fmt.Errorf("boom")}), refusal: `hub replica b, which cannot be looked up: boom`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := decideRoute(tc.in)
			if tc.refusal != "" {
				if !strings.Contains(got.Refusal, tc.refusal) || got.Peer != "" {
					t.Errorf("decideRoute = %+v, want a refusal with %q", got, tc.refusal)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decideRoute (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNeedsOwnerOnlyForAMemberNotHereOnARequestFromKubeAPIServer(t *testing.T) {
	notHere := fmt.Errorf("%w: x", tunnelserver.ErrNotConnected)
	for _, tc := range []struct {
		in   routeFacts
		want bool
	}{
		{routeFacts{Forwarding: true, Local: notHere}, true},
		{routeFacts{Forwarding: true}, false},
		{routeFacts{Forwarding: true, Local: notHere, ForwardedBy: "b"}, false},
		{routeFacts{Local: notHere}, false},
	} {
		if got := needsOwner(tc.in); got != tc.want {
			t.Errorf("needsOwner(%+v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// A peer is only a connection whose client certificate the hub's CA issued
// to a hub replica.
func TestPeerReplicaBelievesOnlyTheHubsReplicaCertificates(t *testing.T) {
	hubCA := newHubCA(t)
	replicaCert, err := hubCA.IssueReplica("replica-a", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other := newTestCA(t)
	cases := []struct {
		name  string
		certs []*x509.Certificate
		want  string
	}{
		{name: "a replica certificate of the hub's CA", certs: []*x509.Certificate{replicaCert.Leaf}, want: "replica-a"},
		{name: "no certificate"},
		{name: "the front proxy's certificate", certs: []*x509.Certificate{other.clientCert(t, "front-proxy-client", x509.ExtKeyUsageClientAuth).Leaf}},
		{name: "a replica-looking certificate of another CA", certs: []*x509.Certificate{otherReplicaCert(t, other)}},
		{name: "a member certificate of the hub's CA", certs: []*x509.Certificate{memberCert(t, hubCA)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &http.Request{TLS: &tls.ConnectionState{PeerCertificates: tc.certs}}
			got, ok := peerReplica(r, hubCA.Pool())
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("peerReplica = %q %v, want %q", got, ok, tc.want)
			}
		})
	}
}

func TestForwardedIdentityRoundTripsAndIsStrippedBeforeTheMember(t *testing.T) {
	want := Identity{User: "alice", UID: "u-1", Groups: []string{"devs", "system:authenticated"}, Extra: map[string][]string{"scopes.example.com/a b": {"x", "y"}}}
	h := http.Header{}
	setForwardedIdentity(h, want)
	got, err := forwardedIdentity(h)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("forwardedIdentity (-want +got):\n%s", diff)
	}
	if _, err := forwardedIdentity(http.Header{}); err == nil {
		t.Error("forwardedIdentity without a user: want an error")
	}
	stripIdentity(h, &RequestHeader{})
	if len(h) != 0 {
		t.Errorf("after stripIdentity: %v, want no forwarded identity header", h)
	}
}

// newHubCA is a hub CA as hub/pki keeps it.
func newHubCA(t testing.TB) *pki.CA {
	t.Helper()
	ca := newTestCA(t)
	return &pki.CA{Cert: ca.cert, Key: ca.key}
}

// otherReplicaCert is a certificate with the replicas' organization that the
// hub's CA did not issue.
func otherReplicaCert(t *testing.T, other *testCA) *x509.Certificate {
	t.Helper()
	c, err := (&pki.CA{Cert: other.cert, Key: other.key}).IssueReplica("replica-a", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return c.Leaf
}

// memberCert is a member's client certificate, signed by the hub's CA at
// join (SignMemberFor).
func memberCert(t *testing.T, ca *pki.CA) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "member-1", Organization: []string{pki.ReplicaOrganization}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	_, cert, err := ca.SignMemberFor(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), "member-1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

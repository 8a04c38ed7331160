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
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/join"
	"github.com/flotilla-io/flotilla/hub/pki"
	joinproto "github.com/flotilla-io/flotilla/pkg/join"
	"github.com/flotilla-io/flotilla/pkg/testenv"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// tryDial dials a tunnel and returns the error, closing a session that opened.
func tryDial(addr, name string, cert tls.Certificate, pool *x509.CertPool) error {
	s, err := tunnel.Dial(context.Background(), tunnel.DialOptions{
		Address:       addr,
		TLSConfig:     &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{tunnel.ALPNTunnel}},
		ClientOptions: tunnel.ClientOptions{Hello: tunnel.Hello{ClusterName: name, AgentVersion: "test"}},
	})
	if err == nil {
		_ = s.Close()
	}
	return err
}

// connected opens a session for a joined member and checks that it works.
func connected(t *testing.T, addr, name string, cert tls.Certificate, pool *x509.CertPool) *tunnel.ClientSession {
	t.Helper()
	s := connect(t, addr, name, cert, pool)
	return s
}

func waitSessionEnd(t *testing.T, s *tunnel.ClientSession, what string) {
	t.Helper()
	select {
	case <-s.CloseChan():
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: the session is still open", what)
	}
}

func wantRefusal(t *testing.T, got string, wants ...string) {
	t.Helper()
	if got == "" {
		t.Fatalf("the join was accepted, want a refusal that says %q", wants)
	}
	if strings.Contains(got, "\n") {
		t.Errorf("refusal %q is not one line", got)
	}
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("refusal %q does not say %q", got, w)
		}
	}
}

// A token minted for one member cannot join as another, a token for any name
// cannot take an existing name, and the real member keeps its labels and its
// session; only a re-join token replaces it, which ends the old session and
// retires the old certificate.
func TestATokenJoinsOnlyItsMemberAndNeverTakesOneOver(t *testing.T) {
	ctx := context.Background()
	addr := startServer(t)
	cert, pool := joinMember(t, addr, "member-1")
	mc := member(t, "member-1")
	mc.Labels = map[string]string{"env": "prod"}
	if err := env.Client.Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
	s := connected(t, addr, "member-1", cert, pool)

	_, _, refusal := joinWith(t, addr, "member-1", newToken(t, join.TokenOptions{Name: "member-9"}))
	wantRefusal(t, refusal, `created for member "member-9", not "member-1"`, "hub token create --name member-1")
	_, _, refusal = joinWith(t, addr, "member-1", newToken(t, join.TokenOptions{AnyName: true}))
	wantRefusal(t, refusal, `member "member-1" is already in the fleet`, "--rejoin")
	_, _, refusal = joinWith(t, addr, "member-1", newToken(t, join.TokenOptions{Name: "member-1"}))
	wantRefusal(t, refusal, `member "member-1" is already in the fleet`, "hub token create --name member-1 --rejoin")

	if got := member(t, "member-1").Labels["env"]; got != "prod" {
		t.Errorf("label env of member-1 = %q after the refused joins, want prod", got)
	}
	heartbeat(t, s, 2) // the real agent's session is untouched

	// A token for any name joins a new one, once.
	anyToken := newToken(t, join.TokenOptions{AnyName: true})
	if _, _, refusal := joinWith(t, addr, "member-2", anyToken); refusal != "" {
		t.Fatalf("a token for any name could not join a new member: %s", refusal)
	}
	_, _, refusal = joinWith(t, addr, "member-3", anyToken)
	wantRefusal(t, refusal, `already used to join member "member-2"`)

	// A re-join token replaces the member's identity.
	newCert, newPool, refusal := joinWith(t, addr, "member-1", newToken(t, join.TokenOptions{Name: "member-1", Rejoin: true}))
	if refusal != "" {
		t.Fatalf("re-join refused: %s", refusal)
	}
	waitSessionEnd(t, s, "the session of the replaced certificate")
	var refused *tunnel.RefusedError
	if err := tryDial(addr, "member-1", cert, pool); !errors.As(err, &refused) || !strings.Contains(refused.Reason, "no longer accepted") {
		t.Errorf("dial with the replaced certificate = %v, want a refusal saying it is no longer accepted", err)
	}
	connected(t, addr, "member-1", newCert, newPool)
}

// The certificate of a member that was deleted and joined again is refused,
// and deleting a member ends its session at once.
func TestTheOldCertificateOfADeletedAndRejoinedMemberIsRefused(t *testing.T) {
	ctx := context.Background()
	addr := startServer(t)
	cert, pool := joinMember(t, addr, "theta")
	s := connected(t, addr, "theta", cert, pool)
	if err := env.Client.Delete(ctx, member(t, "theta")); err != nil {
		t.Fatal(err)
	}
	// A join creates the member with membership's finalizer; membership
	// (not running here) drops it once the member's records are gone.
	mc := member(t, "theta")
	mc.Finalizers = nil
	if err := env.Client.Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
	waitSessionEnd(t, s, "the deleted member's session")
	testenv.Eventually(t, 10*time.Second, func() error {
		err := env.Client.Get(ctx, types.NamespacedName{Name: "theta"}, &clusterv1beta1.MemberCluster{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("MemberCluster gamma still exists (%w)", err)
		}
		return nil
	})
	newCert, newPool := joinMember(t, addr, "theta")
	var refused *tunnel.RefusedError
	if err := tryDial(addr, "theta", cert, pool); !errors.As(err, &refused) {
		t.Fatalf("dial with the certificate from before the deletion = %v, want a refusal", err)
	}
	connected(t, addr, "theta", newCert, newPool)
}

// Expired tokens are refused and deleted; join requests are rate-limited per
// source address.
func TestExpiredTokensAreDeletedAndJoinsAreRateLimited(t *testing.T) {
	ctx := context.Background()
	addr := startServerWith(t, Options{JoinAttemptsPerMinute: 2})
	expired := newToken(t, join.TokenOptions{Name: "delta", TTL: time.Second})
	unused := newToken(t, join.TokenOptions{Name: "delta", TTL: time.Second})
	time.Sleep(2 * time.Second) // tokens expire at a whole second
	_, _, refusal := joinWith(t, addr, "delta", expired)
	wantRefusal(t, refusal, "expired", "hub token create --name delta")
	if n, err := join.DeleteExpiredTokens(ctx, env.Client, clusterv1beta1.HubNamespace, time.Now()); err != nil || n < 1 {
		t.Errorf("DeleteExpiredTokens = %d, %v; want the unused expired token deleted", n, err)
	}
	for _, token := range []string{expired, unused} {
		id, _, _ := joinproto.ParseToken(token)
		err := env.Client.Get(ctx, types.NamespacedName{Namespace: clusterv1beta1.HubNamespace, Name: "flotilla-token-" + id}, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("expired token %s still stored (%v)", id, err)
		}
	}
	// Two attempts per minute from one address: the third is refused.
	_, _, refusal = joinWith(t, addr, "delta", "abcdef.0123456789abcdef")
	wantRefusal(t, refusal, "unknown")
	_, _, refusal = joinWith(t, addr, "delta", newToken(t, join.TokenOptions{Name: "delta"}))
	wantRefusal(t, refusal, "too many join requests from 127.0.0.1", "wait a minute")
}

// renew asks for a new certificate over mutual TLS with cert and returns it,
// or the hub's refusal.
func renew(t *testing.T, addr, name string, cert tls.Certificate, pool *x509.CertPool) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csrDER, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name}}, key)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{tunnel.ALPNJoin}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := joinproto.Request{Action: joinproto.ActionRenew, ClusterName: name, CSR: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csrDER})}
	if err := joinproto.Write(conn, req); err != nil {
		t.Fatal(err)
	}
	resp := joinproto.Response{}
	if err := joinproto.Read(conn, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error != "" {
		return tls.Certificate{}, resp.Error
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	out, err := tls.X509KeyPair(resp.Certificate, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	return out, ""
}

// A member renews its (short-lived) certificate over mutual TLS: the old one
// keeps working until the agent connects with the new one, and is refused
// after; a certificate that is no longer accepted cannot renew.
func TestRenewalReplacesTheCertificateOnceTheAgentUsesTheNewOne(t *testing.T) {
	addr := startServerWith(t, Options{MemberCertificateLifetime: time.Minute})
	cert, pool := joinMember(t, addr, "epsilon")
	leaf, _ := x509.ParseCertificate(cert.Certificate[0])
	if life := time.Until(leaf.NotAfter); life > time.Minute || life < 50*time.Second {
		t.Fatalf("the member certificate is valid for %s more, want about the configured minute", life)
	}
	old := connected(t, addr, "epsilon", cert, pool)
	newCert, refusal := renew(t, addr, "epsilon", cert, pool)
	if refusal != "" {
		t.Fatalf("renewal refused: %s", refusal)
	}
	newLeaf, _ := x509.ParseCertificate(newCert.Certificate[0])
	id := member(t, "epsilon").Status.Identity
	if id == nil || id.CertificateSerial != pki.Serial(newLeaf) || id.PreviousCertificateSerial != pki.Serial(leaf) {
		t.Fatalf("identity after renewal = %+v, want serial %s with %s still accepted", id, pki.Serial(newLeaf), pki.Serial(leaf))
	}
	heartbeat(t, old, 2) // the old session goes on until the agent redials
	_ = old.Close()
	connected(t, addr, "epsilon", newCert, pool)
	testenv.Eventually(t, 10*time.Second, func() error {
		if id := member(t, "epsilon").Status.Identity; id.PreviousCertificateSerial != "" {
			return fmt.Errorf("the replaced certificate is still accepted: %+v", id)
		}
		return nil
	})
	if err := tryDial(addr, "epsilon", cert, pool); err == nil {
		t.Error("the replaced certificate still opens a session")
	}
	_, refusal = renew(t, addr, "epsilon", cert, pool)
	wantRefusal(t, refusal, "no longer accepted", "--rejoin")
}

// A replica writes a member's status only while the status names its own
// session: when another replica's newer session is recorded, this replica
// ends its session and its disconnect does not overwrite the other's status.
func TestAReplicaThatLostTheSessionWritesNothing(t *testing.T) {
	ctx := context.Background()
	addr := startServer(t)
	cert, pool := joinMember(t, addr, "zeta")
	s := connected(t, addr, "zeta", cert, pool)
	testenv.Eventually(t, 10*time.Second, func() error {
		if as := member(t, "zeta").Status.AgentSession; as == nil || as.HubReplica != "test" {
			return fmt.Errorf("agentSession = %+v", as)
		}
		return nil
	})
	// Another replica accepted a newer session of the same member.
	var newer int64
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := member(t, "zeta")
		newer = mc.Status.AgentSession.Generation + 1
		now := metav1.Now()
		mc.Status.AgentSession = &clusterv1beta1.AgentSession{HubReplica: "other", ConnectedSince: &now, Generation: newer}
		return env.Client.Status().Update(ctx, mc)
	})
	if err != nil {
		t.Fatal(err)
	}
	waitSessionEnd(t, s, "the superseded session")
	testenv.Consistently(t, 3*time.Second, func() error {
		mc := member(t, "zeta")
		as := mc.Status.AgentSession
		if as == nil || as.HubReplica != "other" || as.Generation != newer {
			return fmt.Errorf("the other replica's session was overwritten: agentSession = %+v", as)
		}
		if c := conditionOf(mc, clusterv1beta1.ConditionAgentConnected); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("AgentConnected = %+v, want True (the other replica holds the session)", c)
		}
		return nil
	})
}

// servingSerial returns the serial of the certificate the tunnel port serves.
func servingSerial(t *testing.T, addr string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{tunnel.ALPNJoin}}) //nolint:gosec // only reads the certificate
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return pki.Serial(conn.ConnectionState().PeerCertificates[0])
}

// The serving certificate is kept in a Secret, survives a restart, and is
// reissued after two thirds of its lifetime.
func TestTheServingCertificateIsKeptInASecretAndRotated(t *testing.T) {
	ctx := context.Background()
	addr := startServerWith(t, Options{ServingCertificateLifetime: 6 * time.Second})
	first := servingSerial(t, addr)
	secret := &corev1.Secret{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: clusterv1beta1.HubNamespace, Name: pki.ServingSecretName}, secret); err != nil {
		t.Fatalf("the serving certificate is not kept in a Secret: %v", err)
	}
	testenv.Eventually(t, 15*time.Second, func() error {
		if got := servingSerial(t, addr); got == first {
			return fmt.Errorf("still serving %s", got)
		}
		return nil
	})
}

// A heartbeat sent before the agent collected its properties (every property
// at its zero value) leaves Healthy Unknown; the first collected one sets it.
func TestAHeartbeatWithoutCollectedPropertiesLeavesHealthUnknown(t *testing.T) {
	addr := startServer(t)
	cert, pool := joinMember(t, addr, "iota")
	s := dial(t, addr, "iota", cert, pool)
	if err := s.Work().Send(tunnel.WorkInventory{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Control().Send(tunnel.Heartbeat{Sequence: 1, SentAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Control().Recv(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if c := conditionOf(member(t, "iota"), clusterv1beta1.ConditionAgentConnected); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("AgentConnected = %+v", c)
		}
		return nil
	})
	testenv.Consistently(t, 2*time.Second, func() error {
		if c := conditionOf(member(t, "iota"), clusterv1beta1.ConditionHealthy); c != nil && c.Status != metav1.ConditionUnknown {
			return fmt.Errorf("Healthy = %s (%s) before the agent collected anything, want Unknown", c.Status, c.Message)
		}
		return nil
	})
	heartbeat(t, s, 2)
	testenv.Eventually(t, 10*time.Second, func() error {
		if c := conditionOf(member(t, "iota"), clusterv1beta1.ConditionHealthy); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Healthy = %+v after collected properties", c)
		}
		return nil
	})
}

// A session's heartbeats are read no faster than HeartbeatRate (after a burst
// of 10): an agent that floods them is slowed down, not served at its pace.
func TestASessionsHeartbeatsAreRateLimited(t *testing.T) {
	addr := startServerWith(t, Options{HeartbeatRate: 4})
	cert, pool := joinMember(t, addr, "kappa")
	s := dial(t, addr, "kappa", cert, pool)
	if err := s.Work().Send(tunnel.WorkInventory{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	const n = 30
	for seq := uint64(1); seq <= n; seq++ {
		heartbeat(t, s, seq)
	}
	// 10 at once, then 4 per second: at least 5s for 30.
	if took := time.Since(start); took < 4*time.Second {
		t.Errorf("%d heartbeats were answered in %s, want the hub to read them at 4 per second after a burst of 10", n, took)
	}
}

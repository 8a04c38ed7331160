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

package join_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/agent/apply"
	"github.com/flotilla-io/flotilla/agent/join"
	"github.com/flotilla-io/flotilla/agent/session/sessiontest"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	joinproto "github.com/flotilla-io/flotilla/pkg/join"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// env is the member cluster of the tests.
var env *testenv.Env

var kube kubernetes.Interface

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, testenv.Options{MemberCluster: true}, func(e *testenv.Env) (err error) {
		env = e
		kube, err = kubernetes.NewForConfig(env.Config)
		return err
	}))
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// forgetIdentity deletes the identity Secret when the test ends.
func forgetIdentity(t *testing.T) {
	t.Cleanup(func() {
		err := kube.CoreV1().Secrets(join.Namespace).Delete(context.Background(), join.SecretName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("failed to delete the identity: %v", err)
		}
	})
}

func joinOptions(hub *sessiontest.Hub) join.Options {
	return join.Options{
		Hub:        hub.URL(),
		Token:      sessiontest.Token,
		CACertHash: hub.Hash,
		Name:       "member-1",
		Labels:     map[string]string{"env": "dev", "zone": "eu"},
		Member:     env.Config,
	}
}

func closedAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func parseCertificate(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("not PEM: %q", data)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestJoinStoresAnIdentityWhoseKeyWasMadeOnTheMember(t *testing.T) {
	ctx := testContext(t)
	forgetIdentity(t)
	hub := sessiontest.Start(t, sessiontest.Options{})

	id, err := join.Join(ctx, joinOptions(hub))
	if err != nil {
		t.Fatalf("Join() failed: %v", err)
	}

	secret, err := kube.CoreV1().Secrets(join.Namespace).Get(ctx, join.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the identity Secret is missing: %v", err)
	}
	var keys []string
	for k := range secret.Data {
		keys = append(keys, k)
	}
	if diff := cmp.Diff([]string{"ca.crt", "hub", "name", "tls.crt", "tls.key"}, sortedStrings(keys)); diff != "" {
		t.Errorf("identity Secret keys (-want +got):\n%s", diff)
	}
	if got := string(secret.Data[join.KeyHub]); got != hub.Addr {
		t.Errorf("hub = %q, want %q", got, hub.Addr)
	}
	if got := string(secret.Data[join.KeyName]); got != "member-1" {
		t.Errorf("name = %q, want member-1", got)
	}
	cert := parseCertificate(t, secret.Data[join.KeyCertificate])
	if cert.Subject.CommonName != "member-1" {
		t.Errorf("certificate CommonName = %q, want member-1", cert.Subject.CommonName)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: hub.CA.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the certificate does not verify against the hub's CA: %v", err)
	}
	keyBlock, _ := pem.Decode(secret.Data[join.KeyPrivateKey])
	key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	if err != nil {
		t.Fatalf("tls.key is not an EC key: %v", err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		t.Error("the stored key is not the certificate's")
	}

	// The hub got a certificate request for that key, and never the key.
	joins := hub.Joins()
	if len(joins) != 1 {
		t.Fatalf("the hub got %d requests, want 1", len(joins))
	}
	req := joins[0]
	csrBlock, _ := pem.Decode(req.CSR)
	csr, err := x509.ParseCertificateRequest(csrBlock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !csr.PublicKey.(*ecdsa.PublicKey).Equal(&key.PublicKey) || csr.Subject.CommonName != "member-1" {
		t.Errorf("the CSR is for %q and another key", csr.Subject.CommonName)
	}
	wire, _ := json.Marshal(req)
	if strings.Contains(string(wire), "PRIVATE KEY") {
		t.Error("the join request carried a private key")
	}
	if diff := cmp.Diff(joinproto.Request{Action: joinproto.ActionJoin, Token: sessiontest.Token, ClusterName: "member-1",
		Labels: map[string]string{"env": "dev", "zone": "eu"}, AgentVersion: req.AgentVersion}, withoutCSR(req)); diff != "" || req.AgentVersion == "" {
		t.Errorf("join request (-want +got):\n%s", diff)
	}

	loaded, err := join.LoadIdentity(ctx, env.Config)
	if err != nil {
		t.Fatalf("LoadIdentity() failed: %v", err)
	}
	if diff := cmp.Diff(id, loaded); diff != "" {
		t.Errorf("LoadIdentity() (-want +got):\n%s", diff)
	}
	if _, err := loaded.TLSConfig("flotilla-tunnel/1"); err != nil {
		t.Errorf("TLSConfig() failed: %v", err)
	}

	// A second join is refused before the hub is asked.
	_, err = join.Join(ctx, joinOptions(hub))
	if err == nil || !strings.Contains(err.Error(), "already joined") || !strings.Contains(err.Error(), "agent leave") {
		t.Errorf("a second Join() = %v, want an error saying it already joined and to run `agent leave`", err)
	}
	if n := len(hub.Joins()); n != 1 {
		t.Errorf("the hub got %d requests, want still 1", n)
	}
}

func withoutCSR(r joinproto.Request) joinproto.Request {
	r.CSR = nil
	return r
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func TestJoinFailsWithOneLineThatNamesTheFix(t *testing.T) {
	hub := sessiontest.Start(t, sessiontest.Options{})
	other := sessiontest.NewCA(t)
	closed := closedAddress(t)

	tests := []struct {
		name       string
		change     func(*join.Options)
		want       []string
		wantNoDial bool
	}{
		{
			name:   "a CA hash that is not the hub's",
			change: func(o *join.Options) { o.CACertHash = other.Hash() },
			want:   []string{"the hub's CA does not match --discovery-token-ca-cert-hash " + other.Hash(), "(it is " + hub.Hash + ")"},
		},
		{
			name:   "a hub that does not listen",
			change: func(o *join.Options) { o.Hub = "https://" + closed },
			want:   []string{"cannot reach the hub at " + closed + ": ", "check --hub and that the hub's tunnel port is reachable from here"},
		},
		{
			name:   "a token the hub does not know",
			change: func(o *join.Options) { o.Token = "zzzzzz.zzzzzzzzzzzzzzzz" },
			want:   []string{"the hub refused the join: " + sessiontest.UnknownTokenMessage},
		},
		{
			name:       "a malformed token",
			change:     func(o *join.Options) { o.Token = "not-a-token" },
			want:       []string{"--token is malformed", "copy the whole token"},
			wantNoDial: true,
		},
		{
			name:       "a label that is not a label",
			change:     func(o *join.Options) { o.Labels = map[string]string{"bad key!": "x"} },
			want:       []string{`--labels: key "bad key!" is not a valid label key`},
			wantNoDial: true,
		},
		{
			name:       "a hash that is not a hash",
			change:     func(o *join.Options) { o.CACertHash = "md5:1234" },
			want:       []string{"--discovery-token-ca-cert-hash \"md5:1234\" is not sha256:<64 lowercase hex digits>"},
			wantNoDial: true,
		},
		{
			name:       "a hub address without a port",
			change:     func(o *join.Options) { o.Hub = "https://hub.example.com" },
			want:       []string{`--hub "https://hub.example.com" is not https://HOST:PORT`},
			wantNoDial: true,
		},
		{
			name:       "a member API server that cannot be reached",
			change:     func(o *join.Options) { o.Member = &rest.Config{Host: "https://" + closed} },
			want:       []string{"cannot reach the member cluster's API server at https://" + closed, "check --kubeconfig"},
			wantNoDial: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forgetIdentity(t)
			before := len(hub.Joins())
			opts := joinOptions(hub)
			tt.change(&opts)
			_, err := join.Join(testContext(t), opts)
			if err == nil {
				t.Fatal("Join() succeeded, want an error")
			}
			msg := err.Error()
			t.Logf("Join() = %s", msg)
			if strings.Contains(msg, "\n") {
				t.Errorf("the error is more than one line: %q", msg)
			}
			for _, want := range tt.want {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if tt.wantNoDial && len(hub.Joins()) != before {
				t.Error("the hub was asked, want the error found locally")
			}
			if _, err := kube.CoreV1().Secrets(join.Namespace).Get(context.Background(), join.SecretName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("an identity was stored after a failed join (err %v)", err)
			}
		})
	}
}

func TestLeaveRemovesTheWorksTellsTheHubAndForgetsTheIdentity(t *testing.T) {
	ctx := testContext(t)
	forgetIdentity(t)
	hub := sessiontest.Start(t, sessiontest.Options{})
	if _, err := join.Join(ctx, joinOptions(hub)); err != nil {
		t.Fatal(err)
	}
	applier := applyConfigMap(t, "leave-told")

	res, err := join.Leave(ctx, join.LeaveOptions{Member: env.Config, Remover: applier})
	if err != nil {
		t.Fatalf("Leave() failed: %v", err)
	}
	if diff := cmp.Diff([]string{"leave-told"}, res.Removed); diff != "" {
		t.Errorf("removed Works (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"member-1"}, hub.Leaves()); diff != "" {
		t.Errorf("members that left the hub (-want +got):\n%s", diff)
	}
	checkLeft(t, "leave-told")

	_, err = join.Leave(ctx, join.LeaveOptions{Member: env.Config, Remover: applier})
	if err == nil || !strings.Contains(err.Error(), "has not joined") {
		t.Errorf("a second Leave() = %v, want an error saying the cluster has not joined", err)
	}
}

func TestLeaveWithTheHubGoneStillCleansUpAndNamesTheStepOnTheHub(t *testing.T) {
	ctx := testContext(t)
	forgetIdentity(t)
	hub := sessiontest.Start(t, sessiontest.Options{})
	if _, err := join.Join(ctx, joinOptions(hub)); err != nil {
		t.Fatal(err)
	}
	applier := applyConfigMap(t, "leave-untold")
	hub.Stop()

	_, err := join.Leave(ctx, join.LeaveOptions{Member: env.Config, Remover: applier, Timeout: 5 * time.Second})
	t.Logf("Leave() = %v", err)
	var notTold *join.HubNotToldError
	if !errors.As(err, &notTold) {
		t.Fatalf("Leave() = %v, want a HubNotToldError", err)
	}
	for _, want := range []string{"could not be told", "kubectl delete membercluster member-1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("the error is more than one line: %q", err)
	}
	checkLeft(t, "leave-untold")
}

// applyConfigMap applies a Work with one ConfigMap, named like the Work.
func applyConfigMap(t *testing.T, name string) *apply.Applier {
	t.Helper()
	applier, err := apply.New(env.Config, apply.Options{Namespace: join.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default"},
	})
	work := &placementv1beta1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.WorkSpec{Workload: placementv1beta1.WorkloadTemplate{
			Manifests: []placementv1beta1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}},
		}},
	}
	if _, err := applier.Apply(testContext(t), work); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps("default").Get(context.Background(), name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	return applier
}

// checkLeft checks that the Work's ConfigMap and the identity are gone.
func checkLeft(t *testing.T, name string) {
	t.Helper()
	if _, err := kube.CoreV1().ConfigMaps("default").Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap default/%s is still there (err %v)", name, err)
	}
	if _, err := join.LoadIdentity(context.Background(), env.Config); !errors.Is(err, join.ErrNotJoined) {
		t.Errorf("LoadIdentity() after leaving = %v, want ErrNotJoined", err)
	}
}

// An agent renews its short-lived certificate over mutual TLS: a new key made
// on the member, a new certificate stored in the identity Secret, handed to
// OnRenewed after two thirds of the old one's lifetime.
func TestTheRenewerRenewsAfterTwoThirdsOfTheLifetime(t *testing.T) {
	ctx := testContext(t)
	forgetIdentity(t)
	hub := sessiontest.Start(t, sessiontest.Options{MemberLifetime: 15 * time.Second})
	id, err := join.Join(ctx, joinOptions(hub))
	if err != nil {
		t.Fatalf("Join() failed: %v", err)
	}
	leaf := parseCertificate(t, id.Certificate)
	due := join.RenewAt(leaf)
	renewed := make(chan *join.Identity, 1)
	r := &join.Renewer{Member: env.Config, OnRenewed: func(n *join.Identity) {
		select {
		case renewed <- n:
		default:
		}
	}}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = r.Run(rctx, id) }()
	var got *join.Identity
	select {
	case got = <-renewed:
	case <-time.After(30 * time.Second):
		t.Fatal("the certificate was not renewed")
	}
	if now := time.Now(); now.Before(due.Add(-time.Second)) {
		t.Errorf("renewed at %s, before two thirds of the lifetime (%s)", now, due)
	}
	newLeaf := parseCertificate(t, got.Certificate)
	if newLeaf.SerialNumber.Cmp(leaf.SerialNumber) == 0 || string(got.PrivateKey) == string(id.PrivateKey) {
		t.Error("the renewed identity has the old certificate or key")
	}
	if !newLeaf.NotAfter.After(leaf.NotAfter) {
		t.Errorf("the renewed certificate expires at %s, not after the old one (%s)", newLeaf.NotAfter, leaf.NotAfter)
	}
	stored, err := join.LoadIdentity(ctx, env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if string(stored.Certificate) != string(got.Certificate) || string(stored.PrivateKey) != string(got.PrivateKey) {
		t.Error("the identity Secret does not hold the renewed certificate and key")
	}
}

func TestJoinAsTheHubNeedsTheHubsOwnClusterAndMarksTheIdentity(t *testing.T) {
	ctx := testContext(t)
	forgetIdentity(t)
	hub := sessiontest.Start(t, sessiontest.Options{})
	opts := joinOptions(hub)
	opts.Name = "hub"
	opts.HubAsMember = true

	// A cluster that is not the hub is refused before the token is spent.
	_, err := join.Join(ctx, opts)
	if err == nil || !strings.Contains(err.Error(), "--hub-as-member: the cluster at") || !strings.Contains(err.Error(), "is not the hub you join") {
		t.Fatalf("Join(--hub-as-member) on a cluster that is not the hub = %v, want it refused", err)
	}
	if n := len(hub.Joins()); n != 0 {
		t.Fatalf("the hub saw %d join requests, want none", n)
	}

	// The cluster publishes the hub's CA hash: it is the hub.
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: join.Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	info := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: join.Namespace, Name: joinproto.HubInfoConfigMap},
		Data: map[string]string{joinproto.HubInfoKeyCAHash: hub.Hash}}
	if _, err := kube.CoreV1().ConfigMaps(join.Namespace).Create(ctx, info, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.CoreV1().ConfigMaps(join.Namespace).Delete(context.Background(), joinproto.HubInfoConfigMap, metav1.DeleteOptions{})
	})

	plain := opts
	plain.HubAsMember = false
	if _, err := join.Join(ctx, plain); err == nil || !strings.Contains(err.Error(), "is the hub you join: join it with --hub-as-member") {
		t.Fatalf("Join() without --hub-as-member on the hub's cluster = %v, want it refused", err)
	}

	if _, err := join.Join(ctx, opts); err != nil {
		t.Fatalf("Join(--hub-as-member) on the hub's cluster failed: %v", err)
	}
	joins := hub.Joins()
	if len(joins) != 1 || !joins[0].HubAsMember {
		t.Errorf("join requests = %+v, want one with hubAsMember", joins)
	}
	id, err := join.LoadIdentity(ctx, env.Config)
	if err != nil {
		t.Fatalf("LoadIdentity() failed: %v", err)
	}
	if !id.HubAsMember {
		t.Error("the identity does not say the cluster is the hub")
	}
}

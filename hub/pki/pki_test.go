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

package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	joinproto "github.com/flotilla-io/flotilla/pkg/join"
)

func testCA(t *testing.T) *CA {
	t.Helper()
	certPEM, keyPEM, err := newCA()
	if err != nil {
		t.Fatal(err)
	}
	ca, err := ParseCA(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func csrFor(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestSignMemberIssuesAClientCertificateForThatMemberOnly(t *testing.T) {
	ca := testCA(t)
	certPEM, err := ca.SignMember(csrFor(t, "member-1"), "member-1")
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "member-1" {
		t.Errorf("CN = %q", cert.Subject.CommonName)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("not a client certificate of the CA: %v", err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("a member certificate must not serve")
	}
	if _, err := ca.SignMember(csrFor(t, "member-2"), "member-1"); err == nil || !strings.Contains(err.Error(), "member-2") {
		t.Errorf("a request naming another member was signed or refused unclearly: %v", err)
	}
	if _, err := ca.SignMember([]byte("garbage"), "member-1"); err == nil {
		t.Error("garbage was signed")
	}
}

func TestPinnedChainAcceptsOnlyTheCAWithThatHash(t *testing.T) {
	ca := testCA(t)
	serving, err := ca.ServingCertificate([]string{"127.0.0.1", "hub.example"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := joinproto.VerifyPinnedChain(serving.Certificate, ca.Hash()); err != nil {
		t.Fatalf("the right hash was refused: %v", err)
	}
	other := testCA(t)
	_, err = joinproto.VerifyPinnedChain(serving.Certificate, other.Hash())
	if err == nil || !strings.Contains(err.Error(), "does not match --discovery-token-ca-cert-hash") {
		t.Fatalf("a wrong hash was accepted or refused unclearly: %v", err)
	}
	// A leaf from another CA presented with our CA certificate is refused.
	forged, err := other.ServingCertificate([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := joinproto.VerifyPinnedChain([][]byte{forged.Certificate[0], ca.Cert.Raw}, ca.Hash()); err == nil {
		t.Fatal("a leaf not signed by the pinned CA was accepted")
	}
}

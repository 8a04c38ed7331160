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

// Package pki keeps the hub's tunnel certificate authority: it creates the CA on
// first start (a Secret in the hub namespace) unless one is given, issues the
// tunnel server's certificate, and signs member certificates at join. The CA's
// public-key hash is what `agent join --discovery-token-ca-cert-hash` pins.
package pki

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	joinproto "github.com/flotilla-io/flotilla/pkg/join"
)

// CASecretName is the Secret holding the tunnel CA in the hub namespace.
const CASecretName = "flotilla-tunnel-ca"

// MemberOrganization is the subject organization of every member certificate.
const MemberOrganization = "flotilla:members"

// Validity of the certificates the CA issues.
const (
	caValidity     = 10 * 365 * 24 * time.Hour
	clockSkewGrace = 5 * time.Minute
	// DefaultMemberLifetime is how long a member certificate is valid unless
	// configured otherwise; agents renew theirs after two thirds of it.
	DefaultMemberLifetime = 30 * 24 * time.Hour
	// DefaultServingLifetime is how long the tunnel's serving certificate is
	// valid unless configured otherwise; it is reissued after two thirds.
	DefaultServingLifetime = 90 * 24 * time.Hour
)

// skewGrace is how far before its issuance a certificate is valid, for
// clocks that lag: five minutes, or a tenth of a short lifetime.
func skewGrace(lifetime time.Duration) time.Duration {
	return min(clockSkewGrace, lifetime/10)
}

// Serial returns a certificate's serial number as the hub records it
// (hexadecimal).
func Serial(cert *x509.Certificate) string { return cert.SerialNumber.Text(16) }

// RenewAt is when a certificate is due for renewal: after two thirds of its
// lifetime.
func RenewAt(cert *x509.Certificate) time.Time {
	return cert.NotBefore.Add(cert.NotAfter.Sub(cert.NotBefore) * 2 / 3)
}

// CA is a loaded certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	// CertPEM is the CA certificate, PEM-encoded.
	CertPEM []byte
}

// LoadOrCreateCA returns the CA stored in the hub namespace, creating it if there
// is none. Two replicas starting at once converge on whichever Secret was created.
func LoadOrCreateCA(ctx context.Context, c client.Client, namespace string) (*CA, error) {
	key := types.NamespacedName{Namespace: namespace, Name: CASecretName}
	secret := &corev1.Secret{}
	err := c.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		certPEM, keyPEM, genErr := newCA()
		if genErr != nil {
			return nil, genErr
		}
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: CASecretName,
				Labels: map[string]string{"app.kubernetes.io/part-of": "flotilla"}},
			Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
		}
		if err := c.Create(ctx, secret); err != nil {
			if !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("failed to create the tunnel CA secret %s: %w", key, err)
			}
			if err := c.Get(ctx, key, secret); err != nil {
				return nil, fmt.Errorf("failed to read the tunnel CA secret %s: %w", key, err)
			}
		}
	} else if err != nil {
		return nil, fmt.Errorf("failed to read the tunnel CA secret %s: %w", key, err)
	}
	return ParseCA(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey])
}

// ParseCA loads a CA from PEM.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("failed to parse the tunnel CA: %w", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("failed to parse the tunnel CA certificate: %w", err)
	}
	if !cert.IsCA {
		return nil, errors.New("the tunnel CA certificate is not a CA")
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, errors.New("the tunnel CA key cannot sign")
	}
	return &CA{Cert: cert, Key: signer, CertPEM: certPEM}, nil
}

func newCA() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to generate the CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "flotilla-tunnel-ca", Organization: []string{"flotilla"}},
		NotBefore:             now.Add(-clockSkewGrace),
		NotAfter:              now.Add(caValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to self-sign the CA: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	return n
}

// Hash is the CA's public-key hash.
func (ca *CA) Hash() string { return joinproto.PublicKeyHash(ca.Cert) }

// Pool returns a pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// ServingCertificate issues the tunnel server's certificate for the given host
// names and IPs, valid for DefaultServingLifetime. The chain includes the CA
// so that a joining agent, which knows only the CA's hash, can check it.
func (ca *CA) ServingCertificate(hosts []string) (tls.Certificate, error) {
	return ca.IssueServing(hosts, DefaultServingLifetime)
}

// IssueServing issues the tunnel server's certificate for hosts, valid for
// lifetime.
func (ca *CA) IssueServing(hosts []string, lifetime time.Duration) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("failed to generate the serving key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "flotilla-hub"},
		NotBefore:    now.Add(-skewGrace(lifetime)),
		NotAfter:     now.Add(lifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("failed to sign the serving certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.Cert.Raw}, PrivateKey: key, Leaf: leaf}, nil
}

// SignMember signs a member's certificate request for DefaultMemberLifetime.
// See SignMemberFor.
func (ca *CA) SignMember(csrPEM []byte, member string) ([]byte, error) {
	certPEM, _, err := ca.SignMemberFor(csrPEM, member, DefaultMemberLifetime)
	return certPEM, err
}

// SignMemberFor signs a member's certificate request, valid for lifetime. The
// request must be signed by its own key and name the member as its common
// name; the certificate allows client authentication only. It returns the
// certificate as PEM and parsed.
func (ca *CA) SignMemberFor(csrPEM []byte, member string, lifetime time.Duration) ([]byte, *x509.Certificate, error) {
	block, _ := pem.Decode(csrPEM)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, nil, errors.New("the certificate request is not a PEM CERTIFICATE REQUEST")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to parse the certificate request: %w", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, nil, fmt.Errorf("the certificate request's signature is invalid: %w", err)
	}
	if csr.Subject.CommonName != member {
		return nil, nil, fmt.Errorf("the certificate request names %q, not member %q", csr.Subject.CommonName, member)
	}
	if lifetime <= 0 {
		lifetime = DefaultMemberLifetime
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: member, Organization: []string{MemberOrganization}},
		NotBefore:    now.Add(-skewGrace(lifetime)),
		NotAfter:     now.Add(lifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, csr.PublicKey, ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to sign the member certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert, nil
}

// ReplicaOrganization is the subject organization of the certificates hub
// replicas present to each other (the API proxy's forwarding, hub/proxy):
// only the hub signs them, and never for a member (SignMemberFor sets
// MemberOrganization).
const ReplicaOrganization = "flotilla:hub-replicas"

// DefaultReplicaLifetime is how long a replica's peer certificate is valid;
// a replica issues itself a new one after two thirds of it.
const DefaultReplicaLifetime = 24 * time.Hour

// IssueReplica issues hub replica replica's peer certificate, valid for
// lifetime: common name replica, organization ReplicaOrganization, client
// authentication only. The key never leaves the replica's memory.
func (ca *CA) IssueReplica(replica string, lifetime time.Duration) (tls.Certificate, error) {
	if replica == "" {
		return tls.Certificate{}, errors.New("a replica certificate needs the replica's name")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("failed to generate the replica key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: replica, Organization: []string{ReplicaOrganization}},
		NotBefore:    now.Add(-skewGrace(lifetime)),
		NotAfter:     now.Add(lifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("failed to sign the replica certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

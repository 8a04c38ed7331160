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

// Package testpki generates a throwaway certificate authority and the
// server and client certificates that the tunnel's tests and examples use.
// Keys are ECDSA P-256 (fast to generate); nothing is written to disk.
// Functions panic on failure: they are for tests only.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"time"
)

// PKI is a throwaway certificate authority.
type PKI struct {
	// CA is the authority's self-signed certificate.
	CA *x509.Certificate
	// Pool holds CA, for RootCAs and ClientCAs.
	Pool *x509.CertPool

	key *ecdsa.PrivateKey
}

// New creates a certificate authority valid for one day.
func New() *PKI {
	key := newKey()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "flotilla-test-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &PKI{CA: ca, Pool: pool, key: key}
}

// ServerCertificate issues a server certificate for localhost, 127.0.0.1
// and ::1.
func (p *PKI) ServerCertificate() tls.Certificate {
	return p.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "flotilla-hub"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// ClientCertificate issues a client certificate whose CommonName is
// commonName (the member cluster's name).
func (p *PKI) ClientCertificate(commonName string) tls.Certificate {
	return p.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// ServerTLSConfig is a hub configuration: it presents ServerCertificate and
// verifies client certificates signed by the CA when they are given (join
// clients have none).
func (p *PKI) ServerTLSConfig() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{p.ServerCertificate()},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    p.Pool,
		MinVersion:   tls.VersionTLS12,
	}
}

// ClientTLSConfig is an agent configuration that trusts the CA and presents
// a client certificate for commonName (none if commonName is empty).
func (p *PKI) ClientTLSConfig(commonName string) *tls.Config {
	cfg := &tls.Config{RootCAs: p.Pool, MinVersion: tls.VersionTLS12}
	if commonName != "" {
		cfg.Certificates = []tls.Certificate{p.ClientCertificate(commonName)}
	}
	return cfg
}

func (p *PKI) issue(tmpl *x509.Certificate) tls.Certificate {
	key := newKey()
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.CA, &key.PublicKey, p.key)
	if err != nil {
		panic(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

func newKey() *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return key
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}

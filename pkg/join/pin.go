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

package join

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
)

// PublicKeyHash is "sha256:<hex>" of a certificate's SubjectPublicKeyInfo, the
// form `--discovery-token-ca-cert-hash` takes.
func PublicKeyHash(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// VerifyPinnedChain checks, for an agent that knows only the CA's hash, that the
// server presented a chain whose CA has that hash and whose leaf the CA signed.
// It returns the CA certificate it found.
func VerifyPinnedChain(rawCerts [][]byte, pinnedHash string) (*x509.Certificate, error) {
	if len(rawCerts) < 2 {
		return nil, errors.New("the hub did not present its CA certificate")
	}
	certs := make([]*x509.Certificate, 0, len(rawCerts))
	for _, raw := range rawCerts {
		c, err := x509.ParseCertificate(raw)
		if err != nil {
			return nil, fmt.Errorf("the hub presented an unparsable certificate: %w", err)
		}
		certs = append(certs, c)
	}
	var ca *x509.Certificate
	for _, c := range certs[1:] {
		if c.IsCA && PublicKeyHash(c) == pinnedHash {
			ca = c
		}
	}
	if ca == nil {
		return nil, fmt.Errorf("the hub's CA does not match --discovery-token-ca-cert-hash %s (it is %s): check the hash you were given", pinnedHash, PublicKeyHash(certs[len(certs)-1]))
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if _, err := certs[0].Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return nil, fmt.Errorf("the hub's certificate is not signed by the pinned CA: %w", err)
	}
	return ca, nil
}

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
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ServingSecretName is the Secret in the hub namespace that keeps the tunnel's
// serving certificate, so that every replica serves the same one and a restart
// does not mint a new one.
const ServingSecretName = "flotilla-tunnel-serving"

// LoadOrIssueServing returns the tunnel's serving certificate kept in the
// ServingSecretName Secret. It issues a new one (and stores it, replacing the
// old one) when there is none, when the stored one was not signed by ca, does
// not cover hosts, or has passed two thirds of its lifetime. Replicas that
// race converge on whichever write won; a replica whose hosts differ adds
// them to the stored certificate's names.
func LoadOrIssueServing(ctx context.Context, c client.Client, namespace string, ca *CA, hosts []string, lifetime time.Duration, now time.Time) (tls.Certificate, error) {
	key := types.NamespacedName{Namespace: namespace, Name: ServingSecretName}
	for attempt := 0; ; attempt++ {
		secret := &corev1.Secret{}
		err := c.Get(ctx, key, secret)
		exists := err == nil
		if err != nil && !apierrors.IsNotFound(err) {
			return tls.Certificate{}, fmt.Errorf("failed to read the serving certificate secret %s: %w", key, err)
		}
		var names []string
		if exists {
			cert, err := parseServing(secret, ca)
			// A certificate that outlives the configured lifetime (the
			// lifetime was shortened) is reissued too.
			longer := cert.Leaf != nil && cert.Leaf.NotAfter.After(now.Add(lifetime+time.Minute))
			if err == nil && coversAll(cert.Leaf, hosts) && now.Before(RenewAt(cert.Leaf)) && !longer {
				return cert, nil
			}
			if err == nil {
				names = sans(cert.Leaf)
			}
		}
		for _, h := range hosts {
			if h != "" && !slices.Contains(names, h) {
				names = append(names, h)
			}
		}
		cert, err := ca.IssueServing(names, lifetime)
		if err != nil {
			return tls.Certificate{}, err
		}
		data, err := servingData(cert)
		if err != nil {
			return tls.Certificate{}, err
		}
		if exists {
			secret.Data = data
			err = c.Update(ctx, secret)
		} else {
			err = c.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: ServingSecretName,
					Labels: map[string]string{"app.kubernetes.io/part-of": "flotilla"}},
				Type: corev1.SecretTypeTLS,
				Data: data,
			})
		}
		switch {
		case err == nil:
			return cert, nil
		case (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) && attempt < 5:
			continue // another replica wrote first: look at what it wrote
		default:
			return tls.Certificate{}, fmt.Errorf("failed to store the serving certificate in %s: %w", key, err)
		}
	}
}

// parseServing loads the certificate in a serving Secret and checks that ca
// signed it.
func parseServing(secret *corev1.Secret, ca *CA) (tls.Certificate, error) {
	cert, err := tls.X509KeyPair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return tls.Certificate{}, err
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return tls.Certificate{}, err
	}
	cert.Leaf = leaf
	// The chain carries the CA, which a joining agent pins by hash.
	if len(cert.Certificate) < 2 {
		cert.Certificate = append(cert.Certificate, ca.Cert.Raw)
	}
	return cert, nil
}

func servingData(cert tls.Certificate) (map[string][]byte, error) {
	var chain []byte
	for _, der := range cert.Certificate {
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	key, ok := cert.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("unexpected serving key type %T", cert.PrivateKey)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		corev1.TLSCertKey:       chain,
		corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func sans(cert *x509.Certificate) []string {
	out := slices.Clone(cert.DNSNames)
	for _, ip := range cert.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}

func coversAll(cert *x509.Certificate, hosts []string) bool {
	have := sans(cert)
	for _, h := range hosts {
		if h == "" {
			continue
		}
		if ip := net.ParseIP(h); ip != nil {
			h = ip.String()
		}
		if !slices.Contains(have, h) {
			return false
		}
	}
	return true
}

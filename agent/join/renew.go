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
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	joinproto "github.com/flotilla-io/flotilla/pkg/join"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
	"github.com/flotilla-io/flotilla/pkg/version"
)

// Leaf returns the identity's parsed certificate.
func (id *Identity) Leaf() (*x509.Certificate, error) {
	cert, err := parseCertificate(id.Certificate)
	if err != nil {
		return nil, fmt.Errorf("the certificate in Secret %s/%s is unusable (%w): run `agent leave` and join again", Namespace, SecretName, err)
	}
	return cert, nil
}

// RenewAt is when a certificate is due for renewal: after two thirds of its
// lifetime.
func RenewAt(cert *x509.Certificate) time.Time {
	return cert.NotBefore.Add(cert.NotAfter.Sub(cert.NotBefore) * 2 / 3)
}

// Renew asks the hub, over mutual TLS with the current certificate, to sign a
// certificate for a new key generated here, and stores the new identity on
// the member (cfg). The hub keeps accepting the current certificate until the
// agent connects with the new one, so an agent that stops in between loses
// nothing.
func Renew(ctx context.Context, cfg *rest.Config, id *Identity, timeout time.Duration) (*Identity, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	m, err := newMember(cfg)
	if err != nil {
		return nil, err
	}
	tlsCfg, err := id.TLSConfig(tunnel.ALPNJoin)
	if err != nil {
		return nil, err
	}
	hash := joinproto.PublicKeyHash(mustParse(id.CA))
	key, csrPEM, err := newKeyAndCSR(id.Name)
	if err != nil {
		return nil, err
	}
	resp, err := exchange(ctx, id.Hub, timeout, tlsCfg, joinproto.Request{
		Action:       joinproto.ActionRenew,
		ClusterName:  id.Name,
		CSR:          csrPEM,
		AgentVersion: version.Version,
	})
	if err != nil {
		return nil, err
	}
	if resp.Error != "" {
		return nil, fmt.Errorf("the hub refused to renew the certificate: %s", oneLine(resp.Error))
	}
	if err := checkResponse(resp, key, id.Name, hash); err != nil {
		return nil, fmt.Errorf("the hub returned an unusable certificate (%w): this is a bug in the hub; report it", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the private key: %w", err)
	}
	renewed := &Identity{
		Name:        id.Name,
		Hub:         id.Hub,
		Certificate: resp.Certificate,
		PrivateKey:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		CA:          resp.CA,
		HubAsMember: id.HubAsMember,
	}
	s, err := m.client.Secrets(Namespace).Get(ctx, SecretName, metav1.GetOptions{})
	if err != nil {
		return nil, m.error("read the identity Secret", err)
	}
	s.Data = renewed.secret().Data
	if _, err := m.client.Secrets(Namespace).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		return nil, m.error("store the renewed identity in Secret "+Namespace+"/"+SecretName, err)
	}
	return renewed, nil
}

func mustParse(caPEM []byte) *x509.Certificate {
	c, err := parseCertificate(caPEM)
	if err != nil {
		return &x509.Certificate{}
	}
	return c
}

// Renewer keeps the agent's certificate fresh: it renews it after two thirds
// of its lifetime, retrying with backoff, and hands each new identity to
// OnRenewed.
type Renewer struct {
	// Member connects to the member cluster, where the identity is stored.
	Member *rest.Config
	// Timeout bounds each exchange with the hub. Default: DefaultTimeout.
	Timeout time.Duration
	// RetryInterval is the first delay after a failed renewal (doubling up to
	// a tenth of the certificate's remaining life). Default: 10s.
	RetryInterval time.Duration
	// OnRenewed is called with each new identity.
	OnRenewed func(*Identity)
	// Metrics records the certificate's expiry. Default: nil (none).
	Metrics *RenewMetrics
	Log     logr.Logger

	mu      sync.Mutex
	current *Identity
}

// Current returns the identity in use.
func (r *Renewer) Current() *Identity {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current
}

// Run renews id's certificate whenever it is due, until ctx ends.
func (r *Renewer) Run(ctx context.Context, id *Identity) error {
	r.mu.Lock()
	r.current = id
	r.mu.Unlock()
	retry := r.RetryInterval
	if retry <= 0 {
		retry = 10 * time.Second
	}
	delay := retry
	for {
		id := r.Current()
		leaf, err := id.Leaf()
		if err != nil {
			return err
		}
		r.Metrics.setExpiry(leaf.NotAfter)
		wait := time.Until(RenewAt(leaf))
		if wait > 0 {
			r.Log.V(1).Info("Certificate renewal scheduled", "at", RenewAt(leaf), "notAfter", leaf.NotAfter)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
		}
		renewed, err := Renew(ctx, r.Member, id, r.Timeout)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			r.Metrics.renewal("failed")
			r.Log.Error(err, "Failed to renew the member certificate; retrying", "notAfter", leaf.NotAfter, "retryIn", delay)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(delay):
			}
			delay = min(2*delay, max(time.Until(leaf.NotAfter)/10, retry))
			continue
		}
		delay = retry
		r.Metrics.renewal("renewed")
		newLeaf, _ := renewed.Leaf()
		r.Log.Info("Renewed the member certificate", "notAfter", newLeaf.NotAfter)
		r.mu.Lock()
		r.current = renewed
		r.mu.Unlock()
		if r.OnRenewed != nil {
			r.OnRenewed(renewed)
		}
	}
}

// RenewMetrics records the agent's certificate. A nil *RenewMetrics records
// nothing.
type RenewMetrics struct {
	expiry   prometheus.Gauge
	renewals *prometheus.CounterVec
}

// NewRenewMetrics creates and registers on reg:
//
//	flotilla_agent_certificate_expiry_timestamp_seconds  when the member certificate in use expires
//	flotilla_agent_certificate_renewals_total{result}    renewals, renewed or failed
func NewRenewMetrics(reg prometheus.Registerer) (*RenewMetrics, error) {
	m := &RenewMetrics{
		expiry: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "flotilla_agent_certificate_expiry_timestamp_seconds",
			Help: "When the member certificate the agent uses expires (Unix seconds); it is renewed after two thirds of its lifetime.",
		}),
		renewals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_agent_certificate_renewals_total",
			Help: "Member certificate renewals, by result (renewed, failed).",
		}, []string{"result"}),
	}
	for _, c := range []prometheus.Collector{m.expiry, m.renewals} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, fmt.Errorf("failed to register the certificate metrics: %w", err)
			}
		}
	}
	return m, nil
}

func (m *RenewMetrics) setExpiry(t time.Time) {
	if m != nil {
		m.expiry.Set(float64(t.Unix()))
	}
}

func (m *RenewMetrics) renewal(result string) {
	if m != nil {
		m.renewals.WithLabelValues(result).Inc()
	}
}

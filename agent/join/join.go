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
	"bytes"
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
	"net"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	joinproto "github.com/flotilla-io/flotilla/pkg/join"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
	"github.com/flotilla-io/flotilla/pkg/version"
)

// DefaultTimeout bounds the exchange with the hub: connecting, the TLS
// handshake, the request and the answer.
const DefaultTimeout = 30 * time.Second

// Options configure Join.
type Options struct {
	// Hub is the hub's tunnel address, https://HOST:PORT (or HOST:PORT), as
	// `hub token create` printed it. Required.
	Hub string
	// Token is the bootstrap token, <id>.<secret>. Required.
	Token string
	// CACertHash pins the hub's CA: "sha256:<hex>" of its public key.
	// Required.
	CACertHash string
	// Name is the member cluster's name in the fleet. Required.
	Name string
	// Labels become the MemberCluster's labels.
	Labels map[string]string
	// Member connects to the member cluster, where the identity is stored.
	// Required.
	Member *rest.Config
	// Timeout bounds the exchange with the hub. Default: DefaultTimeout.
	Timeout time.Duration
	// HubAsMember joins the hub cluster itself as a member, so that placements
	// can place placements onto it (compound placements). Join checks that the
	// cluster Member connects to is the hub it joins (it publishes the hub's CA
	// hash, CACertHash, in ConfigMap flotilla-system/flotilla-hub-info), and the
	// hub labels and taints the MemberCluster as the hub. Without it, Join
	// refuses to join that hub's own cluster. Default: false.
	HubAsMember bool
}

// Validate checks the options (all but Member) locally, before anything is
// sent anywhere.
func (o *Options) Validate() error {
	if _, err := HubAddress(o.Hub); err != nil {
		return err
	}
	if o.Token == "" {
		return errors.New("--token is required: use the token `hub token create` printed")
	}
	if _, _, err := joinproto.ParseToken(o.Token); err != nil {
		return fmt.Errorf("--token is malformed: %w: copy the whole token that `hub token create` printed", err)
	}
	if err := validateHash(o.CACertHash); err != nil {
		return err
	}
	if o.Name == "" {
		return errors.New("--name is required: the member cluster's name in the fleet, such as member-1")
	}
	if errs := validation.IsDNS1123Label(o.Name); len(errs) > 0 {
		return fmt.Errorf("--name %q is not a valid member name: %s", o.Name, strings.Join(errs, "; "))
	}
	return ValidateLabels(o.Labels)
}

// HubAddress returns HOST:PORT of a --hub value: https://HOST:PORT or
// HOST:PORT.
func HubAddress(hub string) (string, error) {
	if hub == "" {
		return "", errors.New("--hub is required: the hub's tunnel address, https://HOST:PORT, as `hub token create` printed it")
	}
	addr := hub
	if strings.Contains(hub, "://") {
		u, err := url.Parse(hub)
		if err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return "", fmt.Errorf("--hub %q is not https://HOST:PORT", hub)
		}
		addr = u.Host
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" {
		return "", fmt.Errorf("--hub %q is not https://HOST:PORT (the port is required)", hub)
	}
	return addr, nil
}

func validateHash(hash string) error {
	if hash == "" {
		return errors.New("--discovery-token-ca-cert-hash is required: use the sha256:<hex> hash `hub token create` printed")
	}
	hexPart, ok := strings.CutPrefix(hash, "sha256:")
	if !ok || len(hexPart) != 64 || strings.Trim(hexPart, "0123456789abcdef") != "" {
		return fmt.Errorf("--discovery-token-ca-cert-hash %q is not sha256:<64 lowercase hex digits>: use the hash `hub token create` printed", hash)
	}
	return nil
}

// ParseLabels parses a --labels value, k=v,k2=v2, and validates the keys and
// values as Kubernetes labels.
func ParseLabels(s string) (map[string]string, error) {
	labels, err := joinproto.ParseLabels(s)
	if err != nil {
		return nil, fmt.Errorf("--labels: %w: use k=v,k2=v2", err)
	}
	if err := ValidateLabels(labels); err != nil {
		return nil, err
	}
	return labels, nil
}

// ValidateLabels checks that labels are valid Kubernetes labels.
func ValidateLabels(labels map[string]string) error {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("--labels: key %q is not a valid label key: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(labels[k]); len(errs) > 0 {
			return fmt.Errorf("--labels: %s=%q is not a valid label value: %s", k, labels[k], strings.Join(errs, "; "))
		}
	}
	return nil
}

// Join joins the member cluster to the hub and stores its identity on the
// member (see the package documentation). It checks the member first, so
// that a token is not spent on a member where the identity cannot be stored.
func Join(ctx context.Context, opts Options) (*Identity, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Member == nil {
		return nil, errors.New("the member cluster's kubeconfig is required: pass --kubeconfig")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	addr, _ := HubAddress(opts.Hub)

	m, err := newMember(opts.Member)
	if err != nil {
		return nil, err
	}
	switch id, err := m.loadIdentity(ctx); {
	case err == nil:
		return nil, fmt.Errorf("this cluster has already joined the hub at %s as %q: run `agent leave` first (or delete Secret %s/%s to forget that identity)", id.Hub, id.Name, Namespace, SecretName)
	case !errors.Is(err, ErrNotJoined):
		return nil, err
	}
	if err := m.checkHubAsMember(ctx, opts.CACertHash, opts.HubAsMember); err != nil {
		return nil, err
	}
	if err := m.ensureNamespace(ctx); err != nil {
		return nil, err
	}

	key, csrPEM, err := newKeyAndCSR(opts.Name)
	if err != nil {
		return nil, err
	}
	resp, err := exchange(ctx, addr, opts.Timeout, pinnedTLSConfig(addr, opts.CACertHash), joinproto.Request{
		Action:       joinproto.ActionJoin,
		Token:        opts.Token,
		ClusterName:  opts.Name,
		Labels:       opts.Labels,
		CSR:          csrPEM,
		AgentVersion: version.Version,
		HubAsMember:  opts.HubAsMember,
	})
	if err != nil {
		return nil, err
	}
	if resp.Error != "" {
		return nil, fmt.Errorf("the hub refused the join: %s", oneLine(resp.Error))
	}
	if err := checkResponse(resp, key, opts.Name, opts.CACertHash); err != nil {
		return nil, fmt.Errorf("the hub returned an unusable certificate (%w): this is a bug in the hub; report it", err)
	}

	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the private key: %w", err)
	}
	id := &Identity{
		Name:        opts.Name,
		Hub:         addr,
		Certificate: resp.Certificate,
		PrivateKey:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		CA:          resp.CA,
		HubAsMember: opts.HubAsMember,
	}
	if _, err := m.client.Secrets(Namespace).Create(ctx, id.secret(), metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("the hub accepted %q but another join stored an identity on this cluster at the same time: run `agent leave`, then join again with a new token", opts.Name)
		}
		return nil, fmt.Errorf("the hub accepted %q but its identity could not be stored on the member (%w): fix access to the member, create a new token with `hub token create` and join again", opts.Name, m.error("create Secret "+Namespace+"/"+SecretName, err))
	}
	return id, nil
}

// newKeyAndCSR generates the member's key and a certificate request for it.
func newKeyAndCSR(name string) (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to generate the member's key: %w", err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name}}, key)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to create the certificate request: %w", err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), nil
}

// pinnedTLSConfig trusts the hub if it presents a chain whose CA has the
// pinned hash: before join the agent knows nothing else about the hub.
func pinnedTLSConfig(addr, hash string) *tls.Config {
	host, _, _ := net.SplitHostPort(addr)
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		ServerName: host,
		NextProtos: []string{tunnel.ALPNJoin},
		// The usual verification needs a trusted root, which the agent does
		// not have yet; VerifyPeerCertificate checks the chain against the
		// pinned CA hash instead.
		InsecureSkipVerify: true, //nolint:gosec // verified by VerifyPeerCertificate
		VerifyPeerCertificate: func(rawCerts [][]byte, _ [][]*x509.Certificate) error {
			if _, err := joinproto.VerifyPinnedChain(rawCerts, hash); err != nil {
				return &pinError{err: err}
			}
			return nil
		},
	}
}

// pinError is a hub that failed the CA pin; its message is for the user.
type pinError struct{ err error }

func (e *pinError) Error() string { return e.err.Error() }
func (e *pinError) Unwrap() error { return e.err }

// exchange sends one join request to the hub at addr and reads the answer.
func exchange(ctx context.Context, addr string, timeout time.Duration, cfg *tls.Config, req joinproto.Request) (joinproto.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// A hub that closes the connection before the TLS handshake is done is
	// pacing new connections (its admission rate, a fleet joining or
	// reconnecting at once): nothing was sent, so the exchange is tried
	// again after a jittered backoff, within timeout.
	b := backoff.WithContext(&backoff.ExponentialBackOff{
		InitialInterval:     busyRetryInitialInterval,
		RandomizationFactor: 0.5,
		Multiplier:          2,
		MaxInterval:         busyRetryMaxInterval,
		Stop:                backoff.Stop,
		Clock:               backoff.SystemClock,
	}, ctx)
	b.Reset()
	for {
		resp, err := exchangeOnce(ctx, addr, cfg, req)
		var busy *busyError
		if !errors.As(err, &busy) {
			return resp, err
		}
		wait := b.NextBackOff()
		if wait == backoff.Stop {
			return resp, unreachable(addr, busy.err)
		}
		select {
		case <-ctx.Done():
			return resp, unreachable(addr, busy.err)
		case <-time.After(wait):
		}
	}
}

// The backoff of exchange's retries of a busy hub.
const (
	busyRetryInitialInterval = 250 * time.Millisecond
	busyRetryMaxInterval     = 5 * time.Second
)

// busyError is a connection the hub closed before the TLS handshake was done.
type busyError struct{ err error }

func (e *busyError) Error() string { return e.err.Error() }

func exchangeOnce(ctx context.Context, addr string, cfg *tls.Config, req joinproto.Request) (joinproto.Response, error) {
	raw, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return joinproto.Response{}, unreachable(addr, err)
	}
	defer raw.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = raw.SetDeadline(deadline)
	}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		var pin *pinError
		if errors.As(err, &pin) {
			return joinproto.Response{}, pin
		}
		if tunnel.ClosedBeforeHandshake(err) {
			return joinproto.Response{}, &busyError{err: err}
		}
		var alert tls.AlertError
		if errors.As(err, &alert) || strings.Contains(err.Error(), "tls:") {
			return joinproto.Response{}, fmt.Errorf("the TLS handshake with %s failed (%w): check that --hub is the hub's tunnel port", addr, err)
		}
		return joinproto.Response{}, unreachable(addr, err)
	}
	if p := conn.ConnectionState().NegotiatedProtocol; p != cfg.NextProtos[0] {
		return joinproto.Response{}, fmt.Errorf("the server at %s does not speak %s (it negotiated %q): check that --hub is the hub's tunnel port and that hub and agent versions match", addr, cfg.NextProtos[0], p)
	}
	if err := joinproto.Write(conn, req); err != nil {
		return joinproto.Response{}, unreachable(addr, err)
	}
	var resp joinproto.Response
	if err := joinproto.Read(conn, &resp); err != nil {
		return joinproto.Response{}, fmt.Errorf("the hub at %s closed the connection without an answer (%w): check the hub's log", addr, err)
	}
	return resp, nil
}

// unreachableError is a hub that could not be reached.
type unreachableError struct {
	addr string
	err  error
}

func unreachable(addr string, err error) error { return &unreachableError{addr: addr, err: err} }

func (e *unreachableError) Error() string {
	return fmt.Sprintf("cannot reach the hub at %s: %v: check --hub and that the hub's tunnel port is reachable from here", e.addr, e.err)
}

func (e *unreachableError) Unwrap() error { return e.err }

// checkResponse checks that the hub signed our key for our name with the
// pinned CA.
func checkResponse(resp joinproto.Response, key *ecdsa.PrivateKey, name, hash string) error {
	cert, err := parseCertificate(resp.Certificate)
	if err != nil {
		return fmt.Errorf("certificate: %w", err)
	}
	ca, err := parseCertificate(resp.CA)
	if err != nil {
		return fmt.Errorf("CA: %w", err)
	}
	if got := joinproto.PublicKeyHash(ca); got != hash {
		return fmt.Errorf("the CA's hash is %s, not the pinned %s", got, hash)
	}
	if cert.Subject.CommonName != name {
		return fmt.Errorf("the certificate is for %q, not %q", cert.Subject.CommonName, name)
	}
	pub, ok := cert.PublicKey.(*ecdsa.PublicKey)
	if !ok || !pub.Equal(&key.PublicKey) {
		return errors.New("the certificate is not for the key this agent generated")
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return fmt.Errorf("the certificate does not verify against the CA: %w", err)
	}
	return nil
}

func parseCertificate(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(bytes.TrimSpace(data))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("not a PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// oneLine joins the lines of a message.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

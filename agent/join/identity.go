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
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	joinproto "github.com/flotilla-io/flotilla/pkg/join"
)

// Where the identity lives on the member cluster.
const (
	// Namespace is the agent's namespace on the member cluster.
	Namespace = "flotilla-system"
	// SecretName is the Secret in Namespace that holds the agent's identity.
	SecretName = "flotilla-agent-identity"
)

// Keys of the identity Secret's data.
const (
	// KeyCertificate holds the member's client certificate (PEM), signed by
	// the hub's CA; its CommonName is the member's name.
	KeyCertificate = corev1.TLSCertKey // "tls.crt"
	// KeyPrivateKey holds the member's private key (PEM), generated on the
	// member at join.
	KeyPrivateKey = corev1.TLSPrivateKeyKey // "tls.key"
	// KeyCA holds the hub's tunnel CA certificate (PEM).
	KeyCA = "ca.crt"
	// KeyHub holds the hub's tunnel address, HOST:PORT.
	KeyHub = "hub"
	// KeyName holds the member's name.
	KeyName = "name"
	// KeyHubAsMember holds "true" when the cluster is the hub itself, joined with
	// `agent join --hub-as-member`; it is absent otherwise.
	KeyHubAsMember = "hubAsMember"
)

// ErrNotJoined is returned by LoadIdentity when the member has no identity.
var ErrNotJoined = errors.New("this cluster has not joined a hub: run `agent join` first")

// Identity is what the agent needs to connect to the hub.
type Identity struct {
	// Name is the member cluster's name, the CommonName of Certificate.
	Name string
	// Hub is the hub's tunnel address, HOST:PORT.
	Hub string
	// Certificate is the member's client certificate (PEM).
	Certificate []byte
	// PrivateKey is the member's private key (PEM).
	PrivateKey []byte
	// CA is the hub's tunnel CA certificate (PEM).
	CA []byte
	// HubAsMember is set when the cluster is the hub itself, joined as a member
	// (`agent join --hub-as-member`); the agent then never takes over objects no
	// Work applied (apply.Options.OnHub).
	HubAsMember bool
}

// TLSConfig returns the mutual-TLS configuration for connecting to the hub
// with the given ALPN protocol: the member's certificate, the hub's CA as the
// only root, and the hub's host as the server name.
func (id *Identity) TLSConfig(alpn string) (*tls.Config, error) {
	pair, err := tls.X509KeyPair(id.Certificate, id.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("the identity in Secret %s/%s is unusable (%w): run `agent leave` and join again", Namespace, SecretName, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(id.CA) {
		return nil, fmt.Errorf("the hub CA in Secret %s/%s is unusable: run `agent leave` and join again", Namespace, SecretName)
	}
	host, _, err := net.SplitHostPort(id.Hub)
	if err != nil {
		return nil, fmt.Errorf("the hub address %q in Secret %s/%s is not HOST:PORT: run `agent leave` and join again", id.Hub, Namespace, SecretName)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{pair},
		RootCAs:      pool,
		ServerName:   host,
		NextProtos:   []string{alpn},
	}, nil
}

// LoadIdentity reads the identity from the member cluster that cfg connects
// to. It returns an error matching ErrNotJoined when there is none.
func LoadIdentity(ctx context.Context, cfg *rest.Config) (*Identity, error) {
	m, err := newMember(cfg)
	if err != nil {
		return nil, err
	}
	return m.loadIdentity(ctx)
}

func (m *member) loadIdentity(ctx context.Context) (*Identity, error) {
	s, err := m.client.Secrets(Namespace).Get(ctx, SecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, ErrNotJoined
	}
	if err != nil {
		return nil, m.error("read the identity Secret", err)
	}
	id := &Identity{
		Name:        string(s.Data[KeyName]),
		Hub:         string(s.Data[KeyHub]),
		Certificate: s.Data[KeyCertificate],
		PrivateKey:  s.Data[KeyPrivateKey],
		CA:          s.Data[KeyCA],
		HubAsMember: string(s.Data[KeyHubAsMember]) == "true",
	}
	if id.Name == "" || id.Hub == "" || len(id.Certificate) == 0 || len(id.PrivateKey) == 0 || len(id.CA) == 0 {
		return nil, fmt.Errorf("the identity Secret %s/%s lacks some of %s, %s, %s, %s, %s: delete it and join again",
			Namespace, SecretName, KeyName, KeyHub, KeyCertificate, KeyPrivateKey, KeyCA)
	}
	return id, nil
}

// secret returns the identity Secret that stores id.
func (id *Identity) secret() *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: Namespace,
			Name:      SecretName,
			Labels: map[string]string{
				"app.kubernetes.io/part-of":    "flotilla",
				"app.kubernetes.io/managed-by": "flotilla-agent",
			},
		},
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{
			KeyCertificate: id.Certificate,
			KeyPrivateKey:  id.PrivateKey,
			KeyCA:          id.CA,
			KeyHub:         []byte(id.Hub),
			KeyName:        []byte(id.Name),
		},
	}
	if id.HubAsMember {
		s.Data[KeyHubAsMember] = []byte("true")
	}
	return s
}

// member is the member cluster's API server.
type member struct {
	// client is the core/v1 client only: the full clientset would link the
	// clients of every API group into the agent.
	client corev1client.CoreV1Interface
	host   string
}

// memberTimeout bounds each request to the member's API server, so that an
// unreachable one fails in seconds rather than hanging.
const memberTimeout = 15 * time.Second

func newMember(cfg *rest.Config) (*member, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout == 0 {
		cfg.Timeout = memberTimeout
	}
	c, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("the member kubeconfig is unusable (%w): check --kubeconfig", err)
	}
	return &member{client: c, host: cfg.Host}, nil
}

// error turns a failed request to the member's API server into a one-line
// error that says what to do.
func (m *member) error(what string, err error) error {
	var status apierrors.APIStatus
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return fmt.Errorf("the member cluster's API server at %s did not let us %s (%w): use a --kubeconfig that may manage Namespaces and Secrets", m.host, what, err)
	case errors.As(err, &status):
		return fmt.Errorf("failed to %s on the member cluster at %s: %w", what, m.host, err)
	default:
		return fmt.Errorf("cannot reach the member cluster's API server at %s: %w: check --kubeconfig and that the cluster is up", m.host, err)
	}
}

// ensureNamespace creates the agent's namespace on the member if it is missing.
func (m *member) ensureNamespace(ctx context.Context) error {
	_, err := m.client.Namespaces().Get(ctx, Namespace, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return m.error("read namespace "+Namespace, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "flotilla"}}}
	if _, err := m.client.Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return m.error("create namespace "+Namespace, err)
	}
	return nil
}

// deleteIdentity deletes the identity Secret; a missing one is not an error.
func (m *member) deleteIdentity(ctx context.Context) error {
	err := m.client.Secrets(Namespace).Delete(ctx, SecretName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return m.error("delete the identity Secret "+Namespace+"/"+SecretName, err)
	}
	return nil
}

// checkHubAsMember checks that the member is the hub whose CA has caHash exactly
// when hubAsMember is set. A hub publishes its CA's hash in ConfigMap
// flotilla-system/flotilla-hub-info; a member that publishes another hash is
// another fleet's hub, an ordinary member of this one.
func (m *member) checkHubAsMember(ctx context.Context, caHash string, hubAsMember bool) error {
	info, err := m.client.ConfigMaps(Namespace).Get(ctx, joinproto.HubInfoConfigMap, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		info = nil
	case err != nil && hubAsMember:
		return m.error("read ConfigMap "+Namespace+"/"+joinproto.HubInfoConfigMap+" (to check that this cluster is the hub)", err)
	case err != nil:
		// A member that may not read it is not told apart; it joins as any member.
		return nil
	}
	isHub := info != nil && info.Data[joinproto.HubInfoKeyCAHash] == caHash
	switch {
	case hubAsMember && !isHub:
		return fmt.Errorf("--hub-as-member: the cluster at %s is not the hub you join (it has no ConfigMap %s/%s with %s %s): pass the hub cluster's own kubeconfig, or join without --hub-as-member",
			m.host, Namespace, joinproto.HubInfoConfigMap, joinproto.HubInfoKeyCAHash, caHash)
	case !hubAsMember && isHub:
		return fmt.Errorf("the cluster at %s is the hub you join: join it with --hub-as-member (it is then labelled and tainted as the hub, and its agent never takes over the hub's own objects)", m.host)
	}
	return nil
}

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

package proxy

// Forwarding between hub replicas. kube-apiserver sends a proxied request
// to any replica behind Service flotilla-hub, but only the replica that
// holds a member's tunnel session can open a stream to it. A replica that
// gets a request for a member whose session another replica holds
//
//  1. authenticates it (front proxy headers) and authorizes it
//     (SubjectAccessReview), and holds the user's limits, as for a member
//     of its own;
//  2. finds the owner: the MemberCluster's status.agentSession.hubReplica,
//     and that replica's Lease (hub/replica), live, with the address of its
//     API proxy in annotation flotilla.io/proxy-address;
//  3. forwards the request to the owner's API proxy over TLS, verifying that
//     the owner's certificate is the hub's serving certificate and
//     presenting its own peer certificate (issued by the hub's CA, hub/pki,
//     organization flotilla:hub-replicas), with the user in the forwarded
//     identity headers (HeaderForwardedUser, ...).
//
// The owner believes forwarded identity headers only on a connection whose
// client certificate the hub's CA issued to a replica; anyone else's are
// removed and never reach a member. It forwards no further (no loops), holds
// the member's in-flight slot and guards the stream (idle, duration) as for
// a request of its own, and does not count the user again: the user's limits
// are held where the request entered, the member's where its tunnel is.
// A request whose owner is gone (no session, its Lease expired or deleted,
// no published address, unreachable) gets 503 with the reason at once.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/proxy"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pki"
	"github.com/flotilla-io/flotilla/hub/replica"
	"github.com/flotilla-io/flotilla/hub/tunnelserver"
	"github.com/flotilla-io/flotilla/pkg/apiproxy"
)

// The headers in which a replica forwards the user it authenticated to the
// replica that holds the member's session. Believed only from a peer
// replica (peerReplica); removed from every other request.
const (
	HeaderForwardedUser  = "X-Flotilla-Forwarded-User"
	HeaderForwardedUID   = "X-Flotilla-Forwarded-Uid"
	HeaderForwardedGroup = "X-Flotilla-Forwarded-Group"
	// HeaderForwardedExtraPrefix starts one header per extra field, its key
	// path-escaped, as kube-apiserver's X-Remote-Extra-.
	HeaderForwardedExtraPrefix = "X-Flotilla-Forwarded-Extra-"
	// headerForwardedPrefix starts every forwarded identity header.
	headerForwardedPrefix = "X-Flotilla-Forwarded-"
)

// servingCommonName is the common name of the hub's serving certificate
// (pki.CA.IssueServing): what a peer must present as a server.
const servingCommonName = "flotilla-hub"

// peerDialTimeout bounds the connection to a peer replica: a replica that is
// gone without its Lease having expired yet is reported, not waited for.
const peerDialTimeout = 3 * time.Second

// peerHostSuffix makes a peer replica's name the host of the URLs the
// Handler sends to it; the address comes with the request (peerAddressKey).
const peerHostSuffix = ".replica.flotilla.invalid"

// PeerOptions let a replica forward requests for members whose sessions
// other replicas hold. Forwarding is off without Directory.
type PeerOptions struct {
	// Replica is this replica's name (MemberCluster status.agentSession.hubReplica).
	Replica string
	// Directory finds which replica holds a member and where it serves.
	Directory Directory
	// CA returns the hub's CA (tunnelserver.Server.CA), nil until loaded:
	// it issues this replica's peer certificate and verifies peers.
	CA func() *pki.CA
}

// Directory tells which replica holds a member's session, and where that
// replica serves the API proxy.
type Directory interface {
	// Owner is the replica that holds member's session, "" when none does.
	Owner(ctx context.Context, member string) (string, error)
	// Peer is what replica's Lease says of it.
	Peer(ctx context.Context, replica string) (PeerState, error)
}

// PeerState is what a replica's Lease says of it.
type PeerState struct {
	// Found: the replica has a Lease.
	Found bool
	// ExpiredAt is when its Lease ran out; zero while it is live.
	ExpiredAt time.Time
	// Address is where it serves the API proxy; "" when it publishes none.
	Address string
}

// LeaseDirectory is a Directory over MemberClusters and the replicas'
// Leases (hub/replica).
type LeaseDirectory struct {
	// Members reads MemberClusters (the manager's cache).
	Members client.Reader
	// Leases reads the replicas' Leases in Namespace (uncached: one Get for a
	// forwarded request).
	Leases    client.Reader
	Namespace string
}

// Owner implements Directory.
func (d *LeaseDirectory) Owner(ctx context.Context, member string) (string, error) {
	mc := &clusterv1beta1.MemberCluster{}
	if err := d.Members.Get(ctx, types.NamespacedName{Name: member}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("failed to read MemberCluster %s: %w", member, err)
	}
	if as := mc.Status.AgentSession; as != nil {
		return as.HubReplica, nil
	}
	return "", nil
}

// Peer implements Directory.
func (d *LeaseDirectory) Peer(ctx context.Context, name string) (PeerState, error) {
	l := &coordinationv1.Lease{}
	if err := d.Leases.Get(ctx, types.NamespacedName{Namespace: d.Namespace, Name: replica.LeaseName(name)}, l); err != nil {
		if apierrors.IsNotFound(err) {
			return PeerState{}, nil
		}
		return PeerState{}, fmt.Errorf("failed to read the Lease of hub replica %s: %w", name, err)
	}
	st := PeerState{Found: true, Address: l.Annotations[replica.AnnotationProxyAddress]}
	if now := time.Now(); replica.Expired(l, now) {
		st.ExpiredAt = now
		if l.Spec.RenewTime != nil && l.Spec.LeaseDurationSeconds != nil {
			st.ExpiredAt = l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)
		}
	}
	return st, nil
}

// routeFacts are what decide where a request for a member goes.
type routeFacts struct {
	// Self is this replica; Member the member asked for.
	Self, Member string
	// Local is why this replica cannot open a stream to the member
	// (CheckAPIProxy), nil when it can.
	Local error
	// ForwardedBy is the peer replica that forwarded the request, "" when it
	// came from kube-apiserver.
	ForwardedBy string
	// Forwarding: this replica forwards (PeerOptions.Directory set).
	Forwarding bool
	// Owner is the replica holding the member's session ("" for none), or
	// OwnerErr why it could not be read. Read only when needed (needsOwner).
	Owner    string
	OwnerErr error
	// Peer is the owner's Lease, or PeerErr why it could not be read.
	Peer    PeerState
	PeerErr error
}

// route is where a request goes: here (zero), to a peer (Peer and Address),
// or nowhere (Refusal, the 503's message).
type route struct {
	Peer, Address string
	Refusal       string
}

// needsOwner reports whether the route depends on who owns the member: the
// member is not connected here, and the request may be forwarded.
func needsOwner(f routeFacts) bool {
	return f.Forwarding && f.ForwardedBy == "" && errors.Is(f.Local, tunnelserver.ErrNotConnected)
}

// decideRoute decides where a request for a member goes.
func decideRoute(f routeFacts) route {
	switch {
	case !errors.Is(f.Local, tunnelserver.ErrNotConnected):
		// Connected here, or here with an answer of its own (no API proxy).
		return route{}
	case f.ForwardedBy != "":
		return route{Refusal: fmt.Sprintf("member %q is no longer connected to hub replica %s, to which hub replica %s forwarded the request: its session moved or ended; try again",
			f.Member, f.Self, f.ForwardedBy)}
	case !f.Forwarding:
		return route{Refusal: rootCause(f.Local)}
	case f.OwnerErr != nil:
		return route{Refusal: fmt.Sprintf("member %q is not connected to hub replica %s, and the replica that holds it cannot be told: %v", f.Member, f.Self, f.OwnerErr)}
	case f.Owner == "":
		return route{Refusal: fmt.Sprintf("member %q has no agent connected to any hub replica", f.Member)}
	case f.Owner == f.Self:
		return route{Refusal: rootCause(f.Local) + " (its session here just ended; the agent reconnects)"}
	case f.PeerErr != nil:
		return route{Refusal: fmt.Sprintf("member %q is connected to hub replica %s, which cannot be looked up: %v", f.Member, f.Owner, f.PeerErr)}
	case !f.Peer.Found:
		return route{Refusal: fmt.Sprintf("member %q is recorded on hub replica %s, which is gone (it has no Lease); its agent reconnects to another replica", f.Member, f.Owner)}
	case !f.Peer.ExpiredAt.IsZero():
		return route{Refusal: fmt.Sprintf("member %q is recorded on hub replica %s, whose Lease expired at %s; its agent reconnects to another replica",
			f.Member, f.Owner, f.Peer.ExpiredAt.UTC().Format(time.RFC3339))}
	case f.Peer.Address == "":
		return route{Refusal: fmt.Sprintf("member %q is connected to hub replica %s, which publishes no API proxy address (its --proxy-bind-address is 0, or it runs an older hub)", f.Member, f.Owner)}
	}
	return route{Peer: f.Owner, Address: f.Peer.Address}
}

// route loads the facts and decides where a request for member goes.
func (h *Handler) route(ctx context.Context, member, forwardedBy string) route {
	f := routeFacts{Self: h.opts.Peers.Replica, Member: member, ForwardedBy: forwardedBy, Forwarding: h.opts.Peers.Directory != nil}
	if c, ok := h.opts.Dialer.(apiProxyChecker); ok {
		f.Local = c.CheckAPIProxy(member)
	}
	if needsOwner(f) {
		f.Owner, f.OwnerErr = h.opts.Peers.Directory.Owner(ctx, member)
		if f.OwnerErr == nil && f.Owner != "" && f.Owner != f.Self {
			f.Peer, f.PeerErr = h.opts.Peers.Directory.Peer(ctx, f.Owner)
		}
	}
	return decideRoute(f)
}

// peerReplica returns the replica that sent r when r came over a connection
// whose client certificate the hub's CA issued to a hub replica.
func peerReplica(r *http.Request, ca *x509.CertPool) (string, bool) {
	if ca == nil || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return "", false
	}
	leaf := r.TLS.PeerCertificates[0]
	if !slices.Equal(leaf.Subject.Organization, []string{pki.ReplicaOrganization}) || leaf.Subject.CommonName == "" {
		return "", false
	}
	intermediates := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		intermediates.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return "", false
	}
	return leaf.Subject.CommonName, true
}

// forwardedIdentity is the user a peer replica forwarded.
func forwardedIdentity(h http.Header) (Identity, error) {
	id := Identity{User: h.Get(HeaderForwardedUser), UID: h.Get(HeaderForwardedUID), Groups: h.Values(HeaderForwardedGroup)}
	if id.User == "" {
		return Identity{}, fmt.Errorf("the hub replica forwarded no user (%s)", HeaderForwardedUser)
	}
	for name, values := range h {
		rest, ok := cutPrefixFold(name, HeaderForwardedExtraPrefix)
		if !ok || rest == "" {
			continue
		}
		key, err := url.PathUnescape(rest)
		if err != nil {
			key = rest
		}
		if id.Extra == nil {
			id.Extra = map[string][]string{}
		}
		id.Extra[strings.ToLower(key)] = append(id.Extra[strings.ToLower(key)], values...)
	}
	return id, nil
}

// setForwardedIdentity puts id in h's forwarded identity headers.
func setForwardedIdentity(h http.Header, id Identity) {
	h.Set(HeaderForwardedUser, id.User)
	if id.UID != "" {
		h.Set(HeaderForwardedUID, id.UID)
	}
	for _, g := range id.Groups {
		h.Add(HeaderForwardedGroup, g)
	}
	for k, vs := range id.Extra {
		for _, v := range vs {
			h.Add(HeaderForwardedExtraPrefix+url.PathEscape(k), v)
		}
	}
}

// peerCredentials issues this replica's peer certificate and verifies peers,
// both from the hub's CA.
type peerCredentials struct {
	replica string
	ca      func() *pki.CA

	mu   sync.Mutex
	cert *tls.Certificate
}

// pool is the hub's CA as a pool, nil until it is loaded.
func (p *peerCredentials) pool() *x509.CertPool {
	if p == nil || p.ca == nil {
		return nil
	}
	if ca := p.ca(); ca != nil {
		return ca.Pool()
	}
	return nil
}

// certificate is this replica's peer certificate, issued again after two
// thirds of its lifetime.
func (p *peerCredentials) certificate() (*tls.Certificate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cert != nil && time.Now().Before(pki.RenewAt(p.cert.Leaf)) {
		return p.cert, nil
	}
	ca := p.ca()
	if ca == nil {
		return nil, errors.New("the hub's CA is not loaded yet")
	}
	c, err := ca.IssueReplica(p.replica, pki.DefaultReplicaLifetime)
	if err != nil {
		return nil, err
	}
	p.cert = &c
	return p.cert, nil
}

// tlsConfig is the client side of a connection to a peer: it presents this
// replica's certificate and accepts only the hub's serving certificate. The
// peer is dialed at its Pod IP, which the serving certificate need not name:
// the chain and the common name are checked instead of the host.
func (p *peerCredentials) tlsConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return p.certificate()
		},
		InsecureSkipVerify: true, //nolint:gosec // VerifyConnection checks the chain against the hub's CA
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the peer replica presented no certificate")
			}
			pool := p.pool()
			if pool == nil {
				return errors.New("the hub's CA is not loaded yet")
			}
			leaf := cs.PeerCertificates[0]
			intermediates := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				intermediates.AddCert(c)
			}
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				return fmt.Errorf("the peer's certificate is not the hub's: %w", err)
			}
			if leaf.Subject.CommonName != servingCommonName {
				return fmt.Errorf("the peer's certificate is for %q, not the hub's serving certificate %q", leaf.Subject.CommonName, servingCommonName)
			}
			return nil
		},
	}
}

// peerAddressKey carries, in a request's context, the address of the peer
// replica the peer transport dials for it.
type peerAddressKey struct{}

// errPeerUnreachable: the replica that holds a member cannot be reached.
var errPeerUnreachable = errors.New("hub replica unreachable")

// peerUnreachable says which replica could not be reached, where, and why, in
// one line: it matches errPeerUnreachable but hides the network error inside
// from rootCause, which would keep only that.
type peerUnreachable struct{ msg string }

func (e *peerUnreachable) Error() string        { return e.msg }
func (e *peerUnreachable) Is(target error) bool { return target == errPeerUnreachable }

// newPeerTransport returns the transport of requests forwarded to peers.
func newPeerTransport(creds *peerCredentials) *http.Transport {
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: peerDialTimeout}, Config: creds.tlsConfig()}
	return &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			peer, ok := strings.CutSuffix(host, peerHostSuffix)
			if !ok {
				return nil, fmt.Errorf("proxy: %q is not a peer replica's address", addr)
			}
			address, _ := ctx.Value(peerAddressKey{}).(string)
			if address == "" {
				return nil, &peerUnreachable{msg: fmt.Sprintf("no address for hub replica %s", peer)}
			}
			dctx, cancel := context.WithTimeout(ctx, peerDialTimeout)
			defer cancel()
			conn, err := dialer.DialContext(dctx, "tcp", address)
			if err != nil {
				return nil, &peerUnreachable{msg: fmt.Sprintf("hub replica %s, which holds the member's session, cannot be reached at %s: %v", peer, address, err)}
			}
			return conn, nil
		},
		DisableCompression:  true,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
	}
}

// forwardToPeer sends r, from id, to the peer replica of rt, which holds
// member's session, as a request for path rest on member.
func (h *Handler) forwardToPeer(w http.ResponseWriter, r *http.Request, id Identity, member, rest string, rt route) {
	path := apiproxy.PathPrefix(member) + rest
	out := r.Clone(context.WithValue(r.Context(), peerAddressKey{}, rt.Address))
	out.URL = &url.URL{Path: path, RawQuery: r.URL.RawQuery}
	out.RequestURI = ""
	stripIdentity(out.Header, h.opts.Authenticator)
	setForwardedIdentity(out.Header, id)
	location := &url.URL{Scheme: "http", Host: rt.Peer + peerHostSuffix, Path: path, RawQuery: r.URL.RawQuery}
	up := proxy.NewUpgradeAwareHandler(location, h.peerTransport, false, false, responder{member: member})
	up.UseLocationHost = true
	up.RejectForwardingRedirects = true
	up.ServeHTTP(w, out)
}

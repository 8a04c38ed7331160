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

package tunnelserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/hashicorp/yamux"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/join"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/pki"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
	"github.com/flotilla-io/flotilla/pkg/version"
)

// InfoConfigMapName is the ConfigMap in the hub namespace where the hub publishes
// what a join command needs: the address agents dial and the CA's hash.
const InfoConfigMapName = "flotilla-hub-info"

// Keys of the info ConfigMap.
const (
	InfoKeyAddress = "address"
	InfoKeyCAHash  = "caCertHash"
	InfoKeyCA      = "ca.crt"
)

// Options configures the tunnel server. Defaults are filled in by New.
type Options struct {
	// Namespace is the hub namespace (CA, tokens, info ConfigMap).
	Namespace string
	// ReplicaName identifies this hub replica in MemberCluster status.
	ReplicaName string
	// BindAddress is where agents connect.
	BindAddress string
	// AdvertiseAddress is the host:port agents are told to dial. Default: BindAddress.
	AdvertiseAddress string
	// ProxyAdvertiseAddress is the host:port at which this replica's API
	// proxy takes requests other replicas forward; published on the
	// replica's Lease (replica.AnnotationProxyAddress). Default: none.
	ProxyAdvertiseAddress string
	// ExtraSANs are more host names or IPs for the serving certificate.
	ExtraSANs []string
	// HeartbeatMisses is how many heartbeat periods without a heartbeat make a
	// member disconnected. Default: 3.
	HeartbeatMisses int
	// DisconnectGrace is how long after a member's session ended (other than
	// by missing heartbeats) the replica waits for the agent to reconnect
	// before it records the member disconnected (disconnectAfter). 0: no
	// grace.
	DisconnectGrace time.Duration
	// MemberCertificateLifetime is how long the member certificates the join
	// endpoint signs are valid. Default: pki.DefaultMemberLifetime (30 days).
	MemberCertificateLifetime time.Duration
	// ServingCertificateLifetime is how long the tunnel's serving certificate
	// is valid; it is reissued after two thirds. Default:
	// pki.DefaultServingLifetime (90 days).
	ServingCertificateLifetime time.Duration
	// JoinAttemptsPerMinute rate-limits join requests per source address.
	// Default: join.DefaultAttemptsPerMinute.
	JoinAttemptsPerMinute int
	// HeartbeatRate is how many heartbeats per second a session may send
	// (burst: 10); faster ones are read later. Default: 1.
	HeartbeatRate float64
	// StatusRate is how many status reports per second a session may send
	// (burst: 10 seconds' worth); faster ones are read later. Default: 50.
	StatusRate float64
	// ReplicaLeaseDuration is how long this replica's Lease lasts; it is
	// renewed every third of it. Default: 15s.
	ReplicaLeaseDuration time.Duration
	// MaxConnections and MaxHandshakes cap the tunnel port's connections (see
	// tunnel.Server). Defaults: tunnel.DefaultMaxConnections and
	// tunnel.DefaultMaxHandshakes.
	MaxConnections, MaxHandshakes int
	// Admission paces new connections (see tunnel.Server). Nil: no pacing.
	Admission *rate.Limiter
	// Upsync takes the agents' Upsync messages; nil drops them.
	Upsync UpsyncHandler
	// LeaseClient renews this replica's Lease: a client on a connection of
	// its own, so that a renewal never waits behind the status writes of
	// thousands of members connecting. Nil: the direct client.
	LeaseClient client.Client
	// Version is the hub's build version: announced to agents, and checked
	// against theirs (VERSIONING.md). Default: version.Version.
	Version string
}

// UpsyncHandler takes the Upsync messages of the agent of a member cluster.
type UpsyncHandler interface {
	Handle(ctx context.Context, cluster string, m tunnel.Upsync) error
}

// Server is the hub's tunnel endpoint; a manager Runnable in every replica.
type Server struct {
	opts Options
	// reader reads Works and MemberClusters from the manager's cache.
	reader client.Reader
	// direct reads and writes without a cache (Secrets, fresh MemberClusters).
	direct client.Client
	cache  ctrlcache.Cache
	log    logr.Logger
	// recorder reports connections and disconnections as Events on the MemberCluster.
	recorder events.EventRecorder

	metrics  *metrics
	tmetrics *tunnel.Metrics

	mu       sync.Mutex
	sessions map[string]*memberSession
	ready    atomic.Bool
	// standing is lost while this replica could not renew its Lease in time
	// (replica.Standing): it then serves no agents.
	standing standing
	// life is Start's context: sessions that end once it is done end because
	// this replica is stopping, and write no disconnection (serveSession).
	// Its Err is set before any session sees it done, so the check is exact.
	life context.Context
	now  func() time.Time

	// serving is the tunnel's current serving certificate.
	serving atomic.Pointer[tls.Certificate]
	// caPEM is the tunnel CA, PEM-encoded, once Start has loaded it.
	caPEM atomic.Pointer[[]byte]
	// ca is the tunnel CA once Start has loaded it.
	ca atomic.Pointer[pki.CA]
}

var _ interface{ NeedLeaderElection() bool } = (*Server)(nil)

// New creates a tunnel server. reader is the manager's (cached) client, direct an
// uncached client, c the manager's cache, reg the metrics registry.
func New(opts Options, reader client.Reader, direct client.Client, c ctrlcache.Cache, reg prometheus.Registerer, recorder events.EventRecorder, log logr.Logger) (*Server, error) {
	if opts.AdvertiseAddress == "" {
		opts.AdvertiseAddress = opts.BindAddress
	}
	if opts.HeartbeatMisses == 0 {
		opts.HeartbeatMisses = 3
	}
	if opts.MemberCertificateLifetime == 0 {
		opts.MemberCertificateLifetime = pki.DefaultMemberLifetime
	}
	if opts.ServingCertificateLifetime == 0 {
		opts.ServingCertificateLifetime = pki.DefaultServingLifetime
	}
	if opts.HeartbeatRate == 0 {
		opts.HeartbeatRate = 1
	}
	if opts.StatusRate == 0 {
		opts.StatusRate = 50
	}
	if opts.ReplicaLeaseDuration == 0 {
		opts.ReplicaLeaseDuration = DefaultReplicaLeaseDuration
	}
	if opts.Version == "" {
		opts.Version = version.Version
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("failed to register tunnel server metrics: %w", err)
	}
	tm, err := tunnel.NewMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("failed to register tunnel metrics: %w", err)
	}
	return &Server{opts: opts, reader: reader, direct: direct, cache: c, log: log, recorder: recorder,
		metrics: m, tmetrics: tm, sessions: map[string]*memberSession{}, now: time.Now}, nil
}

// NeedLeaderElection is false: every replica serves tunnels.
func (s *Server) NeedLeaderElection() bool { return false }

// ReadyCheck fails until the server listens.
func (s *Server) ReadyCheck(_ *http.Request) error {
	if !s.ready.Load() {
		return errors.New("the tunnel server is not listening yet")
	}
	if s.standing.regained() != nil {
		return errors.New(s.leaseLostMessage())
	}
	return nil
}

// Start loads the CA, publishes the join information and serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	ca, err := pki.LoadOrCreateCA(ctx, s.direct, s.opts.Namespace)
	if err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(s.opts.AdvertiseAddress)
	if err != nil {
		return fmt.Errorf("invalid advertise address %q: %w", s.opts.AdvertiseAddress, err)
	}
	bindHost, _, _ := net.SplitHostPort(s.opts.BindAddress)
	sans := append([]string{host, bindHost, "localhost", "127.0.0.1",
		"flotilla-hub." + s.opts.Namespace + ".svc", "flotilla-hub." + s.opts.Namespace + ".svc.cluster.local"}, s.opts.ExtraSANs...)
	if err := s.loadServing(ctx, ca, sans); err != nil {
		return err
	}
	s.caPEM.Store(&ca.CertPEM)
	s.ca.Store(ca)
	s.metrics.certificateExpiry.WithLabelValues(certificateCA).Set(float64(ca.Cert.NotAfter.Unix()))
	if err := s.publishInfo(ctx, ca); err != nil {
		return err
	}
	lease, err := s.startReplicaLease(ctx)
	if err != nil {
		return err
	}
	defer lease.release()
	go s.rotateServing(ctx, ca, sans)
	mcInf, err := s.cache.GetInformer(ctx, &clusterv1beta1.MemberCluster{})
	if err != nil {
		return fmt.Errorf("failed to watch MemberClusters: %w", err)
	}
	if _, err := mcInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { s.memberChanged(obj) },
		DeleteFunc: s.memberDeleted,
	}); err != nil {
		return fmt.Errorf("failed to watch MemberClusters: %w", err)
	}
	inf, err := s.cache.GetInformer(ctx, &placementv1beta1.Work{})
	if err != nil {
		return fmt.Errorf("failed to watch Work: %w", err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    s.workChanged,
		UpdateFunc: func(_, obj any) { s.workChanged(obj) },
		DeleteFunc: s.workChanged,
	}); err != nil {
		return fmt.Errorf("failed to watch Work: %w", err)
	}
	l, err := net.Listen("tcp", s.opts.BindAddress)
	if err != nil {
		return fmt.Errorf("failed to listen on %s for agents: %w", s.opts.BindAddress, err)
	}
	joinHandler := &join.Handler{Client: client.WithFieldOwner(s.direct, pipeline.ManagerJoin), Namespace: s.opts.Namespace, CA: ca, Log: s.log.WithName("join"),
		MemberLifetime: s.opts.MemberCertificateLifetime, AttemptsPerMinute: s.opts.JoinAttemptsPerMinute}
	srv := &tunnel.Server{
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return s.serving.Load(), nil },
			// Joining agents have no certificate yet; tunnels must present
			// one in the TLS handshake (tunnel.Server requires it).
			ClientAuth: tls.VerifyClientCertIfGiven,
			ClientCAs:  ca.Pool(),
			NextProtos: []string{tunnel.ALPNTunnel, tunnel.ALPNJoin},
		},
		MaxConnections: s.opts.MaxConnections,
		MaxHandshakes:  s.opts.MaxHandshakes,
		Admission:      s.opts.Admission,
		Tunnel: tunnel.ServerOptions{
			Authorize:    s.authorize,
			ReplicaName:  s.opts.ReplicaName,
			Version:      s.opts.Version,
			Capabilities: Capabilities,
			Logger:       s.log.WithName("session"),
			Metrics:      s.tmetrics,
			YamuxConfig:  hubYamuxConfig(),
		},
		OnTunnel: s.serveSession,
		OnJoin:   joinHandler.ServeConn,
		Logger:   s.log,
	}
	s.life = ctx
	s.ready.Store(true)
	s.log.Info("serving agents", "address", l.Addr().String(), "advertise", s.opts.AdvertiseAddress, "caCertHash", ca.Hash())
	err = srv.Serve(ctx, l)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// publishInfo writes the ConfigMap `hub token create` reads.
func (s *Server) publishInfo(ctx context.Context, ca *pki.CA) error {
	want := map[string]string{
		InfoKeyAddress: s.opts.AdvertiseAddress,
		InfoKeyCAHash:  ca.Hash(),
		InfoKeyCA:      string(ca.CertPEM),
	}
	cm := &corev1.ConfigMap{}
	err := s.direct.Get(ctx, types.NamespacedName{Namespace: s.opts.Namespace, Name: InfoConfigMapName}, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.opts.Namespace, Name: InfoConfigMapName,
			Labels: map[string]string{"app.kubernetes.io/part-of": "flotilla"}}, Data: want}
		if err := s.direct.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("failed to publish the hub info: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("failed to read the hub info: %w", err)
	}
	cm.Data = want
	if err := s.direct.Update(ctx, cm); err != nil {
		return fmt.Errorf("failed to publish the hub info: %w", err)
	}
	return nil
}

// authorize accepts a tunnel whose certificate names the member it says it is
// and whose MemberCluster exists and is not leaving.
func (s *Server) authorize(ctx context.Context, hello tunnel.Hello, peer *x509.Certificate) (tunnel.HelloAck, error) {
	// A refusal is an error: its text is what the agent is told.
	refuse := func(reason string) (tunnel.HelloAck, error) {
		s.metrics.sessionsRejected.Inc()
		return tunnel.HelloAck{}, errors.New(reason)
	}
	if s.standing.regained() != nil {
		return refuse(s.leaseLostMessage())
	}
	if peer == nil {
		return refuse("no client certificate: run `agent join` to get one, then `agent run`")
	}
	if err := tunnel.VerifyPeerIdentity(hello, peer); err != nil {
		return refuse(err.Error())
	}
	serial := pki.Serial(peer)
	mc := &clusterv1beta1.MemberCluster{}
	if err := s.direct.Get(ctx, types.NamespacedName{Name: hello.ClusterName}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return refuse(fmt.Sprintf("member %q is not in the fleet (it left or was deleted): join again with a new token", hello.ClusterName))
		}
		return tunnel.HelloAck{}, fmt.Errorf("failed to read MemberCluster %s: %w", hello.ClusterName, err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return refuse(fmt.Sprintf("member %q is leaving the fleet: wait until it is gone, then join it again with a token from `hub token create --name %s`", hello.ClusterName, hello.ClusterName))
	}
	switch {
	case mc.Status.Identity == nil:
		return refuse(fmt.Sprintf("the hub has no certificate on record for member %q: re-join it with a token from `hub token create --name %s --rejoin`", hello.ClusterName, hello.ClusterName))
	case !mc.Status.Identity.Accepts(serial):
		return refuse(fmt.Sprintf("this certificate (serial %s) is no longer accepted for member %q: the member re-joined or renewed its certificate since; if this cluster is %s, re-join it with a token from `hub token create --name %s --rejoin`", serial, hello.ClusterName, hello.ClusterName, hello.ClusterName))
	}
	// The version is checked once the agent proved who it is, so that only a
	// member's own agent can mark the member refused.
	if reason := s.checkVersionSkew(ctx, hello); reason != "" {
		s.metrics.sessionsRejected.Inc()
		return tunnel.HelloAck{}, errors.New(reason)
	}
	period := mc.Spec.HeartbeatPeriodSeconds
	if period <= 0 {
		period = int32(tunnel.DefaultHeartbeatPeriod / time.Second)
	}
	return tunnel.HelloAck{Accepted: true, HeartbeatPeriodSeconds: period, HubReplica: s.opts.ReplicaName}, nil
}

// workChanged tells the session of the Work's member, if this replica holds it.
func (s *Server) workChanged(obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	w, ok := obj.(*placementv1beta1.Work)
	if !ok {
		return
	}
	member, ok := memberOf(w.Namespace)
	if !ok {
		return
	}
	s.mu.Lock()
	ms := s.sessions[member]
	s.mu.Unlock()
	if ms != nil {
		ms.markChanged(w.Name)
	}
}

func memberOf(namespace string) (string, bool) {
	p := clusterv1beta1.MemberNamespacePrefix
	if len(namespace) <= len(p) || namespace[:len(p)] != p {
		return "", false
	}
	return namespace[len(p):], true
}

// memberChanged ends this replica's session of a member whose certificate is
// no longer accepted (it re-joined or renewed) or whose session another
// replica holds now.
func (s *Server) memberChanged(obj any) {
	mc, ok := obj.(*clusterv1beta1.MemberCluster)
	if !ok {
		return
	}
	s.mu.Lock()
	ms := s.sessions[mc.Name]
	s.mu.Unlock()
	if ms == nil {
		return
	}
	if !mc.Status.Identity.Accepts(ms.serial) {
		ms.end("the member's certificate is no longer accepted (the member re-joined or renewed its certificate)")
		return
	}
	if as := mc.Status.AgentSession; as != nil && as.Generation > ms.generation && as.HubReplica != s.opts.ReplicaName {
		ms.end(fmt.Sprintf("the member has a newer session on hub replica %s", as.HubReplica))
	}
}

// memberDeleted ends the session of a member that is gone.
func (s *Server) memberDeleted(obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	mc, ok := obj.(*clusterv1beta1.MemberCluster)
	if !ok {
		return
	}
	s.mu.Lock()
	ms := s.sessions[mc.Name]
	s.mu.Unlock()
	if ms != nil {
		ms.end("the member was deleted from the fleet")
	}
}

// loadServing loads (or issues) the serving certificate and serves it.
func (s *Server) loadServing(ctx context.Context, ca *pki.CA, sans []string) error {
	cert, err := pki.LoadOrIssueServing(ctx, s.direct, s.opts.Namespace, ca, sans, s.opts.ServingCertificateLifetime, s.now())
	if err != nil {
		return err
	}
	if old := s.serving.Load(); old == nil || !old.Leaf.Equal(cert.Leaf) {
		s.log.Info("serving the tunnel certificate", "serial", pki.Serial(cert.Leaf), "notAfter", cert.Leaf.NotAfter)
	}
	s.serving.Store(&cert)
	s.metrics.certificateExpiry.WithLabelValues(certificateServing).Set(float64(cert.Leaf.NotAfter.Unix()))
	return nil
}

// rotateServing reloads the serving certificate from its Secret (reissuing it
// after two thirds of its lifetime) every tenth of its lifetime, at most
// every minute and at least every second, until ctx ends.
func (s *Server) rotateServing(ctx context.Context, ca *pki.CA, sans []string) {
	every := min(max(s.opts.ServingCertificateLifetime/10, time.Second), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.loadServing(ctx, ca, sans); err != nil && ctx.Err() == nil {
			s.log.Error(err, "failed to renew the tunnel's serving certificate; serving the current one")
		}
	}
}

// Connected reports whether this replica holds a live session for member.
func (s *Server) Connected(member string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sessions[member]
	return ok
}

// GetCertificate returns the tunnel's current serving certificate, valid for
// the flotilla-hub Service (the API proxy serves it too); an error until
// Start has loaded it.
func (s *Server) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.serving.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("the hub's serving certificate is not loaded yet")
}

// CABundle returns the tunnel CA, PEM-encoded, which signed the serving
// certificate; nil until Start has loaded it.
func (s *Server) CABundle() []byte {
	if p := s.caPEM.Load(); p != nil {
		return *p
	}
	return nil
}

// CA returns the tunnel CA, which also issues the certificates hub replicas
// present to each other; nil until Start has loaded it.
func (s *Server) CA() *pki.CA { return s.ca.Load() }

// ErrNotConnected: the member has no live session on this replica.
var ErrNotConnected = errors.New("member not connected")

// OpenAPIProxy opens an API proxy stream to member's agent (pkg/tunnel,
// spec.md §4a): an HTTP/1.1 connection to the member's API server. It fails
// at once, matching ErrNotConnected, when this replica holds no session for
// member, and matching tunnel.ErrAPIProxyUnavailable when the session did
// not negotiate the API proxy; each error is one line saying why.
func (s *Server) OpenAPIProxy(ctx context.Context, member string) (net.Conn, error) {
	ms, err := s.apiProxySession(member)
	if err != nil {
		return nil, err
	}
	return ms.sess.OpenAPIProxy(ctx)
}

// CheckAPIProxy returns the error OpenAPIProxy would return at once for
// member (not connected, or no API proxy), without opening anything.
func (s *Server) CheckAPIProxy(member string) error {
	ms, err := s.apiProxySession(member)
	if err != nil {
		return err
	}
	if !ms.sess.HasCapability(tunnel.CapabilityAPIProxy) {
		// OpenAPIProxy says why in its own words.
		_, err := ms.sess.OpenAPIProxy(context.Background())
		return err
	}
	return nil
}

func (s *Server) apiProxySession(member string) (*memberSession, error) {
	s.mu.Lock()
	ms := s.sessions[member]
	s.mu.Unlock()
	if ms == nil {
		return nil, fmt.Errorf("%w: member %q has no agent connected to hub replica %s", ErrNotConnected, member, s.opts.ReplicaName)
	}
	return ms, nil
}

// hubYamuxConfig is the tunnel's yamux configuration on the hub: the default
// without yamux's keepalive, whose goroutine and timer a session would cost
// every member. The hub needs no pings of its own: the watchdog ends a session
// whose heartbeats stop, and agents keep their own keepalive (which the hub
// answers).
func hubYamuxConfig() *yamux.Config {
	cfg := tunnel.DefaultYamuxConfig()
	cfg.EnableKeepAlive = false
	return cfg
}

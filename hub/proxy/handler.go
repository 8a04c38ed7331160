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

// Package proxy is the hub's end of the API proxy: an aggregated API that
// kube-apiserver forwards to the hub (APIService v1beta1.proxy.flotilla.io),
// serving
//
//	/apis/proxy.flotilla.io/v1beta1/memberclusters/<member>/proxy/<path>
//
// as <path> on member <member>'s API server, reached over the member's
// tunnel (pkg/tunnel, spec.md §4a). For each request the Handler
//
//  1. learns the hub user from kube-apiserver's front proxy headers
//     (RequestHeader; 401 without them);
//  2. authorizes it with a SubjectAccessReview for memberclusters/proxy
//     named after the member, the verb after the HTTP method (VerbFor; 403
//     with the review's reason when denied);
//  3. holds one of the user's and one of the member's in-flight slots and a
//     token of the user's rate (429 when it cannot), refuses a body larger
//     than the cap (413), and bounds the request with a timeout unless it
//     is long-running (watch, logs -f, exec, attach, port-forward), which
//     is bounded by its own limits instead (limits.go);
//  4. opens an API proxy stream to the member's agent (502 when its agent
//     does not serve the proxy, in one line, at once) and forwards the
//     request with the user in the identity headers of pkg/apiproxy,
//     removing every credential and identity header the client sent; or,
//     when another hub replica holds the member's session, forwards the
//     request to that replica over mutually authenticated TLS (peers.go),
//     and answers 503 with the reason at once when no replica can take it.
//
// The agent impersonates the user on the member (agent/proxy), whose RBAC
// decides. Every request is logged (user, member, verb, path, status, and
// the replica it was forwarded to or by) and counted in
// flotilla_proxy_requests_total{member,verb,code,forwarded_to,forwarded_by}.
package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/flotilla-io/flotilla/hub/tunnelserver"
	"github.com/flotilla-io/flotilla/pkg/apiproxy"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// Defaults of Options.
const (
	// DefaultMaxInflightPerMember bounds the requests in flight to one
	// member, long-running ones (watches, exec sessions) included.
	DefaultMaxInflightPerMember = 100
	// DefaultRequestTimeout bounds a request that is not long-running, as
	// kube-apiserver's --request-timeout does.
	DefaultRequestTimeout = 60 * time.Second
)

// Dialer opens API proxy streams: tunnelserver.Server.
type Dialer interface {
	// OpenAPIProxy opens a connection to member's API server through its
	// agent; errors match tunnelserver.ErrNotConnected or
	// tunnel.ErrAPIProxyUnavailable when that is why.
	OpenAPIProxy(ctx context.Context, member string) (net.Conn, error)
}

// apiProxyChecker is a Dialer that can tell at once why it could not open
// a stream to a member (tunnelserver.Server).
type apiProxyChecker interface {
	CheckAPIProxy(member string) error
}

// Options configure a Handler.
type Options struct {
	// Dialer reaches members. Required.
	Dialer Dialer
	// Authenticator tells who sent a request. Required (RequestHeader).
	Authenticator Authenticator
	// Authorizer decides whether they may. Required (SubjectAccessReviewer).
	Authorizer Authorizer
	// MaxInflightPerMember bounds the requests in flight to one member;
	// more are refused with 429. Default DefaultMaxInflightPerMember.
	MaxInflightPerMember int
	// RequestTimeout bounds a request that is not long-running; one that
	// takes longer ends with 504. Default DefaultRequestTimeout.
	RequestTimeout time.Duration
	// MaxInflightPerUser bounds one user's requests in flight over every
	// member; more get 429. Default DefaultMaxInflightPerUser.
	MaxInflightPerUser int
	// UserQPS and UserBurst bound how fast one user sends; faster requests
	// get 429. Defaults DefaultUserQPS and DefaultUserBurst.
	UserQPS   float64
	UserBurst int
	// MaxRequestBytes bounds a request body (413). Default
	// DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// MaxResponseBytes bounds the response to a request that is not
	// long-running; a larger one is cut. Default DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// StreamIdleTimeout ends an exec, attach or port-forward that carried
	// nothing for this long. Default DefaultStreamIdleTimeout.
	StreamIdleTimeout time.Duration
	// MaxStreamDuration ends a long-running request after this long.
	// Default DefaultMaxStreamDuration.
	MaxStreamDuration time.Duration
	// Registerer receives flotilla_proxy_requests_total. Default: none.
	Registerer prometheus.Registerer
	// Logger receives a line per request. Default: none.
	Logger logr.Logger
	// Plan serves the plan API (plan.go) on the same listener. Default:
	// none (a plan request gets 503).
	Plan PlanOptions
	// Peers forward requests for members whose sessions other hub replicas
	// hold (peers.go). Default: none (such a request gets 503).
	Peers PeerOptions
}

// Handler serves the hub's aggregated API.
type Handler struct {
	opts      Options
	transport *http.Transport
	// peerTransport and peers forward to other replicas (nil without
	// Options.Peers.CA).
	peerTransport *http.Transport
	peers         *peerCredentials
	requests      *prometheus.CounterVec
	cuts          *prometheus.CounterVec
	users         *userLimits

	mu       sync.Mutex
	inflight map[string]int
}

// memberHostSuffix makes a member's name the host of the URLs the Handler
// sends to it; the transport's dialer turns the host back into the member.
const memberHostSuffix = ".member.flotilla.invalid"

// New returns a Handler.
func New(opts Options) (*Handler, error) {
	if opts.Dialer == nil || opts.Authenticator == nil || opts.Authorizer == nil {
		return nil, errors.New("proxy: Options.Dialer, Authenticator and Authorizer are required")
	}
	if opts.Plan.Planner != nil && opts.Plan.Authorizer == nil {
		return nil, errors.New("proxy: Options.Plan.Authorizer is required with a Planner")
	}
	setDefault(&opts.MaxInflightPerMember, DefaultMaxInflightPerMember)
	setDefault(&opts.RequestTimeout, DefaultRequestTimeout)
	setDefault(&opts.MaxInflightPerUser, DefaultMaxInflightPerUser)
	setDefault(&opts.UserQPS, DefaultUserQPS)
	setDefault(&opts.UserBurst, DefaultUserBurst)
	setDefault(&opts.MaxRequestBytes, DefaultMaxRequestBytes)
	setDefault(&opts.MaxResponseBytes, DefaultMaxResponseBytes)
	setDefault(&opts.StreamIdleTimeout, DefaultStreamIdleTimeout)
	setDefault(&opts.MaxStreamDuration, DefaultMaxStreamDuration)
	h := &Handler{opts: opts, inflight: map[string]int{}, users: newUserLimits(opts.MaxInflightPerUser, opts.UserQPS, opts.UserBurst)}
	h.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_proxy_requests_total",
		Help: "Requests the hub's API proxy answered, by member, RBAC verb, HTTP status code, and the hub replica this one forwarded the request to or was forwarded it by (empty when neither).",
	}, []string{"member", "verb", "code", "forwarded_to", "forwarded_by"})
	h.cuts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_proxy_cut_total",
		Help: "Proxied streams and responses the hub cut, by member and reason: idle (--proxy-stream-idle-timeout), duration (--proxy-max-stream-duration), response-bytes (--proxy-max-response-bytes).",
	}, []string{"member", "reason"})
	if opts.Registerer != nil {
		for _, c := range []prometheus.Collector{h.requests, h.cuts} {
			if err := opts.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("failed to register the API proxy's metrics: %w", err)
			}
		}
	}
	if opts.Peers.CA != nil {
		if opts.Peers.Replica == "" {
			return nil, errors.New("proxy: Options.Peers.Replica is required with Peers.CA")
		}
		h.peers = &peerCredentials{replica: opts.Peers.Replica, ca: opts.Peers.CA}
		h.peerTransport = newPeerTransport(h.peers)
	} else if opts.Peers.Directory != nil {
		return nil, errors.New("proxy: Options.Peers.CA is required with Peers.Directory")
	}
	h.transport = &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			member, ok := strings.CutSuffix(host, memberHostSuffix)
			if !ok {
				return nil, fmt.Errorf("proxy: %q is not a member's address", addr)
			}
			conn, err := opts.Dialer.OpenAPIProxy(ctx, member)
			if err != nil {
				return nil, err
			}
			if s := streamLimitsFrom(ctx); s != nil {
				return guard(conn, s), nil
			}
			return conn, nil
		},
		// The stream is the connection; kube-apiserver and the member API
		// server compress what they compress.
		DisableCompression:  true,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
	}
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if serveDiscovery(w, r, h.opts.Plan.Planner != nil) {
		return
	}
	if h.servePlan(w, r) {
		return
	}
	member, rest, ok := apiproxy.ParsePath(r.URL.Path)
	if !ok {
		apiproxy.WriteStatus(w, apierrors.NewNotFound(apiproxy.GroupResource(), r.URL.Path))
		return
	}
	verb := VerbFor(r.Method)
	rec := &recorder{ResponseWriter: w}
	start := time.Now()
	var id Identity
	var rt route
	forwardedBy, fromPeer := peerReplica(r, h.peers.pool())
	defer func() {
		code := rec.code
		if code == 0 {
			code = http.StatusOK
		}
		h.requests.WithLabelValues(member, verb, strconv.Itoa(code), rt.Peer, forwardedBy).Inc()
		kv := []any{"user", id.User, "member", member, "verb", verb, "method", r.Method, "path", rest, "status", code, "duration", time.Since(start).Round(time.Millisecond)}
		if rt.Peer != "" {
			kv = append(kv, "forwardedTo", rt.Peer)
		}
		if fromPeer {
			kv = append(kv, "forwardedBy", forwardedBy)
		}
		h.opts.Logger.Info("Proxied", kv...)
	}()
	if verb == "" {
		apiproxy.WriteStatus(rec, apierrors.NewMethodNotSupported(apiproxy.GroupResource(), r.Method))
		return
	}
	if fromPeer {
		// The replica that forwarded the request authenticated and
		// authorized it, and holds the user's limits.
		var err error
		if id, err = forwardedIdentity(r.Header); err != nil {
			apiproxy.WriteStatus(rec, apierrors.NewUnauthorized(err.Error()))
			return
		}
	} else {
		release, ok := h.admit(rec, r, &id, member, verb)
		if !ok {
			return
		}
		defer release()
	}
	// Upgrade requests lose the dialer's error on their way (the upgrade
	// path reports it as text): say why a member cannot be reached first.
	rt = h.route(r.Context(), member, forwardedBy)
	if rt.Refusal != "" {
		apiproxy.WriteStatus(rec, apierrors.NewServiceUnavailable(rt.Refusal))
		return
	}
	if rt.Peer == "" {
		if c, ok := h.opts.Dialer.(apiProxyChecker); ok {
			if err := c.CheckAPIProxy(member); err != nil {
				responder{member: member}.Error(rec, r, err)
				return
			}
		}
		// The member's slots are held where its tunnel is.
		release, ok := h.acquire(member)
		if !ok {
			apiproxy.WriteStatus(rec, apierrors.NewTooManyRequests(fmt.Sprintf("member %q has %d proxied requests in flight, the most the hub allows (--proxy-max-inflight-per-member)", member, h.opts.MaxInflightPerMember), 1))
			return
		}
		defer release()
	}
	if r.ContentLength > h.opts.MaxRequestBytes {
		apiproxy.WriteStatus(rec, tooLarge(r.ContentLength, h.opts.MaxRequestBytes))
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(rec, r.Body, h.opts.MaxRequestBytes)
	}
	ctx := r.Context()
	var cancel context.CancelFunc
	switch {
	case httpstream.IsUpgradeRequest(r) && rt.Peer != "":
		// The owner guards the stream it opens to the member.
	case httpstream.IsUpgradeRequest(r):
		ctx = withStreamLimits(ctx, &streamLimits{idle: h.opts.StreamIdleTimeout, lifetime: h.opts.MaxStreamDuration, cut: func(reason string) {
			h.cut(id, member, rest, reason)
		}})
	case longRunning(r):
		ctx, cancel = context.WithTimeout(ctx, h.opts.MaxStreamDuration)
		defer cancel()
	default:
		ctx, cancel = context.WithTimeout(ctx, h.opts.RequestTimeout)
		defer cancel()
		rec.limit = h.opts.MaxResponseBytes
	}
	// The reverse proxy aborts a response cut for its size with a panic
	// (http.ErrAbortHandler): count it on the way out.
	defer func() {
		if rec.overLimit {
			h.cut(id, member, rest, cutResponseBytes)
		}
	}()
	if rt.Peer != "" {
		h.forwardToPeer(rec, r.WithContext(ctx), id, member, rest, rt)
		return
	}
	h.forward(rec, r.WithContext(ctx), id, member, rest)
}

// admit authenticates r into id, holds the user's limits and authorizes the
// request; it answers r itself and returns false when any refuses.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, id *Identity, member, verb string) (release func(), ok bool) {
	var err error
	if *id, err = h.opts.Authenticator.Authenticate(r); err != nil {
		apiproxy.WriteStatus(w, apierrors.NewUnauthorized(err.Error()))
		return nil, false
	}
	// The user's limits come before the review, so that a user who sends
	// too much does not send the hub's API server reviews either.
	releaseUser, refusal := h.users.admit(id.User, time.Now())
	if refusal != nil {
		apiproxy.WriteStatus(w, refusal)
		return nil, false
	}
	decision, err := h.opts.Authorizer.Authorize(r.Context(), *id, member, verb)
	if err != nil {
		releaseUser()
		apiproxy.WriteStatus(w, apierrors.NewInternalError(err))
		return nil, false
	}
	if !decision.Allowed {
		releaseUser()
		apiproxy.WriteStatus(w, forbidden(*id, member, verb, decision.Reason))
		return nil, false
	}
	return releaseUser, true
}

// cut records that a stream or response to member was cut, and why.
func (h *Handler) cut(id Identity, member, path, reason string) {
	h.cuts.WithLabelValues(member, reason).Inc()
	h.opts.Logger.Info("Proxied stream cut", "user", id.User, "member", member, "path", path, "reason", reason)
}

// tooLarge is the 413 of a request body over the cap.
func tooLarge(size, limit int64) *apierrors.StatusError {
	what := "the request body"
	if size > 0 {
		what = fmt.Sprintf("the request body (%d bytes)", size)
	}
	return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("%s is larger than the %d bytes the hub's API proxy accepts (--proxy-max-request-bytes)", what, limit))
}

// setDefault sets *v to def when it is not positive.
func setDefault[T int | int64 | float64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// forbidden is the 403 of a denied review, with its reason.
func forbidden(id Identity, member, verb, reason string) *apierrors.StatusError {
	msg := fmt.Sprintf("User %q cannot %s resource %q in API group %q", id.User, verb, apiproxy.Resource+"/"+apiproxy.Subresource, apiproxy.Group)
	if reason != "" {
		msg += ": " + reason
	}
	return apierrors.NewForbidden(apiproxy.GroupResource(), member, errors.New(msg))
}

// forward sends r to member as id, with path rest.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, id Identity, member, rest string) {
	out := r.Clone(r.Context())
	out.URL = &url.URL{Path: rest, RawQuery: r.URL.RawQuery}
	out.RequestURI = ""
	stripIdentity(out.Header, h.opts.Authenticator)
	out.Header.Set(apiproxy.HeaderUser, id.User)
	for _, g := range id.Groups {
		out.Header.Add(apiproxy.HeaderGroup, g)
	}
	// The whole location, query included: upgrade requests (exec) are sent
	// to it as it is.
	location := &url.URL{Scheme: "http", Host: member + memberHostSuffix, Path: rest, RawQuery: r.URL.RawQuery}
	up := proxy.NewUpgradeAwareHandler(location, h.transport, false, false, responder{member: member})
	up.UseLocationHost = true
	up.RejectForwardingRedirects = true
	up.ServeHTTP(w, out)
}

// stripIdentity removes every header carrying credentials or an identity:
// Authorization, Proxy-Authorization, Impersonate-*, the hub's identity
// headers, the forwarded identity headers of peer replicas, and those the
// authenticator reads (X-Remote-*).
func stripIdentity(h http.Header, a Authenticator) {
	names := []string{"Authorization", "Proxy-Authorization", apiproxy.HeaderUser, apiproxy.HeaderGroup}
	prefixes := []string{"Impersonate-", "X-Remote-", headerForwardedPrefix}
	if rh, ok := a.(interface{ identityHeaders() ([]string, []string) }); ok {
		n, p := rh.identityHeaders()
		names, prefixes = append(names, n...), append(prefixes, p...)
	}
	for name := range h {
		for _, n := range names {
			if strings.EqualFold(name, n) {
				delete(h, name)
			}
		}
		for _, p := range prefixes {
			if _, ok := cutPrefixFold(name, p); ok {
				delete(h, name)
			}
		}
	}
}

// longRunning reports whether r may run for long: a watch, a followed log,
// an upgrade (exec, attach, port-forward). Those get no request timeout.
func longRunning(r *http.Request) bool {
	if httpstream.IsUpgradeRequest(r) {
		return true
	}
	q := r.URL.Query()
	for _, k := range []string{"watch", "follow"} {
		if v := q.Get(k); v == "true" || v == "1" {
			return true
		}
	}
	return strings.Contains(r.URL.Path, "/watch/")
}

// acquire takes one of member's in-flight slots.
func (h *Handler) acquire(member string) (release func(), ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.inflight[member] >= h.opts.MaxInflightPerMember {
		return nil, false
	}
	h.inflight[member]++
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.inflight[member]--; h.inflight[member] <= 0 {
			delete(h.inflight, member)
		}
	}, true
}

// responder turns a failure to reach the member into a Status with one line
// saying why.
type responder struct{ member string }

func (r responder) Error(w http.ResponseWriter, req *http.Request, err error) {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		apiproxy.WriteStatus(w, tooLarge(0, tooBig.Limit))
	case errors.Is(err, tunnelserver.ErrNotConnected), errors.Is(err, errPeerUnreachable):
		apiproxy.WriteStatus(w, apierrors.NewServiceUnavailable(rootCause(err)))
	case errors.Is(err, tunnel.ErrAPIProxyUnavailable):
		apiproxy.WriteStatus(w, &apierrors.StatusError{ErrStatus: metav1.Status{Code: http.StatusBadGateway, Reason: statusReasonBadGateway, Message: rootCause(err)}})
	case errors.Is(req.Context().Err(), context.DeadlineExceeded):
		apiproxy.WriteStatus(w, apierrors.NewTimeoutError(fmt.Sprintf("the request to member %q did not finish in time (--proxy-request-timeout)", r.member), 0))
	default:
		apiproxy.WriteStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("failed to reach member %q through its tunnel: %v", r.member, err)))
	}
}

// statusReasonBadGateway is the reason of the HTTP Status (not a condition
// reason) a member whose agent does not serve the proxy gets.
const statusReasonBadGateway metav1.StatusReason = "BadGateway"

// rootCause is err's text without the layers net/http adds.
func rootCause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		err = oe.Err
	}
	return err.Error()
}

// recorder remembers the status code written, and lets UpgradeAwareHandler
// hijack and flush.
type recorder struct {
	http.ResponseWriter
	code int
	// limit, when positive, caps the bytes written; overLimit says a write
	// went past it.
	limit, written int64
	overLimit      bool
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	if r.limit > 0 {
		if r.written+int64(len(b)) > r.limit {
			r.overLimit = true
			return 0, errResponseTooLarge
		}
		r.written += int64(len(b))
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := r.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the response writer cannot be hijacked")
	}
	if r.code == 0 {
		r.code = http.StatusSwitchingProtocols
	}
	return hj.Hijack()
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

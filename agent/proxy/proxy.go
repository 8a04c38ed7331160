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

// Package proxy is the agent's end of the hub's API proxy: it serves the API
// proxy streams the hub opens over the tunnel (pkg/tunnel, spec.md §4a),
// each an HTTP/1.1 connection, and forwards every request to the member's
// own API server with the agent's credentials, impersonating the hub user
// under a prefix (pkg/apiproxy), so that the member's RBAC decides what a
// hub user may do there.
//
// The hub user arrives in the identity headers of pkg/apiproxy, which the
// hub sets. They are trusted only because the stream came over the tunnel,
// whose hub the agent authenticated; whatever a client put in Authorization
// or Impersonate-* headers is removed. Upgrades (exec, attach,
// port-forward, SPDY or WebSocket) and streamed responses (watch, logs -f)
// pass through k8s.io/apimachinery's UpgradeAwareHandler.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/flotilla-io/flotilla/pkg/apiproxy"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// Options configure a Handler.
type Options struct {
	// IdentityPrefix prefixes the hub user and each of its groups when the
	// agent impersonates them. Default apiproxy.DefaultIdentityPrefix
	// ("flotilla:hub:"); see apiproxy.ValidateIdentityPrefix.
	IdentityPrefix string
	// Logger receives a line per request at V(1). Default: none.
	Logger logr.Logger
}

// Handler forwards the hub's proxied requests to the member's API server.
type Handler struct {
	prefix string
	log    logr.Logger
	// location is the member API server's URL.
	location  *url.URL
	transport http.RoundTripper
	upgrade   proxy.UpgradeRequestRoundTripper
}

// New returns a Handler that reaches the API server of cfg with cfg's
// credentials (which must allow impersonating users and groups).
func New(cfg *rest.Config, opts Options) (*Handler, error) {
	if opts.IdentityPrefix == "" {
		opts.IdentityPrefix = apiproxy.DefaultIdentityPrefix
	}
	if err := apiproxy.ValidateIdentityPrefix(opts.IdentityPrefix); err != nil {
		return nil, fmt.Errorf("invalid identity prefix: %w", err)
	}
	if cfg.Impersonate.UserName != "" || len(cfg.Impersonate.Groups) > 0 {
		return nil, errors.New("the member's rest.Config impersonates already: the API proxy impersonates hub users itself")
	}
	host := cfg.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	location, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("failed to parse the member API server's address %q: %w", cfg.Host, err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to build the transport to the member API server: %w", err)
	}
	upgrade, err := upgradeTransport(cfg)
	if err != nil {
		return nil, err
	}
	return &Handler{prefix: opts.IdentityPrefix, log: opts.Logger, location: location, transport: rt, upgrade: upgrade}, nil
}

// upgradeTransport dials the member API server for upgraded requests (exec,
// attach, port-forward) with cfg's TLS settings, and adds cfg's credentials
// to the upgrade request.
func upgradeTransport(cfg *rest.Config) (proxy.UpgradeRequestRoundTripper, error) {
	tcfg, err := cfg.TransportConfig()
	if err != nil {
		return nil, fmt.Errorf("failed to read the member's transport config: %w", err)
	}
	tlsConfig, err := transport.TLSConfigFor(tcfg)
	if err != nil {
		return nil, fmt.Errorf("failed to build the TLS config for the member API server: %w", err)
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	conn := utilnet.SetTransportDefaults(&http.Transport{TLSClientConfig: tlsConfig, DialContext: dialer.DialContext})
	withCredentials, err := transport.HTTPWrappersForConfig(tcfg, proxy.MirrorRequest)
	if err != nil {
		return nil, fmt.Errorf("failed to add the agent's credentials to upgrade requests: %w", err)
	}
	return proxy.NewUpgradeRequestRoundTripper(conn, withCredentials), nil
}

// Identity is who the hub says sent a request: the hub user and its groups.
type Identity struct {
	User   string
	Groups []string
}

// Impersonate rewrites h for forwarding as id under prefix: it removes every
// header that carries credentials or an identity (Authorization,
// Proxy-Authorization, Impersonate-*, the hub's identity headers) and sets
// Impersonate-User and one Impersonate-Group per group, each prefixed.
func Impersonate(h http.Header, id Identity, prefix string) {
	for name := range h {
		canonical := http.CanonicalHeaderKey(name)
		if canonical == "Authorization" || canonical == "Proxy-Authorization" ||
			strings.HasPrefix(canonical, "Impersonate-") ||
			canonical == http.CanonicalHeaderKey(apiproxy.HeaderUser) || canonical == http.CanonicalHeaderKey(apiproxy.HeaderGroup) {
			delete(h, name)
		}
	}
	h.Set(transport.ImpersonateUserHeader, prefix+id.User)
	for _, g := range id.Groups {
		h.Add(transport.ImpersonateGroupHeader, prefix+g)
	}
}

// identityOf reads the hub's identity headers.
func identityOf(h http.Header) (Identity, error) {
	users := h.Values(apiproxy.HeaderUser)
	if len(users) != 1 || users[0] == "" {
		return Identity{}, fmt.Errorf("the hub sent %d %s headers, want one non-empty", len(users), apiproxy.HeaderUser)
	}
	var groups []string
	for _, g := range h.Values(apiproxy.HeaderGroup) {
		if g != "" {
			groups = append(groups, g)
		}
	}
	return Identity{User: users[0], Groups: groups}, nil
}

// ServeHTTP forwards one request from the hub to the member API server as
// the hub user.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, err := identityOf(r.Header)
	if err != nil {
		apiproxy.WriteStatus(w, apierrors.NewForbidden(apiproxy.GroupResource(), "", err))
		return
	}
	r = r.Clone(r.Context())
	Impersonate(r.Header, id, h.prefix)
	h.log.V(1).Info("Proxying", "user", id.User, "method", r.Method, "path", r.URL.Path)
	// The whole location, query included: upgrade requests (exec) are sent
	// to it as it is.
	location := *h.location
	location.Path = strings.TrimSuffix(location.Path, "/") + r.URL.Path
	location.RawQuery = r.URL.RawQuery
	up := proxy.NewUpgradeAwareHandler(&location, h.transport, false, false, responder{log: h.log})
	up.UpgradeTransport = h.upgrade
	up.UseLocationHost = true
	up.RejectForwardingRedirects = true
	up.ServeHTTP(w, r)
}

// Serve serves the API proxy streams l accepts (tunnel
// ClientSession.APIProxyListener) until l or its session closes (then it
// returns nil) or ctx is done.
func (h *Handler) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
	defer stop()
	err := srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) || errors.Is(err, tunnel.ErrSessionClosed) || ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("the API proxy stopped: %w", err)
}

// responder reports a failure to reach the member API server as a
// Kubernetes Status, as kubectl expects.
type responder struct{ log logr.Logger }

func (r responder) Error(w http.ResponseWriter, req *http.Request, err error) {
	r.log.Info("Failed to reach the member API server", "path", req.URL.Path, "err", err)
	apiproxy.WriteStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("the agent cannot reach the member API server: %v", err)))
}

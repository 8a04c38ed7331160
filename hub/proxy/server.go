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

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// requestHeaderReload is how often LoadedRequestHeader reads
// kube-apiserver's front proxy settings again (a rotated CA), and at most
// how often it retries after a failure.
const requestHeaderReload = time.Minute

// LoadedRequestHeader is a RequestHeader read from
// kube-system/extension-apiserver-authentication when first needed and
// again every minute: the hub starts even when the settings are missing
// (its kube-apiserver then serves no aggregated API), and every proxied
// request is then refused with 401 and the reason.
type LoadedRequestHeader struct {
	// Reader reads the ConfigMap (uncached: one ConfigMap, read rarely).
	Reader client.Reader
	// Log receives the reason when the settings cannot be read.
	Log logr.Logger

	mu     sync.Mutex
	cur    *RequestHeader
	err    error
	loaded time.Time
}

// Authenticate implements Authenticator.
func (l *LoadedRequestHeader) Authenticate(r *http.Request) (Identity, error) {
	rh, err := l.get(r.Context())
	if err != nil {
		return Identity{}, fmt.Errorf("the hub cannot authenticate proxied requests: %w", err)
	}
	return rh.Authenticate(r)
}

func (l *LoadedRequestHeader) get(ctx context.Context) (*RequestHeader, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Since(l.loaded) < requestHeaderReload && (l.cur != nil || l.err != nil) {
		return l.cur, l.err
	}
	rh, err := LoadRequestHeader(ctx, l.Reader)
	l.loaded = time.Now()
	if err != nil {
		l.Log.Error(err, "Cannot read kube-apiserver's front proxy settings; the API proxy refuses every request until it can")
		if l.cur == nil {
			l.err = err
		}
		return l.cur, l.err
	}
	l.cur, l.err = rh, nil
	return rh, nil
}

// identityHeaders are the front proxy's identity headers as last loaded.
func (l *LoadedRequestHeader) identityHeaders() (names, prefixes []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == nil {
		return nil, nil
	}
	return l.cur.identityHeaders()
}

// Server serves a Handler over TLS for kube-apiserver's aggregation layer; a
// manager Runnable in every replica.
type Server struct {
	// Addr is where to listen, host:port.
	Addr string
	// GetCertificate returns the serving certificate (the hub's tunnel
	// serving certificate, valid for the flotilla-hub Service).
	GetCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	Handler        http.Handler
	// CABundle returns the CA of the serving certificate (nil until it is
	// known); with Client, Start writes it into APIService
	// v1beta1.proxy.flotilla.io's spec.caBundle, so that kube-apiserver
	// verifies the hub. Default: none (the APIService is left alone).
	CABundle func() []byte
	// Client patches the APIService (uncached).
	Client client.Client
	Log    logr.Logger
}

// NeedLeaderElection is false: every replica serves the proxy of the
// members connected to it.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx is done.
func (s *Server) Start(ctx context.Context) error {
	l, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("failed to listen on %s for the API proxy (--proxy-bind-address): %w", s.Addr, err)
	}
	srv := &http.Server{
		Handler:           s.Handler,
		ReadHeaderTimeout: 30 * time.Second,
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: s.GetCertificate,
			// The front proxy's certificate is checked per request
			// (RequestHeader), against a CA that may rotate.
			ClientAuth: tls.RequestClientCert,
		},
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	defer stop()
	if s.CABundle != nil && s.Client != nil {
		go s.keepCABundle(ctx)
	}
	s.Log.Info("Serving the API proxy", "address", l.Addr().String())
	if err := srv.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("the API proxy server failed: %w", err)
	}
	return nil
}

// APIServiceName is the APIService that makes kube-apiserver forward the
// proxy.flotilla.io API to the hub (manifests/hub/proxy/apiservice.yaml).
const APIServiceName = "v1beta1.proxy.flotilla.io"

// PlanAPIServiceName is the APIService that forwards the plan.flotilla.io
// API to the same listener (manifests/hub/proxy/apiservice-plan.yaml); the
// hub keeps its CA there too when it exists.
const PlanAPIServiceName = "v1beta1.plan.flotilla.io"

// How often keepCABundle looks at the APIService's caBundle: every
// caBundleCheck once it is written, every caBundleRetry while the APIService
// is missing (applied after the hub started, as the how-to says) or the write
// failed, and every second until the serving CA is known.
const (
	caBundleCheck = 5 * time.Minute
	caBundleRetry = 5 * time.Second
)

// keepCABundle writes the serving certificate's CA into the APIService's
// spec.caBundle, when it differs, as soon as the CA and the APIService are
// known and every caBundleCheck after, until ctx is done.
func (s *Server) keepCABundle(ctx context.Context) {
	for {
		every := time.Second
		if ca := s.CABundle(); ca != nil {
			found, err := s.writeCABundle(ctx, APIServiceName, ca)
			if err != nil {
				s.Log.Error(err, "Failed to write the hub's CA into the APIService", "apiService", APIServiceName)
			}
			every = nextCABundleCheck(found, err)
			// The plan API's APIService may be applied after the proxy's: the
			// hub looks for it as often as for a missing proxy APIService.
			planFound, err := s.writeCABundle(ctx, PlanAPIServiceName, ca)
			if err != nil {
				s.Log.Error(err, "Failed to write the hub's CA into the APIService", "apiService", PlanAPIServiceName)
			}
			every = min(every, nextCABundleCheck(planFound, err))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

// nextCABundleCheck is when keepCABundle looks again after a write of the
// known CA: soon when the APIService was missing or the write failed.
func nextCABundleCheck(found bool, err error) time.Duration {
	if !found || err != nil {
		return caBundleRetry
	}
	return caBundleCheck
}

// writeCABundle writes ca into the APIService unless it holds it already;
// found is false when there is no APIService.
func (s *Server) writeCABundle(ctx context.Context, name string, ca []byte) (found bool, err error) {
	svc := &unstructured.Unstructured{}
	svc.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"})
	if err := s.Client.Get(ctx, types.NamespacedName{Name: name}, svc); err != nil {
		if apierrors.IsNotFound(err) {
			s.Log.V(1).Info("No APIService: kube-apiserver does not forward its API to the hub (kubectl apply -f manifests/hub/proxy/)", "apiService", name)
			return false, nil
		}
		return false, err
	}
	want := base64.StdEncoding.EncodeToString(ca)
	if got, _, _ := unstructured.NestedString(svc.Object, "spec", "caBundle"); got == want {
		return true, nil
	}
	patch := fmt.Appendf(nil, `{"spec":{"caBundle":%q,"insecureSkipTLSVerify":false}}`, want)
	if err := s.Client.Patch(ctx, svc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return true, err
	}
	s.Log.Info("Wrote the hub's CA into the APIService", "apiService", name)
	return true, nil
}

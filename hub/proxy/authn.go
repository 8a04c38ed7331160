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
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Identity is the hub user a request comes from.
type Identity struct {
	User   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// Authenticator tells who sent a request. A request it cannot attribute to
// a user returns an error (the Handler answers 401 with its text).
type Authenticator interface {
	Authenticate(r *http.Request) (Identity, error)
}

// RequestHeader authenticates the requests kube-apiserver forwards to an
// aggregated API server: the user is in request headers (X-Remote-User,
// X-Remote-Group, X-Remote-Extra-*), which are believed only on a
// connection whose client certificate the front proxy's CA signed, for
// client authentication, with one of the allowed common names. This is what
// kube-apiserver's --requestheader-* flags configure, and what it publishes
// in ConfigMap kube-system/extension-apiserver-authentication
// (LoadRequestHeader).
type RequestHeader struct {
	// ClientCA verifies the front proxy's client certificate. Required.
	ClientCA *x509.CertPool
	// AllowedNames are the common names the front proxy's certificate may
	// have; empty allows any the CA signed.
	AllowedNames []string
	// UsernameHeaders, GroupHeaders and ExtraHeaderPrefixes name where the
	// user is: the first non-empty username header, every value of every
	// group header, and the extra fields under the prefixes.
	UsernameHeaders, GroupHeaders, ExtraHeaderPrefixes []string
}

var errNoFrontProxy = errors.New("the request did not come through the hub's kube-apiserver (no client certificate of its front proxy): reach the proxy at the hub's API server, under " + "/apis/proxy.flotilla.io")

// Authenticate implements Authenticator.
func (a *RequestHeader) Authenticate(r *http.Request) (Identity, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return Identity{}, errNoFrontProxy
	}
	leaf := r.TLS.PeerCertificates[0]
	intermediates := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		intermediates.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: a.ClientCA, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return Identity{}, fmt.Errorf("%w: %w", errNoFrontProxy, err)
	}
	if len(a.AllowedNames) > 0 && !slices.Contains(a.AllowedNames, leaf.Subject.CommonName) {
		return Identity{}, fmt.Errorf("the front proxy's client certificate is for %q, not one of the allowed names %v", leaf.Subject.CommonName, a.AllowedNames)
	}
	var id Identity
	for _, h := range a.UsernameHeaders {
		if v := r.Header.Get(h); v != "" {
			id.User = v
			break
		}
	}
	if id.User == "" {
		return Identity{}, fmt.Errorf("the front proxy named no user (headers %v)", a.UsernameHeaders)
	}
	for _, h := range a.GroupHeaders {
		id.Groups = append(id.Groups, r.Header.Values(h)...)
	}
	for name, values := range r.Header {
		for _, prefix := range a.ExtraHeaderPrefixes {
			rest, ok := cutPrefixFold(name, prefix)
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
	}
	return id, nil
}

// identityHeaders are every header RequestHeader may read: the Handler
// removes them before forwarding.
func (a *RequestHeader) identityHeaders() (names, prefixes []string) {
	return append(slices.Clone(a.UsernameHeaders), a.GroupHeaders...), a.ExtraHeaderPrefixes
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return "", false
	}
	return s[len(prefix):], true
}

// The ConfigMap in which kube-apiserver publishes its front proxy's
// settings, readable with Role kube-system/extension-apiserver-authentication-reader.
const (
	authenticationConfigMapNamespace = "kube-system"
	authenticationConfigMapName      = "extension-apiserver-authentication"
)

// LoadRequestHeader reads kube-apiserver's front proxy settings from
// ConfigMap kube-system/extension-apiserver-authentication. It fails, saying
// what to set, when the API server does not run with
// --requestheader-client-ca-file (it then cannot forward to aggregated APIs).
func LoadRequestHeader(ctx context.Context, c client.Reader) (*RequestHeader, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: authenticationConfigMapNamespace, Name: authenticationConfigMapName}, cm); err != nil {
		return nil, fmt.Errorf("failed to read ConfigMap %s/%s (kube-apiserver's front proxy settings): %w", authenticationConfigMapNamespace, authenticationConfigMapName, err)
	}
	return parseRequestHeader(cm.Data)
}

func parseRequestHeader(data map[string]string) (*RequestHeader, error) {
	caPEM := data["requestheader-client-ca-file"]
	if caPEM == "" {
		return nil, fmt.Errorf("ConfigMap %s/%s has no requestheader-client-ca-file: the hub's kube-apiserver must run with --requestheader-client-ca-file (and --proxy-client-cert-file) to serve aggregated APIs",
			authenticationConfigMapNamespace, authenticationConfigMapName)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(caPEM)) {
		return nil, fmt.Errorf("requestheader-client-ca-file of ConfigMap %s/%s holds no PEM certificate", authenticationConfigMapNamespace, authenticationConfigMapName)
	}
	a := &RequestHeader{ClientCA: pool}
	for key, into := range map[string]*[]string{
		"requestheader-allowed-names":        &a.AllowedNames,
		"requestheader-username-headers":     &a.UsernameHeaders,
		"requestheader-group-headers":        &a.GroupHeaders,
		"requestheader-extra-headers-prefix": &a.ExtraHeaderPrefixes,
	} {
		if v := data[key]; v != "" {
			if err := json.Unmarshal([]byte(v), into); err != nil {
				return nil, fmt.Errorf("%s of ConfigMap %s/%s is not a JSON list of strings: %w", key, authenticationConfigMapNamespace, authenticationConfigMapName, err)
			}
		}
	}
	if len(a.UsernameHeaders) == 0 {
		a.UsernameHeaders = []string{"X-Remote-User"}
	}
	return a, nil
}

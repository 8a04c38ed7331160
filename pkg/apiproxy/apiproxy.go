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

// Package apiproxy holds what the hub and the agent agree on for reaching a
// member's Kubernetes API through the tunnel: the hub's aggregated API path
// and the identity headers the hub sets on each proxied request. The hub
// serves the path (hub/proxy); the agent forwards, impersonating the
// identity (agent/proxy). The bytes travel on the tunnel's API proxy streams
// (pkg/tunnel, spec.md §4a).
package apiproxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The hub's aggregated API: kube-apiserver forwards
//
//	/apis/proxy.flotilla.io/v1beta1/memberclusters/<name>/proxy/<path>
//
// to the hub (an APIService), and the hub sends <path> to member <name>.
const (
	// Group is the API group of the hub's aggregated API.
	Group = "proxy.flotilla.io"
	// Version is its only version.
	Version = "v1beta1"
	// Resource is the resource whose proxy subresource reaches a member.
	Resource = "memberclusters"
	// Subresource is the subresource authorized for a proxied request: RBAC
	// rules name it as memberclusters/proxy.
	Subresource = "proxy"
)

// Identity headers: the hub sets them on every request it sends over an API
// proxy stream, after removing any a client sent. The agent trusts them only
// because the stream came over the authenticated tunnel, and impersonates
// that identity (under its prefix) on the member.
const (
	// HeaderUser is the hub user's name.
	HeaderUser = "X-Flotilla-Hub-User"
	// HeaderGroup is one of the hub user's groups; repeated for each.
	HeaderGroup = "X-Flotilla-Hub-Group"
)

// DefaultIdentityPrefix prefixes the hub user and each of its groups when the
// agent impersonates them on the member (agent run --proxy-identity-prefix),
// so that member administrators grant hub users rights with ordinary
// RoleBindings naming e.g. User flotilla:hub:alice or Group
// flotilla:hub:devs, and no hub identity is ever one of the member's own.
const DefaultIdentityPrefix = "flotilla:hub:"

// PathPrefix returns the path under which member's API is served:
// /apis/proxy.flotilla.io/v1beta1/memberclusters/<member>/proxy.
func PathPrefix(member string) string {
	return "/apis/" + Group + "/" + Version + "/" + Resource + "/" + member + "/" + Subresource
}

// ParsePath splits a request path of the hub's aggregated API into the
// member's name and the path to send to the member ("/" at least). ok is
// false for a path outside /apis/<Group>/<Version>/memberclusters/<name>/proxy.
func ParsePath(path string) (member, rest string, ok bool) {
	base := "/apis/" + Group + "/" + Version + "/" + Resource + "/"
	tail, found := strings.CutPrefix(path, base)
	if !found {
		return "", "", false
	}
	member, tail, found = strings.Cut(tail, "/")
	if !found || member == "" {
		return "", "", false
	}
	if tail != Subresource && !strings.HasPrefix(tail, Subresource+"/") {
		return "", "", false
	}
	rest = strings.TrimPrefix(tail, Subresource)
	if rest == "" {
		rest = "/"
	}
	return member, rest, true
}

// ValidateIdentityPrefix checks a prefix for the identities the agent
// impersonates: it must be set (an empty prefix would let a hub group such
// as system:masters be the member's own) and must not be in the system:
// namespace Kubernetes reserves.
func ValidateIdentityPrefix(prefix string) error {
	if prefix == "" {
		return fmt.Errorf("must not be empty: hub users would become the member's own users and groups (such as system:masters)")
	}
	if strings.HasPrefix(prefix, "system:") {
		return fmt.Errorf("%q is in the system: namespace Kubernetes reserves for its own identities", prefix)
	}
	return nil
}

// GroupResource is memberclusters/proxy of Group, for API errors.
func GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: Group, Resource: Resource + "/" + Subresource}
}

// WriteStatus writes err as the metav1.Status JSON an API server answers
// with, with its HTTP code, so that kubectl prints its message.
func WriteStatus(w http.ResponseWriter, err apierrors.APIStatus) {
	status := err.Status()
	status.Kind, status.APIVersion = "Status", "v1"
	if status.Status == "" {
		status.Status = metav1.StatusFailure
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// client-go waits this long and sends the request again.
	if d := status.Details; d != nil && d.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(d.RetryAfterSeconds)))
	}
	w.WriteHeader(int(status.Code))
	_ = json.NewEncoder(w).Encode(status)
}

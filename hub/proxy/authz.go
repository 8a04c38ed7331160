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
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/pkg/apiproxy"
)

// VerbFor is the RBAC verb that authorizes a proxied request with the given
// HTTP method on memberclusters/proxy, as kube-apiserver names verbs for
// the proxy subresources of its own kinds: GET and HEAD get, POST create,
// PUT update, PATCH patch, DELETE delete. Any other method has no verb ("")
// and is refused. A watch or an exec is authorized by its method too: what
// it may see or do on the member is the member's RBAC's to decide.
func VerbFor(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}

// Decision is an Authorizer's answer.
type Decision struct {
	Allowed bool
	// Reason is why, as the authorizer said it (may be empty).
	Reason string
}

// Authorizer decides whether id may verb the proxy of member.
type Authorizer interface {
	Authorize(ctx context.Context, id Identity, member, verb string) (Decision, error)
}

// SubjectAccessReviewer authorizes with a SubjectAccessReview on the hub's
// API server for memberclusters/proxy of proxy.flotilla.io, named after the
// member: hub administrators grant it with ordinary RBAC, e.g.
//
//	rules:
//	- apiGroups: [proxy.flotilla.io]
//	  resources: [memberclusters/proxy]
//	  resourceNames: [member-1]
//	  verbs: [get]
type SubjectAccessReviewer struct {
	// Client creates SubjectAccessReviews (the hub's own identity, which
	// may create subjectaccessreviews).
	Client client.Client
}

// Authorize implements Authorizer.
func (a SubjectAccessReviewer) Authorize(ctx context.Context, id Identity, member, verb string) (Decision, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: SubjectAccessReviewSpec(id, member, verb)}
	if err := a.Client.Create(ctx, sar); err != nil {
		return Decision{}, fmt.Errorf("failed to ask the hub's API server whether %q may %s the proxy of %q: %w", id.User, verb, member, err)
	}
	reason := sar.Status.Reason
	if sar.Status.EvaluationError != "" && reason == "" {
		reason = sar.Status.EvaluationError
	}
	return Decision{Allowed: sar.Status.Allowed && !sar.Status.Denied, Reason: reason}, nil
}

// SubjectAccessReviewSpec is the review of id's verb on member's proxy.
func SubjectAccessReviewSpec(id Identity, member, verb string) authorizationv1.SubjectAccessReviewSpec {
	var extra map[string]authorizationv1.ExtraValue
	if len(id.Extra) > 0 {
		extra = map[string]authorizationv1.ExtraValue{}
		for k, v := range id.Extra {
			extra[k] = v
		}
	}
	return authorizationv1.SubjectAccessReviewSpec{
		User:   id.User,
		UID:    id.UID,
		Groups: id.Groups,
		Extra:  extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group:       apiproxy.Group,
			Version:     apiproxy.Version,
			Resource:    apiproxy.Resource,
			Subresource: apiproxy.Subresource,
			Name:        member,
			Verb:        verb,
		},
	}
}

// DefaultDecisionTTL is how long CachingAuthorizer keeps a decision: what
// the authorizers of kube-apiserver's aggregated API servers keep (10s). A
// role granted or taken away on the hub applies within it.
const DefaultDecisionTTL = 10 * time.Second

// maxCachedDecisions bounds CachingAuthorizer's memory: past it, expired
// decisions are dropped, and if none were, all are.
const maxCachedDecisions = 10000

// CachingAuthorizer keeps an Authorizer's decisions, allowed and denied, for
// a while, keyed by the whole identity, the member and the verb, so that a
// client's burst of requests costs one SubjectAccessReview. Errors are not
// kept.
type CachingAuthorizer struct {
	Authorizer Authorizer
	// TTL is how long a decision is kept. Default DefaultDecisionTTL.
	TTL time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]cachedDecision
}

type cachedDecision struct {
	Decision
	expires time.Time
}

// Authorize implements Authorizer.
func (c *CachingAuthorizer) Authorize(ctx context.Context, id Identity, member, verb string) (Decision, error) {
	now, ttl := time.Now, c.TTL
	if c.Now != nil {
		now = c.Now
	}
	if ttl <= 0 {
		ttl = DefaultDecisionTTL
	}
	key, err := json.Marshal(struct {
		ID           Identity
		Member, Verb string
	}{id, member, verb})
	if err != nil {
		return Decision{}, fmt.Errorf("failed to key an authorization decision: %w", err)
	}
	c.mu.Lock()
	e, ok := c.entries[string(key)]
	c.mu.Unlock()
	if ok && now().Before(e.expires) {
		return e.Decision, nil
	}
	d, err := c.Authorizer.Authorize(ctx, id, member, verb)
	if err != nil {
		return d, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]cachedDecision{}
	}
	if len(c.entries) >= maxCachedDecisions {
		for k, e := range c.entries {
			if !now().Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= maxCachedDecisions {
			clear(c.entries)
		}
	}
	c.entries[string(key)] = cachedDecision{Decision: d, expires: now().Add(ttl)}
	return d, nil
}

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
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	planv1beta1 "github.com/flotilla-io/flotilla/apis/plan/v1beta1"
	"github.com/flotilla-io/flotilla/hub/plan"
	"github.com/flotilla-io/flotilla/pkg/apiproxy"
)

// The plan API: kube-apiserver forwards
//
//	POST /apis/plan.flotilla.io/v1beta1/placementplans
//
// to the hub (APIService v1beta1.plan.flotilla.io), which answers with the
// PlacementPlan, its status filled in (hub/plan). Nothing is stored.
const planPath = "/apis/" + planv1beta1.Group + "/" + planv1beta1.Version + "/" + planv1beta1.Resource

// Bounds of reading members' objects for a plan: the clusters read (the
// others say so), and how long one cluster's reads may take in all.
const (
	maxMemberClusters = 20
	memberReadTimeout = 5 * time.Second
)

// maxAccessReviews bounds the SubjectAccessReviews one plan asks, one per
// distinct object: past it, the rest are shown as forbidden.
const maxAccessReviews = 200

// Planner plans a PlacementPlan's spec (plan.Planner); a *plan.InputError
// is the user's to fix.
type Planner interface {
	Plan(ctx context.Context, spec *planv1beta1.PlacementPlanSpec) (*planv1beta1.PlacementPlanStatus, error)
}

// ResourceAuthorizer decides whether id may do what attrs say on the hub.
type ResourceAuthorizer interface {
	AuthorizeResource(ctx context.Context, id Identity, attrs authorizationv1.ResourceAttributes) (Decision, error)
}

// AuthorizeResource implements ResourceAuthorizer with a SubjectAccessReview.
func (a SubjectAccessReviewer) AuthorizeResource(ctx context.Context, id Identity, attrs authorizationv1.ResourceAttributes) (Decision, error) {
	spec := SubjectAccessReviewSpec(id, "", "")
	spec.ResourceAttributes = &attrs
	sar := &authorizationv1.SubjectAccessReview{Spec: spec}
	if err := a.Client.Create(ctx, sar); err != nil {
		return Decision{}, fmt.Errorf("failed to ask the hub's API server whether %q may %s %s: %w", id.User, attrs.Verb, attrs.Resource, err)
	}
	reason := sar.Status.Reason
	if sar.Status.EvaluationError != "" && reason == "" {
		reason = sar.Status.EvaluationError
	}
	return Decision{Allowed: sar.Status.Allowed && !sar.Status.Denied, Reason: reason}, nil
}

// PlanOptions configure the plan API of a Handler.
type PlanOptions struct {
	// Planner plans. nil serves no plan API.
	Planner Planner
	// Authorizer decides, per object a plan renders, whether the user may
	// get it on the hub (a plan never shows what its user cannot read), and
	// whether the user may create placementplans at all (kube-apiserver
	// decided that already; the hub asks again, as for the proxy).
	Authorizer ResourceAuthorizer
	// Mapper maps an object's kind to the resource the reviews name.
	Mapper meta.RESTMapper
	// Timeout bounds a plan. Default: the Handler's RequestTimeout.
	Timeout time.Duration
}

// servePlan answers the plan API; false for a path outside it.
func (h *Handler) servePlan(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != planPath && !strings.HasPrefix(r.URL.Path, planPath+"/") {
		return false
	}
	start := time.Now()
	code := http.StatusCreated
	var id Identity
	defer func() {
		h.opts.Logger.Info("Planned", "user", id.User, "status", code, "duration", time.Since(start).Round(time.Millisecond))
	}()
	fail := func(err apierrors.APIStatus) {
		code = int(err.Status().Code)
		apiproxy.WriteStatus(w, err)
	}
	gr := schema.GroupResource{Group: planv1beta1.Group, Resource: planv1beta1.Resource}
	po := h.opts.Plan
	if po.Planner == nil {
		fail(apierrors.NewServiceUnavailable("this hub does not serve plans"))
		return true
	}
	var err error
	id, err = h.opts.Authenticator.Authenticate(r)
	if err != nil {
		fail(apierrors.NewUnauthorized(err.Error()))
		return true
	}
	releaseUser, refusal := h.users.admit(id.User, time.Now())
	if refusal != nil {
		fail(refusal)
		return true
	}
	defer releaseUser()
	if r.Method != http.MethodPost || r.URL.Path != planPath {
		fail(apierrors.NewMethodNotSupported(gr, r.Method+" "+strings.TrimPrefix(r.URL.Path, planPath)+" (a PlacementPlan is only created)"))
		return true
	}
	ctx := r.Context()
	timeout := po.Timeout
	if timeout <= 0 {
		timeout = h.opts.RequestTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if d, err := po.Authorizer.AuthorizeResource(ctx, id, authorizationv1.ResourceAttributes{
		Group: planv1beta1.Group, Version: planv1beta1.Version, Resource: planv1beta1.Resource, Verb: "create"}); err != nil {
		fail(apierrors.NewInternalError(err))
		return true
	} else if !d.Allowed {
		fail(apierrors.NewForbidden(gr, "", fmt.Errorf("%s", orDefault(d.Reason, "no RBAC rule allows it"))))
		return true
	}
	pp, status := readPlan(w, r)
	if status != nil {
		fail(status)
		return true
	}
	st, err := po.Planner.Plan(ctx, &pp.Spec)
	var ie *plan.InputError
	switch {
	case errors.As(err, &ie):
		fail(unprocessable(gr, pp.Name, ie.Error()))
		return true
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		fail(apierrors.NewTimeoutError(fmt.Sprintf("the plan took longer than %s", timeout), 0))
		return true
	case err != nil:
		fail(apierrors.NewInternalError(err))
		return true
	}
	plan.Redact(st, h.accessChecker(ctx, id))
	h.compareMembers(ctx, id, st)
	pp.Status = *st
	pp.APIVersion, pp.Kind = planv1beta1.GroupVersion.String(), planv1beta1.Kind
	pp.CreationTimestamp = metav1.NewTime(time.Now())
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(pp)
	return true
}

// readPlan reads a PlacementPlan from the body, at most MaxRequestBytes.
func readPlan(w http.ResponseWriter, r *http.Request) (*planv1beta1.PlacementPlan, apierrors.APIStatus) {
	limit := int64(planv1beta1.MaxRequestBytes)
	if r.ContentLength > limit {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("the PlacementPlan (%d bytes) is larger than the %d bytes a plan accepts: plan fewer objects at once", r.ContentLength, limit))
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("the PlacementPlan is larger than the %d bytes a plan accepts: plan fewer objects at once", limit))
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("failed to read the request: %v", err))
	}
	pp := &planv1beta1.PlacementPlan{}
	if err := json.Unmarshal(body, pp); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the request is not a PlacementPlan: %v", err))
	}
	if pp.Kind != "" && pp.Kind != planv1beta1.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the request is a %s, not a %s", pp.Kind, planv1beta1.Kind))
	}
	return pp, nil
}

// unprocessable is the 422 of a plan the planner cannot make.
func unprocessable(gr schema.GroupResource, name, msg string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
		Details: &metav1.StatusDetails{Group: gr.Group, Kind: planv1beta1.Kind, Name: name},
		Message: "the plan cannot be made: " + msg,
	}}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// accessChecker asks whether id may get each object a plan renders, once per
// object and at most maxAccessReviews times; an object whose kind the hub
// does not serve is checked by its kind's lowercase plural, and one past the
// bound or whose review fails is forbidden (a plan never pretends access).
func (h *Handler) accessChecker(ctx context.Context, id Identity) plan.Access {
	var mu sync.Mutex
	asked := 0
	return func(obj placementv1beta1.ResourceIdentifier) (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		if asked >= maxAccessReviews {
			return false, fmt.Sprintf("not checked: a plan checks access to at most %d objects", maxAccessReviews)
		}
		asked++
		resource := strings.ToLower(obj.Kind) + "s"
		if h.opts.Plan.Mapper != nil {
			if m, err := h.opts.Plan.Mapper.RESTMapping(schema.GroupKind{Group: obj.Group, Kind: obj.Kind}, obj.Version); err == nil {
				resource = m.Resource.Resource
			}
		}
		d, err := h.opts.Plan.Authorizer.AuthorizeResource(ctx, id, authorizationv1.ResourceAttributes{
			Group: obj.Group, Version: obj.Version, Resource: resource, Namespace: obj.Namespace, Name: obj.Name, Verb: "get"})
		if err != nil {
			return false, "access could not be checked: " + err.Error()
		}
		if !d.Allowed {
			return false, fmt.Sprintf("%q may not get %s %s on the hub", id.User, resource, client.ObjectKey{Namespace: obj.Namespace, Name: obj.Name})
		}
		return true, ""
	}
}

// compareMembers reads, through each selected or kept member's tunnel and
// as the user (the member's RBAC decides, as for the proxy), the objects a
// plan shows, and compares them with the planned ones (plan.
// CompareWithMember). A member the user may not reach through the proxy,
// one not connected to this replica, or one past maxMemberClusters says so
// in MemberUnread; an object that cannot be read is Unknown with the
// reason. Hidden objects (Redact) are not read.
func (h *Handler) compareMembers(ctx context.Context, id Identity, st *planv1beta1.PlacementPlanStatus) {
	read := 0
	for i := range st.Clusters {
		c := &st.Clusters[i]
		if c.Decision != planv1beta1.DecisionSelected && c.Decision != planv1beta1.DecisionKept || len(c.Manifests) == 0 {
			continue
		}
		if read++; read > maxMemberClusters {
			c.MemberUnread = fmt.Sprintf("not read: a plan reads the objects of at most %d members", maxMemberClusters)
			continue
		}
		d, err := h.opts.Authorizer.Authorize(ctx, id, c.Name, "get")
		switch {
		case err != nil:
			c.MemberUnread = "not read: " + err.Error()
			continue
		case !d.Allowed:
			c.MemberUnread = fmt.Sprintf("not read: %q may not get memberclusters/proxy of %s on the hub", id.User, c.Name)
			continue
		}
		// A member whose session another replica holds is read through
		// that replica (peers.go).
		rt := h.route(ctx, c.Name, "")
		if rt.Refusal != "" {
			c.MemberUnread = "not read: " + rt.Refusal
			continue
		}
		if ch, ok := h.opts.Dialer.(apiProxyChecker); ok && rt.Peer == "" {
			if err := ch.CheckAPIProxy(c.Name); err != nil {
				c.MemberUnread = "not read: " + rootCause(err)
				continue
			}
		}
		cctx, cancel := context.WithTimeout(ctx, memberReadTimeout)
		for j := range c.Manifests {
			m := &c.Manifests[j]
			if m.Object == nil || m.Change == planv1beta1.ChangeDelete {
				continue
			}
			m.Member, m.MemberDiff = h.compareMember(cctx, id, c.Name, rt, m)
		}
		cancel()
	}
}

// compareMember reads one object on member as id, here or through the peer
// replica of rt, and compares it.
func (h *Handler) compareMember(ctx context.Context, id Identity, member string, rt route, m *planv1beta1.PlannedManifest) (planv1beta1.MemberState, string) {
	path, err := h.objectPath(m.ResourceIdentifier)
	if err != nil {
		return planv1beta1.MemberUnknown, err.Error()
	}
	target, transport := "http://"+member+memberHostSuffix+path, h.transport
	if rt.Peer != "" {
		// The owner holds the member's slot.
		ctx = context.WithValue(ctx, peerAddressKey{}, rt.Address)
		target, transport = "http://"+rt.Peer+peerHostSuffix+apiproxy.PathPrefix(member)+path, h.peerTransport
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return planv1beta1.MemberUnknown, err.Error()
	}
	req.Header.Set("Accept", "application/json")
	if rt.Peer != "" {
		setForwardedIdentity(req.Header, id)
	} else {
		req.Header.Set(apiproxy.HeaderUser, id.User)
		for _, g := range id.Groups {
			req.Header.Add(apiproxy.HeaderGroup, g)
		}
		release, ok := h.acquire(member)
		if !ok {
			return planv1beta1.MemberUnknown, "the member has too many proxied requests in flight"
		}
		defer release()
	}
	resp, err := transport.RoundTrip(req)
	if err != nil {
		return planv1beta1.MemberUnknown, "could not be read: " + rootCause(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, planv1beta1.MaxManifestBytesPerCluster))
	if err != nil {
		return planv1beta1.MemberUnknown, "could not be read: " + err.Error()
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return planv1beta1.MemberAbsent, ""
	default:
		msg := strings.TrimSpace(string(body))
		var status metav1.Status
		if json.Unmarshal(body, &status) == nil && status.Message != "" {
			msg = status.Message
		}
		return planv1beta1.MemberUnknown, fmt.Sprintf("the member answered %d: %s", resp.StatusCode, msg)
	}
	state, d, err := plan.CompareWithMember(m.Object.Raw, body)
	if err != nil {
		return planv1beta1.MemberUnknown, err.Error()
	}
	return state, d
}

// objectPath is the API path of an object, its resource found by the hub's
// RESTMapper.
func (h *Handler) objectPath(obj placementv1beta1.ResourceIdentifier) (string, error) {
	if h.opts.Plan.Mapper == nil {
		return "", errors.New("the hub cannot map kinds to resources")
	}
	m, err := h.opts.Plan.Mapper.RESTMapping(schema.GroupKind{Group: obj.Group, Kind: obj.Kind}, obj.Version)
	if err != nil {
		return "", fmt.Errorf("the hub does not know kind %s: %w", obj.Kind, err)
	}
	p := "/apis/" + obj.Group + "/" + obj.Version
	if obj.Group == "" {
		p = "/api/" + obj.Version
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		p += "/namespaces/" + url.PathEscape(obj.Namespace)
	}
	return p + "/" + m.Resource.Resource + "/" + url.PathEscape(obj.Name), nil
}

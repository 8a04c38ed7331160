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
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		fail(apierrors.NewTimeoutError(fmt.Sprintf("the plan took longer than %s", timeout), 0))
		return true
	case err != nil:
		fail(apierrors.NewInternalError(err))
		return true
	}
	plan.Redact(st, h.accessChecker(ctx, id))
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

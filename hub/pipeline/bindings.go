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

package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Field managers of the hub's controllers: each writes only the fields its rows
// in Ownership (ownership.go) give it, under its own name.
const (
	ManagerPlacement     = "flotilla-placement"
	ManagerScheduler     = "flotilla-scheduler"
	ManagerFailover      = "flotilla-failover"
	ManagerFailback      = "flotilla-failback"
	ManagerFencing       = "flotilla-fencing"
	ManagerRollout       = "flotilla-rollout"
	ManagerWorkGenerator = "flotilla-workgen"
	ManagerUpdateRun     = "flotilla-updaterun"
)

// IsActive reports whether a binding (of either kind) holds its placement on
// its cluster: in state Scheduled or Bound, and not being deleted.
func IsActive(b placementv1beta1.BindingObj) bool {
	if b.GetDeletionTimestamp() != nil && !b.GetDeletionTimestamp().IsZero() {
		return false
	}
	state := b.GetBindingSpec().State
	return state == placementv1beta1.BindingStateScheduled || state == placementv1beta1.BindingStateBound
}

// ActiveBindings returns the active bindings among bs, sorted by target
// cluster.
func ActiveBindings(bs []placementv1beta1.BindingObj) []placementv1beta1.BindingObj {
	out := make([]placementv1beta1.BindingObj, 0, len(bs))
	for _, b := range bs {
		if IsActive(b) {
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].GetBindingSpec().TargetCluster < out[j].GetBindingSpec().TargetCluster
	})
	return out
}

// OwnConditions returns copies of the conditions of the given types in existing:
// the starting point of a controller that sets its own conditions (it keeps their
// transition times) before ApplyBindingStatus.
func OwnConditions(existing []metav1.Condition, types ...string) []metav1.Condition {
	var out []metav1.Condition
	for _, c := range existing {
		for _, t := range types {
			if c.Type == t {
				out = append(out, c)
			}
		}
	}
	return out
}

// BindingStatus is the part of a binding's status one field manager owns. Nil
// lists are left out of the apply, which releases them.
type BindingStatus struct {
	// Conditions are the manager's conditions, and only those.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// FailedPlacements, for the work generator.
	FailedPlacements []placementv1beta1.FailedResourcePlacement `json:"failedPlacements,omitempty"`
	// DiffedPlacements, for the work generator.
	DiffedPlacements []placementv1beta1.DiffedResourcePlacement `json:"diffedPlacements,omitempty"`
	// DriftedPlacements, for the work generator.
	DriftedPlacements []placementv1beta1.DriftedResourcePlacement `json:"driftedPlacements,omitempty"`
	// Feedback, for the work generator.
	Feedback []placementv1beta1.ResourceFeedback `json:"feedback,omitempty"`
	// OwnsPlacementLists says the manager owns the lists above (the work
	// generator), so that they are compared too.
	OwnsPlacementLists bool `json:"-"`
	// IfResourceVersion, when set, makes the apply conditional: it fails with a
	// conflict if the binding's resourceVersion is no longer this one (a writer
	// that must not overwrite what another wrote since it read the binding).
	IfResourceVersion string `json:"-"`
}

// ApplyBindingStatus writes want as manager's part of the binding's status with
// server-side apply on the status subresource: the manager's conditions (the
// conditions list is a map keyed by type) and nothing of any other manager's.
// It writes nothing when the binding already shows exactly want for the
// manager's condition types (listed in owned) and lists. On success b holds the
// binding as the API server returned it.
func ApplyBindingStatus(ctx context.Context, c client.Client, b placementv1beta1.BindingObj, manager string, owned []string, want BindingStatus) error {
	if !bindingStatusDiffers(b, owned, want) {
		return nil
	}
	meta := map[string]any{"name": b.GetName()}
	if b.GetNamespace() != "" {
		meta["namespace"] = b.GetNamespace()
	}
	if want.IfResourceVersion != "" {
		meta["resourceVersion"] = want.IfResourceVersion
	}
	body := map[string]any{
		"apiVersion": placementv1beta1.GroupVersion.String(),
		"kind":       BindingKind(b),
		"metadata":   meta,
		"status":     want,
	}
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("failed to encode the status of binding %s: %w", b.GetName(), err)
	}
	if err := c.Status().Patch(ctx, b, client.RawPatch("application/apply-patch+yaml", data), client.FieldOwner(manager), client.ForceOwnership); err != nil {
		return fmt.Errorf("failed to apply the %s status of binding %s: %w", manager, b.GetName(), err)
	}
	return nil
}

// bindingStatusDiffers reports whether applying want would change b.
func bindingStatusDiffers(b placementv1beta1.BindingObj, owned []string, want BindingStatus) bool {
	st := b.GetBindingStatus()
	have := OwnConditions(st.Conditions, owned...)
	if len(have) != len(want.Conditions) {
		return true
	}
	for _, w := range want.Conditions {
		found := false
		for _, h := range have {
			if h.Type == w.Type {
				found = true
				if h.Status != w.Status || h.Reason != w.Reason || h.Message != w.Message || h.ObservedGeneration != w.ObservedGeneration {
					return true
				}
			}
		}
		if !found {
			return true
		}
	}
	if want.OwnsPlacementLists {
		if !equality.Semantic.DeepEqual(normalize(want.FailedPlacements), normalize(st.FailedPlacements)) {
			return true
		}
		if !equality.Semantic.DeepEqual(normalize(want.DiffedPlacements), normalize(st.DiffedPlacements)) {
			return true
		}
		if !equality.Semantic.DeepEqual(normalize(want.DriftedPlacements), normalize(st.DriftedPlacements)) {
			return true
		}
		if !equality.Semantic.DeepEqual(normalize(want.Feedback), normalize(st.Feedback)) {
			return true
		}
	}
	return false
}

func normalize[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// ConditionChanged reports whether the condition of type t differs between two
// lists in status, reason, message or observed generation (or exists in one only).
func ConditionChanged(before, after []metav1.Condition, t string) bool {
	var b, a *metav1.Condition
	for i := range before {
		if before[i].Type == t {
			b = &before[i]
		}
	}
	for i := range after {
		if after[i].Type == t {
			a = &after[i]
		}
	}
	if a == nil || b == nil {
		return a != b
	}
	return a.Status != b.Status || a.Reason != b.Reason || a.Message != b.Message || a.ObservedGeneration != b.ObservedGeneration
}

// SpecPatch changes fields of a binding's spec (by their JSON names; a nil
// value removes the field). With a non-empty ifState the patch applies only
// while spec.state is still ifState — the field the scheduler and the rollout
// both write — and fails otherwise; the other fields each have one writer, so
// no resourceVersion precondition is needed and status writes never conflict
// with it.
func SpecPatch(b placementv1beta1.BindingObj, ifState placementv1beta1.BindingState, set map[string]any) (client.Patch, error) {
	type op = map[string]any
	var ops []op
	if ifState != "" {
		ops = append(ops, op{"op": "test", "path": "/spec/state", "value": ifState})
	}
	current := map[string]any{}
	raw, err := json.Marshal(b.GetBindingSpec())
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &current); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := set[k]
		_, present := current[k]
		switch {
		case v == nil && present:
			ops = append(ops, op{"op": "remove", "path": "/spec/" + k})
		case v != nil:
			ops = append(ops, op{"op": "add", "path": "/spec/" + k, "value": v})
		}
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	return client.RawPatch(types.JSONPatchType, data), nil
}

// EvictionRequested returns a binding's EvictionRequested condition if it is True:
// hub/failover asks the scheduler to take the placement off the cluster.
func EvictionRequested(b placementv1beta1.BindingObj) *metav1.Condition {
	c := conditions.Get(b.GetBindingStatus().Conditions, placementv1beta1.ConditionEvictionRequested)
	if c == nil || c.Status != metav1.ConditionTrue {
		return nil
	}
	return c
}

// EvictionKept returns why a binding stays despite an untolerated NoExecute taint
// (its EvictionRequested condition is False), or "".
func EvictionKept(b placementv1beta1.BindingObj) string {
	c := conditions.Get(b.GetBindingStatus().Conditions, placementv1beta1.ConditionEvictionRequested)
	if c == nil || c.Status != metav1.ConditionFalse {
		return ""
	}
	return c.Message
}

// failbackPrefix starts the message of a FailbackRequested condition; the
// target cluster follows, then ": " and why (FailbackMessage, FailbackTarget).
const failbackPrefix = "moving back to "

// FailbackMessage is the message of a FailbackRequested condition moving the
// placement to cluster to, because of why.
func FailbackMessage(to, why string) string { return failbackPrefix + to + ": " + why }

// FailbackRequested returns a binding's FailbackRequested condition if it is
// True: hub/failover's failback controller asks the scheduler to move the
// placement from the binding's cluster to FailbackTarget.
func FailbackRequested(b placementv1beta1.BindingObj) *metav1.Condition {
	c := conditions.Get(b.GetBindingStatus().Conditions, placementv1beta1.ConditionFailbackRequested)
	if c == nil || c.Status != metav1.ConditionTrue {
		return nil
	}
	return c
}

// FailbackTarget returns the cluster a binding's True FailbackRequested
// condition moves the placement to, or "" when there is none.
func FailbackTarget(b placementv1beta1.BindingObj) string {
	c := FailbackRequested(b)
	if c == nil {
		return ""
	}
	rest, ok := strings.CutPrefix(c.Message, failbackPrefix)
	if !ok {
		return ""
	}
	to, _, _ := strings.Cut(rest, ": ")
	return to
}

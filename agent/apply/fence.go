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

package apply

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Fenced is what Fence did to a Work's objects.
type Fenced struct {
	// Stopped are the objects scaled to zero (ScaleToZero) or deleted
	// (Remove).
	Stopped []ObjectRef
	// Left are the objects the action does not touch: kinds without replicas
	// it scales (ScaleToZero), and objects the Work did not create or
	// Namespaces (Remove).
	Left []ObjectRef
}

// Scalable reports whether ScaleToZero scales an object of this kind: the
// Deployments, StatefulSets and ReplicaSets of apps.
func Scalable(ref ObjectRef) bool {
	if ref.Group != "apps" {
		return false
	}
	switch ref.Kind {
	case "Deployment", "StatefulSet", "ReplicaSet":
		return true
	}
	return false
}

// Fence stops the workloads of a Work whose agent is cut off from the hub for
// longer than the Work's fencing lease (spec.fencing). It only touches the
// objects in the Work's record — the objects this agent applied for it — and
// only while they still have the recorded UID:
//   - ScaleToZero sets spec.replicas to 0 on the Deployments, StatefulSets and
//     ReplicaSets (apps); other objects stay as they are.
//   - Remove deletes the objects the Work created (ObjectRef.Created), except
//     Namespaces, which may hold objects no Work applied; objects it took
//     over stay.
//
// It marks the record not applied in full, so that the next Apply of the
// Work, when the hub sends it again, applies every object (restoring the
// replicas, creating what was deleted) instead of finding it unchanged. A
// Work without a record holds nothing to fence.
func (a *Applier) Fence(ctx context.Context, workName string, action placementv1beta1.FencingAction) (Fenced, error) {
	unlock := a.locks.lock(workName)
	defer unlock()
	log := ctrllog.FromContext(ctx).WithValues("work", workName, "action", action)
	var out Fenced
	rec, err := a.getRecord(ctx, workName)
	if err != nil || rec == nil {
		return out, err
	}
	if rec.AllApplied {
		next := *rec
		next.AllApplied = false
		if err := a.putRecord(ctx, &next); err != nil {
			return out, err
		}
	}
	a.mu.Lock()
	delete(a.last, workName)
	a.mu.Unlock()
	var errs []error
	for _, ref := range rec.Applied {
		stopped, err := a.fenceOne(ctx, ref, action)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("failed to fence %s: %w", ref, err))
		case stopped:
			out.Stopped = append(out.Stopped, ref)
		default:
			out.Left = append(out.Left, ref)
		}
	}
	log.V(1).Info("Fenced the Work", "stopped", len(out.Stopped), "left", len(out.Left), "errors", len(errs))
	return out, errors.Join(errs...)
}

// fenceOne applies action to one recorded object; stopped says whether it
// touched it. An object already gone, or replaced by another of the same
// name (another UID), counts as stopped: it is not the Work's copy.
func (a *Applier) fenceOne(ctx context.Context, ref ObjectRef, action placementv1beta1.FencingAction) (bool, error) {
	switch action {
	case placementv1beta1.FencingRemove:
		if !ref.Created || (ref.Group == "" && ref.Kind == "Namespace") {
			return false, nil
		}
	default:
		if !Scalable(ref) {
			return false, nil
		}
	}
	ri, err := a.resourceOfRef(ctx, ref)
	if err != nil {
		return false, err
	}
	if action == placementv1beta1.FencingRemove {
		opts := metav1.DeleteOptions{}
		if ref.UID != "" {
			opts.Preconditions = &metav1.Preconditions{UID: &ref.UID}
		}
		err = ri.Delete(ctx, ref.Name, opts)
	} else {
		patch := []byte(`{"spec":{"replicas":0}}`)
		if ref.UID != "" {
			// A UID in a merge patch is a precondition: the API server refuses
			// the patch for an object with another UID.
			patch = fmt.Appendf(nil, `{"metadata":{"uid":%q},"spec":{"replicas":0}}`, ref.UID)
		}
		_, err = ri.Patch(ctx, ref.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: a.opts.FieldManager})
	}
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return true, nil
	}
	return err == nil, err
}

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
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// What becomes of an object a Work lets go of — because the Work was removed
// (Remove: the placement was deleted, the cluster unselected, the agent leaves) or no
// longer lists it (a manifest dropped) — is decided by decideRemoval, in this order:
//
//  1. An object that no longer carries the Work's annotation is not the Work's any
//     more (another Work or someone else took it): it is left alone.
//  1a. An object the record of another Work lists too (both placements allow
//     co-ownership, or the other Work holds the Namespace as create-only) is handed
//     over to that Work: its annotation names that Work from then on.
//  2. With deleteStrategy.propagationPolicy Abandon, it is released.
//  3. An object the Work took over (it existed on the member before the Work first
//     applied it, or the Work cannot prove it created it: ObjectRef.createdBy) is
//     released, unless deleteStrategy.takenOver is Delete.
//  4. A Namespace that holds objects no Work applied, objects another Work applies
//     (whose record does not list the Namespace: 1a), or that the agent could not
//     check, is released (namespaceInUse), whatever the delete strategy says.
//  5. Otherwise it is deleted.
//
// Released means left on the member without the Work's annotation, the applied-by
// label, the last-applied annotation and the agent's field ownership: the member's
// users own it again. Every release is logged, counted in
// flotilla_agent_objects_released_total{reason} and returned to the caller (Remove
// hands it to the hub before the Work is let go).

// removalAction is what becomes of an object its Work lets go of.
type removalAction int

const (
	removalDelete removalAction = iota
	removalRelease
	// removalLeave leaves an object that is not the Work's any more as it is.
	removalLeave
	// removalHandOver gives the object to the other Work that lists it
	// (removalFacts.sharedWith).
	removalHandOver
)

// removalFacts are what decideRemoval decides on.
type removalFacts struct {
	// workName is the Work letting go; owner is the Work the object's
	// AnnotationWork names now.
	workName, owner string
	// sharedWith is another Work whose record lists the object; "" if none.
	sharedWith string
	// deletePolicy and takenOverPolicy are the Work's delete strategy.
	deletePolicy    placementv1beta1.DeletePropagationPolicy
	takenOverPolicy placementv1beta1.TakenOverPolicy
	// created is true when the Work created the object (ObjectRef.createdBy).
	created bool
	// inUse says, for a Namespace, why it must stay (what it holds that no Work
	// applied); empty if nothing or for other kinds. Only looked up when the
	// other facts would delete the object.
	inUse string
}

// needsNamespaceCheck reports whether the facts, without inUse, would delete the
// object: only then must a Namespace be checked for objects no Work applied.
func (f removalFacts) needsNamespaceCheck() bool {
	f.inUse = ""
	action, _, _ := decideRemoval(f)
	return action == removalDelete
}

// decideRemoval decides what becomes of an object a Work lets go of, with the
// reason and message of a release (the rules above).
func decideRemoval(f removalFacts) (action removalAction, reason, message string) {
	switch {
	case f.owner != f.workName:
		return removalLeave, "", ""
	case f.sharedWith != "":
		return removalHandOver, "", ""
	case f.deletePolicy == placementv1beta1.DeletePropagationPolicyAbandon:
		return removalRelease, placementv1beta1.ReasonReleasedAbandon, "deleteStrategy.propagationPolicy is Abandon"
	case !f.created && f.takenOverPolicy != placementv1beta1.TakenOverPolicyDelete:
		return removalRelease, placementv1beta1.ReasonReleasedTakenOver,
			"it existed on the member cluster before the placement applied it; set deleteStrategy.takenOver to Delete to delete such objects"
	case f.inUse != "":
		return removalRelease, placementv1beta1.ReasonReleasedNamespaceInUse, f.inUse + "; a namespace is never deleted while it holds objects no placement applied"
	default:
		return removalDelete, "", ""
	}
}

// Released is an object the Applier left on the member cluster, instead of deleting
// it, when its Work let go of it.
type Released struct {
	// Object is the object released.
	Object ObjectRef
	// Reason is one of placementv1beta1.ReasonReleased*.
	Reason string
	// Message says why, for people.
	Message string
}

func (r Released) String() string {
	return fmt.Sprintf("%s was kept (%s): %s", r.Object, r.Reason, r.Message)
}

// letGo carries one removal: the Work's delete strategy, and what the removal did.
type letGo struct {
	workName        string
	deletePolicy    placementv1beta1.DeletePropagationPolicy
	takenOverPolicy placementv1beta1.TakenOverPolicy
	// deleted holds the UIDs of the objects this removal deleted: their dependents
	// are being garbage-collected, they are no member's own objects.
	deleted map[types.UID]bool
	// released lists the objects released, in order.
	released []Released
	// shared holds the objects other Works' records list too, each with one of
	// those Works (sharedWith): such an object is handed over, never let go of.
	shared map[objectKey]string
}

// removalOrder returns the objects of a record in the order they are let go of:
// last applied first, and Namespaces after everything else, so that a Namespace is
// checked once what the Work placed in it is gone or released.
func removalOrder(refs []ObjectRef) []ObjectRef {
	out := make([]ObjectRef, 0, len(refs))
	var namespaces []ObjectRef
	for i := len(refs) - 1; i >= 0; i-- {
		if refs[i].Group == "" && refs[i].Kind == namespaceGK.Kind {
			namespaces = append(namespaces, refs[i])
			continue
		}
		out = append(out, refs[i])
	}
	return append(out, namespaces...)
}

// letGoOf lets go of refs, as removalOrder says. It returns those it could not let
// go of. Namespaces are not let go of in a round where another object failed: a
// Namespace deleted then would delete that object too, whatever was decided for it.
func (a *Applier) letGoOf(ctx context.Context, lg *letGo, refs []ObjectRef) (kept []ObjectRef, err error) {
	var errs []error
	for _, ref := range removalOrder(refs) {
		if len(errs) > 0 && ref.Group == "" && ref.Kind == namespaceGK.Kind {
			kept = append(kept, ref)
			continue
		}
		if err := a.letGoOne(ctx, lg, ref); err != nil {
			kept = append(kept, ref)
			errs = append(errs, err)
		}
	}
	// Keep them in the record's order.
	slices.SortStableFunc(kept, func(x, y ObjectRef) int {
		return slices.Index(refs, x) - slices.Index(refs, y)
	})
	return kept, errors.Join(errs...)
}

// removeUnlisted lets go of the objects the Work's record holds that the Work no
// longer lists, as the Work's delete strategy says. It returns those it could not
// let go of, to keep in the record, and those it released.
func (a *Applier) removeUnlisted(ctx context.Context, s *scope) (kept []ObjectRef, released []Released, err error) {
	if s.record == nil {
		return nil, nil, nil
	}
	listed := listedKeys(s.manifests)
	var unlisted []ObjectRef
	for _, ref := range s.record.Applied {
		if !listed[ref.key()] {
			unlisted = append(unlisted, ref)
		}
	}
	if len(unlisted) == 0 {
		return nil, nil, nil
	}
	shared, err := a.sharedWith(ctx, s.work.Name)
	if err != nil {
		return unlisted, nil, err
	}
	lg := &letGo{workName: s.work.Name, deletePolicy: deletePolicyOf(s.work), takenOverPolicy: takenOverPolicyOf(s.work), deleted: map[types.UID]bool{}, shared: shared}
	kept, err = a.letGoOf(ctx, lg, unlisted)
	if err != nil {
		return kept, lg.released, fmt.Errorf("failed to remove the objects the Work no longer lists: %w", err)
	}
	return kept, lg.released, nil
}

// removeAll lets go of every object of a record. On failure the record is updated to
// hold what is left. It returns the objects released.
func (a *Applier) removeAll(ctx context.Context, rec *Record) ([]Released, error) {
	shared, err := a.sharedWith(ctx, rec.WorkName)
	if err != nil {
		return nil, err
	}
	lg := &letGo{workName: rec.WorkName, deletePolicy: rec.DeletePolicy, takenOverPolicy: rec.TakenOverPolicy, deleted: map[types.UID]bool{}, shared: shared}
	kept, err := a.letGoOf(ctx, lg, rec.Applied)
	if err == nil {
		return lg.released, nil
	}
	err = fmt.Errorf("failed to remove the objects of Work %q: %w", rec.WorkName, err)
	left := *rec
	left.Applied = kept
	left.AllApplied = false
	if !left.equal(rec) {
		if perr := a.putRecord(ctx, &left); perr != nil {
			return lg.released, errors.Join(err, perr)
		}
	}
	return lg.released, err
}

// sharedWith returns the objects that the records of Works other than workName
// list, each with one of those Works (the first by name). Two Works list the same
// object only when both placements allow co-ownership (the hub leaves an object
// out of a later placement otherwise); such an object outlives either Work.
func (a *Applier) sharedWith(ctx context.Context, workName string) (map[objectKey]string, error) {
	recs, err := a.listRecords(ctx)
	if err != nil {
		return nil, err
	}
	out := map[objectKey]string{}
	for _, r := range recs {
		if r.WorkName == workName {
			continue
		}
		for _, ref := range r.Applied {
			if _, ok := out[ref.key()]; !ok {
				out[ref.key()] = r.WorkName
			}
		}
	}
	return out, nil
}

// letGoOne reads one object the Work applied and deletes, releases, hands over
// or leaves it, as decideRemoval says.
func (a *Applier) letGoOne(ctx context.Context, lg *letGo, ref ObjectRef) error {
	log := ctrllog.FromContext(ctx).WithValues("kind", ref.Kind, "object", klog.KRef(ref.Namespace, ref.Name))
	ri, err := a.resourceOfRef(ctx, ref)
	if isNoMatch(err) {
		log.V(1).Info("The kind of an applied object is no longer served; nothing to remove")
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to find the resource of %s: %w", ref, err)
	}
	live, err := ri.Get(ctx, ref.Name, metav1.GetOptions{})
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to get %s: %w", ref, err)
	}
	facts := removalFacts{
		workName: lg.workName, owner: live.GetAnnotations()[AnnotationWork], sharedWith: lg.shared[ref.key()],
		deletePolicy: lg.deletePolicy, takenOverPolicy: lg.takenOverPolicy, created: ref.createdBy(live),
	}
	if ref.Group == "" && ref.Kind == namespaceGK.Kind && facts.needsNamespaceCheck() {
		if facts.inUse, err = a.namespaceInUse(ctx, ref.Name, lg.workName, lg.deleted); err != nil {
			return err
		}
	}
	action, reason, message := decideRemoval(facts)
	switch action {
	case removalLeave:
		log.V(1).Info("An applied object is no longer the Work's; leaving it", "annotation", facts.owner)
		return nil
	case removalHandOver:
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, AnnotationWork, facts.sharedWith)
		if _, err := ri.Patch(ctx, ref.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: a.opts.FieldManager}); err != nil && !isNotFound(err) {
			return fmt.Errorf("failed to hand %s over to Work %q: %w", ref, facts.sharedWith, err)
		}
		log.Info("Handed an object over to another Work that applies it too", "work", facts.sharedWith)
		return nil
	case removalRelease:
		if err := a.releaseObject(ctx, ri, live); err != nil {
			return fmt.Errorf("failed to release %s: %w", ref, err)
		}
		objectsReleasedTotal.WithLabelValues(reason).Inc()
		lg.released = append(lg.released, Released{Object: ref, Reason: reason, Message: message})
		log.Info("Released an object of the Work instead of deleting it", "reason", reason, "why", message)
		return nil
	}

	if live.GetDeletionTimestamp() != nil {
		lg.deleted[live.GetUID()] = true
		return nil
	}
	uid := live.GetUID()
	background := metav1.DeletePropagationBackground
	err = ri.Delete(ctx, ref.Name, metav1.DeleteOptions{
		// Only the object that was checked: not one created again under the same name.
		Preconditions:     &metav1.Preconditions{UID: &uid},
		PropagationPolicy: &background,
	})
	if isNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to delete %s: %w", ref, err)
	}
	lg.deleted[uid] = true
	manifestsRemovedTotal.Inc()
	log.Info("Deleted an object of the Work")
	return nil
}

// releaseObject leaves an object on the member and takes off what makes it the
// Work's: the provenance annotations (AnnotationWork among them),
// AnnotationLastApplied, LabelAppliedBy and the agent's entries in managedFields. The patch carries the object's resourceVersion: an
// object changed since it was read is not released now (the removal is retried).
func (a *Applier) releaseObject(ctx context.Context, ri dynamic.ResourceInterface, live *unstructured.Unstructured) error {
	annotations := map[string]any{AnnotationLastApplied: nil}
	for _, k := range placementv1beta1.ProvenanceAnnotations {
		annotations[k] = nil
	}
	md := map[string]any{
		"resourceVersion": live.GetResourceVersion(),
		"annotations":     annotations,
		"labels":          map[string]any{LabelAppliedBy: nil},
	}
	var others []any
	ownedByAgent := false
	for _, mf := range live.GetManagedFields() {
		if mf.Manager == a.opts.FieldManager {
			ownedByAgent = true
			continue
		}
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&mf)
		if err != nil {
			return err
		}
		others = append(others, raw)
	}
	if ownedByAgent {
		if len(others) == 0 {
			// An empty list would leave managedFields as they are; one empty entry
			// clears them (the next writer starts them afresh).
			others = []any{map[string]any{}}
		}
		md["managedFields"] = others
	}
	patch, err := json.Marshal(map[string]any{"metadata": md})
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, live.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: a.opts.FieldManager})
	if isNotFound(err) {
		return nil
	}
	return err
}

// resourceOfRef returns the resource of a recorded object: at its recorded version if
// still served, else at any served version of its kind.
func (a *Applier) resourceOfRef(ctx context.Context, ref ObjectRef) (dynamic.ResourceInterface, error) {
	gk := schema.GroupKind{Group: ref.Group, Kind: ref.Kind}
	mapping, err := a.mapper.RESTMappingWithContext(ctx, gk, ref.Version)
	if isNoMatch(err) {
		a.mapper.ResetWithContext(ctx)
		mapping, err = a.mapper.RESTMappingWithContext(ctx, gk, ref.Version)
		if isNoMatch(err) {
			mapping, err = a.mapper.RESTMappingWithContext(ctx, gk)
		}
	}
	if err != nil {
		return nil, err
	}
	if mapping.Scope.Name() == meta.RESTScopeNameRoot {
		return a.dynamic.Resource(mapping.Resource), nil
	}
	return a.dynamic.Resource(mapping.Resource).Namespace(ref.Namespace), nil
}

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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// removeUnlisted removes the objects the Work's record holds that the Work no longer
// lists, as the Work's delete strategy says. It returns those it could not remove,
// to keep in the record.
func (a *Applier) removeUnlisted(ctx context.Context, s *scope) (kept []ObjectRef, err error) {
	if s.record == nil {
		return nil, nil
	}
	listed := listedKeys(s.manifests)
	var unlisted []ObjectRef
	for _, ref := range s.record.Applied {
		if !listed[ref.key()] {
			unlisted = append(unlisted, ref)
		}
	}
	if len(unlisted) == 0 {
		return nil, nil
	}
	shared, err := a.sharedWith(ctx, s.work.Name)
	if err != nil {
		return unlisted, err
	}
	policy := deletePolicyOf(s.work)
	var errs []error
	for _, ref := range unlisted {
		if err := a.release(ctx, s.work.Name, ref, policy, shared); err != nil {
			kept = append(kept, ref)
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return kept, fmt.Errorf("failed to remove the objects the Work no longer lists: %w", err)
	}
	return kept, nil
}

// removeAll removes every object of a record, last applied first. On failure the
// record is updated to hold what is left.
func (a *Applier) removeAll(ctx context.Context, rec *Record) error {
	shared, err := a.sharedWith(ctx, rec.WorkName)
	if err != nil {
		return err
	}
	var kept []ObjectRef
	var errs []error
	for i := len(rec.Applied) - 1; i >= 0; i-- {
		ref := rec.Applied[i]
		if err := a.release(ctx, rec.WorkName, ref, rec.DeletePolicy, shared); err != nil {
			kept = append([]ObjectRef{ref}, kept...)
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	err = fmt.Errorf("failed to remove the objects of Work %q: %w", rec.WorkName, errors.Join(errs...))
	left := *rec
	left.Applied = kept
	left.AllApplied = false
	if !left.equal(rec) {
		if perr := a.putRecord(ctx, &left); perr != nil {
			return errors.Join(err, perr)
		}
	}
	return err
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

// release deletes an object the Work applied or, when policy is Abandon, leaves it and
// takes the Work's annotation off. Objects that no longer carry the Work's annotation
// are not the Work's any more and are left alone. An object another Work lists too
// (shared, from sharedWith) is never deleted: it is handed over to that Work (its
// annotation names that Work, whose watch then checks it again).
func (a *Applier) release(ctx context.Context, workName string, ref ObjectRef, policy placementv1beta1.DeletePropagationPolicy, shared map[objectKey]string) error {
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
	if owner := live.GetAnnotations()[AnnotationWork]; owner != workName {
		log.V(1).Info("An applied object is no longer the Work's; leaving it", "annotation", owner)
		return nil
	}
	if other := shared[ref.key()]; other != "" {
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, AnnotationWork, other)
		if _, err := ri.Patch(ctx, ref.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: a.opts.FieldManager}); err != nil && !isNotFound(err) {
			return fmt.Errorf("failed to hand %s over to Work %q: %w", ref, other, err)
		}
		log.Info("Handed an object over to another Work that applies it too", "work", other)
		return nil
	}

	if policy == placementv1beta1.DeletePropagationPolicyAbandon {
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null}}}`, AnnotationWork)
		_, err := ri.Patch(ctx, ref.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: a.opts.FieldManager})
		if err != nil && !isNotFound(err) {
			return fmt.Errorf("failed to abandon %s: %w", ref, err)
		}
		log.V(1).Info("Abandoned an applied object")
		return nil
	}

	if live.GetDeletionTimestamp() != nil {
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
	manifestsRemovedTotal.Inc()
	log.Info("Deleted an object of the Work")
	return nil
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

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
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// AddFinalizer adds finalizer to obj, unless it is there, and RemoveFinalizer
// removes it: the one way the hub writes finalizers. The write is a JSON merge
// patch under manager that carries obj's resourceVersion. A merge patch
// replaces the whole finalizers list, so without the resourceVersion a writer
// that read the object before another added its own finalizer would drop it;
// with it, that write fails with Conflict (apierrors.IsConflict) and the
// controller reads again and retries. On success obj is the object as the API
// server returned it; on failure obj's finalizers are as they were.
func AddFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer, manager string) error {
	_, err := AddFinalizerWith(ctx, c, obj, finalizer, manager, func() bool { return false })
	return err
}

// AddFinalizerWith adds finalizer to obj as AddFinalizer does, in one write
// with the changes change makes to obj's other fields, for a writer that sets
// them at the same time (membership's first write of a member: its finalizer,
// built-in labels and taints, one write per member of a fleet that joins at
// once). change reports whether it changed obj. Nothing is written when obj
// has the finalizer and change changed nothing; written says whether obj was
// written. On failure obj's finalizers are as they were; what change did to
// its other fields stays in obj, unwritten.
func AddFinalizerWith(ctx context.Context, c client.Client, obj client.Object, finalizer, manager string, change func() bool) (written bool, err error) {
	before := obj.DeepCopyObject().(client.Object)
	changed := change()
	if !controllerutil.ContainsFinalizer(obj, finalizer) {
		controllerutil.AddFinalizer(obj, finalizer)
		changed = true
	}
	if !changed {
		return false, nil
	}
	if err := patchLocked(ctx, c, obj, before, manager); err != nil {
		return false, fmt.Errorf("failed to add finalizer %s of %s: %w", finalizer, client.ObjectKeyFromObject(obj), err)
	}
	return true, nil
}

// RemoveFinalizer removes finalizer from obj, if it is there, as AddFinalizer
// adds it. An object that is gone counts as done.
func RemoveFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer, manager string) error {
	if !controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	return client.IgnoreNotFound(patchFinalizers(ctx, c, obj, manager, "remove", finalizer, func() { controllerutil.RemoveFinalizer(obj, finalizer) }))
}

func patchFinalizers(ctx context.Context, c client.Client, obj client.Object, manager, verb, finalizer string, change func()) error {
	before := obj.DeepCopyObject().(client.Object)
	change()
	if err := patchLocked(ctx, c, obj, before, manager); err != nil {
		return fmt.Errorf("failed to %s finalizer %s of %s: %w", verb, finalizer, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

// patchLocked writes what changed from before to obj as a JSON merge patch
// under manager that carries before's resourceVersion; on failure obj's
// finalizers are set back to before's.
func patchLocked(ctx context.Context, c client.Client, obj, before client.Object, manager string) error {
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	if err := c.Patch(ctx, obj, patch, client.FieldOwner(manager)); err != nil {
		obj.SetFinalizers(before.GetFinalizers())
		return err
	}
	return nil
}

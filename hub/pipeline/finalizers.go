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
	if controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	return patchFinalizers(ctx, c, obj, manager, "add", finalizer, func() { controllerutil.AddFinalizer(obj, finalizer) })
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
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	if err := c.Patch(ctx, obj, patch, client.FieldOwner(manager)); err != nil {
		obj.SetFinalizers(before.GetFinalizers())
		return fmt.Errorf("failed to %s finalizer %s of %s: %w", verb, finalizer, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// createOnly reports whether a manifest asks only to exist on the member
// (placementv1beta1.AnnotationCreateOnly), as the Namespace a ResourcePlacement
// brings does.
func createOnly(m *manifest) bool {
	return m.obj != nil && m.obj.GetAnnotations()[placementv1beta1.AnnotationCreateOnly] == "true"
}

// ensureExists creates the object of a create-only manifest when the member lacks
// it, and otherwise leaves the object as it is. The object never carries the Work's
// annotation, so it is never updated, taken over or removed for the Work: other
// placements and the member's own users may rely on it.
func (a *Applier) ensureExists(ctx context.Context, m *manifest) result {
	live, err := a.get(ctx, m)
	if err != nil {
		return failed(apiMessage(err))
	}
	if live != nil {
		return appliedResult(live)
	}
	obj := m.obj.DeepCopy()
	ann := obj.GetAnnotations()
	delete(ann, placementv1beta1.AnnotationCreateOnly)
	if len(ann) == 0 {
		ann = nil
	}
	obj.SetAnnotations(ann)
	out, err := a.resourceOf(m).Create(ctx, obj, metav1.CreateOptions{FieldManager: a.opts.FieldManager})
	if apierrors.IsAlreadyExists(err) {
		if out, err = a.get(ctx, m); err == nil && out != nil {
			return appliedResult(out)
		}
	}
	if err != nil {
		return failed(apiMessage(err))
	}
	return appliedResult(out)
}

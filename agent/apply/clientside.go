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
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// write sends a resolved manifest to the member as the apply strategy says and
// returns the object as it is afterwards. live is the object on the member (nil if
// there is none), ours whether it is already the Work's. Server-side apply takes
// fields over from other field managers as forceConflicts says; a three-way merge
// always does.
func (a *Applier) write(ctx context.Context, s *scope, m *manifest, live *unstructured.Unstructured, ours bool) (*unstructured.Unstructured, error) {
	if s.strategy.Type == placementv1beta1.ApplyStrategyTypeClientSideApply {
		return a.clientSideApply(ctx, m, live, s.work.Name)
	}
	return a.resourceOf(m).Apply(ctx, m.obj.GetName(), a.body(m, s.work.Name), metav1.ApplyOptions{
		FieldManager: a.opts.FieldManager,
		Force:        forceConflicts(s.strategy, ours),
	})
}

// clientSideApply applies a manifest as kubectl apply does: the object is created
// if missing; otherwise a three-way merge patch is computed from the configuration
// last applied (AnnotationLastApplied on the object), the manifest and the object on
// the member, so that fields the hub dropped since are removed and fields set only on
// the member are kept. Built-in kinds get a strategic merge patch (lists merged by
// their keys), other kinds a JSON merge patch.
func (a *Applier) clientSideApply(ctx context.Context, m *manifest, live *unstructured.Unstructured, workName string) (*unstructured.Unstructured, error) {
	body := a.body(m, workName)
	config, err := json.Marshal(body.Object)
	if err != nil {
		return nil, fmt.Errorf("failed to encode %s: %w", m.describe(), err)
	}
	ann := body.GetAnnotations()
	ann[AnnotationLastApplied] = string(config)
	body.SetAnnotations(ann)
	ri := a.resourceOf(m)
	if live == nil {
		return ri.Create(ctx, body, metav1.CreateOptions{FieldManager: a.opts.FieldManager})
	}
	modified, err := json.Marshal(body.Object)
	if err != nil {
		return nil, fmt.Errorf("failed to encode %s: %w", m.describe(), err)
	}
	current, err := json.Marshal(live.Object)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the member's %s: %w", m.describe(), err)
	}
	original := []byte(live.GetAnnotations()[AnnotationLastApplied])
	patch, patchType, err := threeWayPatch(m, original, modified, current)
	if err != nil {
		return nil, fmt.Errorf("failed to compute the three-way merge of %s: %w", m.describe(), err)
	}
	return ri.Patch(ctx, m.obj.GetName(), patchType, patch, metav1.PatchOptions{FieldManager: a.opts.FieldManager})
}

// threeWayPatch computes the patch that turns current into modified, deleting what
// original had and modified has not.
func threeWayPatch(m *manifest, original, modified, current []byte) ([]byte, types.PatchType, error) {
	if typed, err := scheme.Scheme.New(m.gvk); err == nil {
		meta, err := strategicpatch.NewPatchMetaFromStruct(typed)
		if err != nil {
			return nil, "", err
		}
		patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, true)
		return patch, types.StrategicMergePatchType, err
	}
	patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current)
	return patch, types.MergePatchType, err
}

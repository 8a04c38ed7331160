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

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// BindingWriter is how one controller writes bindings: every write carries the
// controller's field manager, and its status writes touch only the condition
// types it owns. A controller decides what to write with a pure planner and
// carries the plan out with its BindingWriter; it never calls Update.
type BindingWriter struct {
	Client client.Client
	// Manager is the controller's field manager (Manager* above).
	Manager string
	// Conditions are the binding condition types the controller owns.
	Conditions []string
}

// Create creates a binding under the writer's field manager.
func (w BindingWriter) Create(ctx context.Context, b placementv1beta1.BindingObj) error {
	return w.Client.Create(ctx, b, client.FieldOwner(w.Manager))
}

// PatchSpec sets spec fields of b (SpecPatch: JSON names, nil removes; with a
// non-empty ifState only while spec.state is still ifState). On success b holds
// the binding as the API server returned it.
func (w BindingWriter) PatchSpec(ctx context.Context, b placementv1beta1.BindingObj, ifState placementv1beta1.BindingState, set map[string]any) error {
	patch, err := SpecPatch(b, ifState, set)
	if err != nil {
		return fmt.Errorf("failed to encode the patch of binding %s: %w", b.GetName(), err)
	}
	if err := w.Client.Patch(ctx, b, patch, client.FieldOwner(w.Manager)); err != nil {
		return fmt.Errorf("failed to update binding %s: %w", b.GetName(), err)
	}
	return nil
}

// ApplyStatus writes the writer's part of b's status (ApplyBindingStatus):
// nothing when b already shows it.
func (w BindingWriter) ApplyStatus(ctx context.Context, b placementv1beta1.BindingObj, want BindingStatus) error {
	return ApplyBindingStatus(ctx, w.Client, b, w.Manager, w.Conditions, want)
}

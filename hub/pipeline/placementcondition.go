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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// ApplyPlacementCondition writes one condition of a placement's status, of
// type typ (the placement's own name for it: PlacementConditionType), as
// manager's only part of that status, with server-side apply; want nil
// removes it. It writes nothing when the placement already shows want at its
// generation (or no such condition when want is nil), and reports whether it
// wrote.
func ApplyPlacementCondition(ctx context.Context, c client.Client, key PlacementKey, p placementv1beta1.PlacementObj, manager, typ string, want *metav1.Condition) (bool, error) {
	existing := conditions.Get(p.GetPlacementStatus().Conditions, typ)
	if want == nil && existing == nil {
		return false, nil
	}
	if want != nil && existing != nil && existing.Status == want.Status && existing.Reason == want.Reason && existing.Message == want.Message &&
		existing.ObservedGeneration == p.GetGeneration() {
		return false, nil
	}
	own := OwnConditions(p.GetPlacementStatus().Conditions, typ)
	if want != nil {
		conditions.Set(&own, typ, want.Status, want.Reason, want.Message, p.GetGeneration())
	} else {
		own = []metav1.Condition{}
	}
	meta := map[string]any{"name": p.GetName()}
	if p.GetNamespace() != "" {
		meta["namespace"] = p.GetNamespace()
	}
	body := map[string]any{
		"apiVersion": placementv1beta1.GroupVersion.String(),
		"kind":       key.Kind(),
		"metadata":   meta,
		"status":     map[string]any{"conditions": own},
	}
	data, err := json.Marshal(body)
	if err != nil {
		return false, fmt.Errorf("failed to encode the %s condition: %w", typ, err)
	}
	if err := c.Status().Patch(ctx, p, client.RawPatch("application/apply-patch+yaml", data), client.FieldOwner(manager), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("failed to apply the %s condition: %w", typ, err)
	}
	return true, nil
}

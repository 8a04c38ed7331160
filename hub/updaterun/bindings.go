package updaterun

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// FieldManager is the field manager of everything this package writes.
const FieldManager = "flotilla-updaterun"

// isActive reports whether a binding holds its placement on its cluster: Scheduled
// or Bound, and not being deleted.
func isActive(b *placementv1beta1.ClusterResourceBinding) bool {
	return b.DeletionTimestamp.IsZero() &&
		(b.Spec.State == placementv1beta1.BindingStateScheduled || b.Spec.State == placementv1beta1.BindingStateBound)
}

// viewOf is what a run needs to know of a binding.
func viewOf(b *placementv1beta1.ClusterResourceBinding) bindingView {
	if b == nil || !isActive(b) {
		return bindingView{}
	}
	return bindingView{
		active:    true,
		snapshot:  b.Spec.ResourceSnapshotName,
		available: conditions.IsCurrentTrue(b.Status.Conditions, placementv1beta1.ConditionAvailable, b.Generation),
	}
}

// moveBinding makes b Bound to the snapshot with the apply strategy, with a JSON
// patch of exactly those fields that applies only while spec.state is still what
// was read (the scheduler may unschedule the cluster meanwhile). It leaves b as
// the API server returned it.
func moveBinding(ctx context.Context, c client.Client, b *placementv1beta1.ClusterResourceBinding, snapshot string, apply *placementv1beta1.ApplyStrategy) error {
	if b.Spec.State == placementv1beta1.BindingStateBound && b.Spec.ResourceSnapshotName == snapshot &&
		equality.Semantic.DeepEqual(b.Spec.ApplyStrategy, apply) {
		return nil
	}
	type op = map[string]any
	ops := []op{
		{"op": "test", "path": "/spec/state", "value": b.Spec.State},
		{"op": "replace", "path": "/spec/state", "value": placementv1beta1.BindingStateBound},
		{"op": "add", "path": "/spec/resourceSnapshotName", "value": snapshot},
	}
	switch {
	case apply != nil:
		ops = append(ops, op{"op": "add", "path": "/spec/applyStrategy", "value": apply})
	case b.Spec.ApplyStrategy != nil:
		ops = append(ops, op{"op": "remove", "path": "/spec/applyStrategy"})
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return fmt.Errorf("failed to encode the patch of binding %s: %w", b.Name, err)
	}
	if err := c.Patch(ctx, b, client.RawPatch(types.JSONPatchType, data), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("failed to move binding %s to resource snapshot %s: %w", b.Name, snapshot, err)
	}
	return nil
}

// applyRolloutStarted writes the binding's RolloutStarted condition (at the
// binding's generation) with server-side apply on the status subresource, as the
// only condition this package owns there; it writes nothing when the binding
// already shows it. With conditional, the apply carries the binding's
// resourceVersion and fails with a conflict if the binding changed since it was
// read.
func applyRolloutStarted(ctx context.Context, c client.Client, b *placementv1beta1.ClusterResourceBinding, want condition, conditional bool) error {
	have := conditions.Get(b.Status.Conditions, placementv1beta1.ConditionRolloutStarted)
	if have != nil && have.Status == want.status && have.Reason == want.reason && have.Message == want.message && have.ObservedGeneration == b.Generation {
		return nil
	}
	var own []metav1.Condition
	if have != nil {
		own = append(own, *have)
	}
	set(&own, placementv1beta1.ConditionRolloutStarted, want, b.Generation)
	body := map[string]any{
		"apiVersion": placementv1beta1.GroupVersion.String(),
		"kind":       "ClusterResourceBinding",
		"metadata":   map[string]any{"name": b.Name},
		"status":     map[string]any{"conditions": own},
	}
	if conditional {
		body["metadata"] = map[string]any{"name": b.Name, "resourceVersion": b.ResourceVersion}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("failed to encode the status of binding %s: %w", b.Name, err)
	}
	if err := c.Status().Patch(ctx, b, client.RawPatch(types.ApplyPatchType, data), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("failed to apply the RolloutStarted condition of binding %s: %w", b.Name, err)
	}
	return nil
}

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

package updaterun

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/overrides"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// viewOf is what a run needs to know of a binding.
func viewOf(b *placementv1beta1.ClusterResourceBinding) bindingView {
	if b == nil || !pipeline.IsActive(b) {
		return bindingView{}
	}
	return bindingView{
		active:    true,
		snapshot:  b.Spec.ResourceSnapshotName,
		available: conditions.IsCurrentTrue(b.Status.Conditions, placementv1beta1.ConditionAvailable, b.Generation),
	}
}

// moveBinding makes b Bound to the snapshot with the apply strategy and the
// override snapshots that apply on its cluster (overrides.Planner), with a JSON
// patch of exactly those fields that applies only while spec.state is still what
// was read (the scheduler may unschedule the cluster meanwhile). It leaves b as
// the API server returned it.
func moveBinding(ctx context.Context, c client.Client, b *placementv1beta1.ClusterResourceBinding, snapshot string, apply *placementv1beta1.ApplyStrategy, refs overrides.BindingRefs) error {
	if b.Spec.State == placementv1beta1.BindingStateBound && b.Spec.ResourceSnapshotName == snapshot &&
		equality.Semantic.DeepEqual(b.Spec.ApplyStrategy, apply) && refs.Matches(&b.Spec) {
		return nil
	}
	set := map[string]any{"state": placementv1beta1.BindingStateBound, "resourceSnapshotName": snapshot, "applyStrategy": nil}
	refs.Set(set)
	if apply != nil {
		set["applyStrategy"] = apply
	}
	patch, err := pipeline.SpecPatch(b, b.Spec.State, set)
	if err != nil {
		return fmt.Errorf("failed to encode the patch of binding %s: %w", b.Name, err)
	}
	if err := c.Patch(ctx, b, patch, client.FieldOwner(pipeline.ManagerUpdateRun)); err != nil {
		return fmt.Errorf("failed to move binding %s to resource snapshot %s: %w", b.Name, snapshot, err)
	}
	return nil
}

// applyRolloutStarted writes the binding's RolloutStarted condition (at the
// binding's generation), the only condition this package owns there, with
// pipeline.ApplyBindingStatus; it writes nothing when the binding already shows
// it. With conditional, the apply carries the binding's resourceVersion and
// fails with a conflict if the binding changed since it was read.
func applyRolloutStarted(ctx context.Context, c client.Client, b *placementv1beta1.ClusterResourceBinding, want condition, conditional bool) error {
	own := pipeline.OwnConditions(b.Status.Conditions, placementv1beta1.ConditionRolloutStarted)
	set(&own, placementv1beta1.ConditionRolloutStarted, want, b.Generation)
	status := pipeline.BindingStatus{Conditions: own}
	if conditional {
		status.IfResourceVersion = b.ResourceVersion
	}
	return pipeline.ApplyBindingStatus(ctx, c, b, pipeline.ManagerUpdateRun, []string{placementv1beta1.ConditionRolloutStarted}, status)
}

// listClusterBindings lists a ClusterResourcePlacement's bindings, in every
// state (staged update runs drive ClusterResourcePlacements only).
func listClusterBindings(ctx context.Context, r client.Reader, placement string) ([]placementv1beta1.ClusterResourceBinding, error) {
	list := &placementv1beta1.ClusterResourceBindingList{}
	if err := r.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: placement}); err != nil {
		return nil, fmt.Errorf("failed to list the bindings of %s: %w", placement, err)
	}
	return list.Items, nil
}

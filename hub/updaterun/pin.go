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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/overrides"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// Overrides are pinned at initialization, as the resource snapshot is: the run
// records, for every cluster of its stages, the latest snapshots of the overrides
// that apply there then (status.stagesStatus[].clusters[].resourceOverrideSnapshots
// and clusterResourceOverrideSnapshots), and moves each cluster's binding to
// exactly those. An override edited or created during the run does not reach the
// clusters the run updates (a later run rolls it out), so every cluster of a run
// gets the same resources and the same overrides, whatever stage it is in.

// pinOverrides records in every cluster of stages the override snapshots that
// apply on it with the run's resource snapshot set (whose master is target).
func pinOverrides(ctx context.Context, r client.Reader, placement string, target *placementv1beta1.ClusterResourceSnapshot, stages []placementv1beta1.StageUpdatingStatus) error {
	// Staged update runs drive ClusterResourcePlacements only.
	planner, err := overrides.NewPlanner(ctx, r, pipeline.PlacementKey{Name: placement}, target)
	if err != nil {
		return fmt.Errorf("failed to read the overrides to pin: %w", err)
	}
	for i := range stages {
		for j := range stages[i].Clusters {
			c := &stages[i].Clusters[j]
			refs, err := planner.For(ctx, c.ClusterName)
			if err != nil {
				return fmt.Errorf("failed to pin the overrides of cluster %s: %w", c.ClusterName, err)
			}
			c.ClusterResourceOverrideSnapshots, c.ResourceOverrideSnapshots = refs.Cluster, refs.Namespaced
		}
	}
	return nil
}

// pinnedOverrides returns the override snapshots the run pinned for a cluster,
// without those deleted since (their override was deleted, or edited so often
// that its snapshot history dropped them), which it names in gone: a deleted
// snapshot cannot be applied, and a deleted override should not apply anyway.
func pinnedOverrides(ctx context.Context, r client.Reader, c *placementv1beta1.ClusterUpdatingStatus) (refs overrides.BindingRefs, gone []string, err error) {
	for _, name := range c.ClusterResourceOverrideSnapshots {
		ok, err := exists(ctx, r, types.NamespacedName{Name: name}, &placementv1beta1.ClusterResourceOverrideSnapshot{})
		if err != nil {
			return refs, nil, err
		}
		if !ok {
			gone = append(gone, "ClusterResourceOverrideSnapshot "+name)
			continue
		}
		refs.Cluster = append(refs.Cluster, name)
	}
	for _, n := range c.ResourceOverrideSnapshots {
		ok, err := exists(ctx, r, types.NamespacedName{Namespace: n.Namespace, Name: n.Name}, &placementv1beta1.ResourceOverrideSnapshot{})
		if err != nil {
			return refs, nil, err
		}
		if !ok {
			gone = append(gone, "ResourceOverrideSnapshot "+n.Namespace+"/"+n.Name)
			continue
		}
		refs.Namespaced = append(refs.Namespaced, n)
	}
	return refs, gone, nil
}

func exists(ctx context.Context, r client.Reader, key types.NamespacedName, obj client.Object) (bool, error) {
	err := r.Get(ctx, key, obj)
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("failed to get override snapshot %s: %w", key, err)
	}
}

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
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Cache indexes the pipeline's controllers look objects up by (with
// client.MatchingFields on a manager's client), so that an event about one
// cluster or placement reads only what concerns it.
const (
	// IndexBindingCluster indexes bindings (of both kinds) by spec.targetCluster.
	IndexBindingCluster = "flotilla.binding.targetCluster"
	// IndexBindingPlacement indexes bindings (of both kinds) by their
	// placement-name label; a ResourceBinding's lookup adds its namespace.
	IndexBindingPlacement = "flotilla.binding.placement"
	// IndexEvictionPlacement indexes ClusterResourcePlacementEvictions by
	// spec.placementName.
	IndexEvictionPlacement = "flotilla.eviction.placement"
)

var (
	indexedMu sync.Mutex
	indexed   = map[cache.Cache]bool{}
)

// SetupIndexes registers the indexes with the manager's cache, once per cache;
// every controller that reads through them calls it from SetupWithManager.
func SetupIndexes(mgr ctrl.Manager) error {
	indexedMu.Lock()
	defer indexedMu.Unlock()
	c := mgr.GetCache()
	if indexed[c] {
		return nil
	}
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	for _, b := range []client.Object{&placementv1beta1.ClusterResourceBinding{}, &placementv1beta1.ResourceBinding{}} {
		if err := idx.IndexField(ctx, b, IndexBindingCluster, func(o client.Object) []string {
			return []string{o.(placementv1beta1.BindingObj).GetBindingSpec().TargetCluster}
		}); err != nil {
			return fmt.Errorf("failed to index bindings by cluster: %w", err)
		}
		if err := idx.IndexField(ctx, b, IndexBindingPlacement, func(o client.Object) []string {
			if p := o.GetLabels()[placementv1beta1.LabelPlacementName]; p != "" {
				return []string{p}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("failed to index bindings by placement: %w", err)
		}
	}
	if err := idx.IndexField(ctx, &placementv1beta1.ClusterResourcePlacementEviction{}, IndexEvictionPlacement, func(o client.Object) []string {
		return []string{o.(*placementv1beta1.ClusterResourcePlacementEviction).Spec.PlacementName}
	}); err != nil {
		return fmt.Errorf("failed to index evictions by placement: %w", err)
	}
	indexed[c] = true
	return nil
}

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

package scheduler

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Manual eviction: an executed ClusterResourcePlacementEviction keeps its placement
// off its cluster for as long as the eviction object exists. The eviction
// controller (hub/eviction) decides whether an eviction may execute; the scheduler
// only honours the executed ones, through framework.CycleInput.ExcludedClusters
// and the Evicted plugin.

// ExcludedClusters returns the clusters the placement was evicted from — those of
// its evictions whose Executed condition is True — each with the reason "evicted by
// ClusterResourcePlacementEviction <name>" (the first by name when several evicted
// it from the same cluster). It returns nil when there are none.
func ExcludedClusters(placement string, evictions []placementv1beta1.ClusterResourcePlacementEviction) map[string]string {
	var out map[string]string
	for i := range evictions {
		ev := &evictions[i]
		if ev.Spec.PlacementName != placement || !conditions.IsTrue(ev.Status.Conditions, placementv1beta1.ConditionEvictionExecuted) {
			continue
		}
		if prev, ok := out[ev.Spec.ClusterName]; ok && prev <= evictedBy(ev.Name) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[ev.Spec.ClusterName] = evictedBy(ev.Name)
	}
	return out
}

func evictedBy(eviction string) string {
	return "evicted by ClusterResourcePlacementEviction " + eviction
}

// placementOfEviction maps an eviction to its placement, so that executing or
// deleting an eviction reschedules the placement.
func placementOfEviction(_ context.Context, o client.Object) []reconcile.Request {
	ev, ok := o.(*placementv1beta1.ClusterResourcePlacementEviction)
	if !ok || ev.Spec.PlacementName == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: ev.Spec.PlacementName}}}
}

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

package enqueue

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// PlacementOnCluster is what decides whether a change of one cluster can change
// a placement's scheduling decision: the placement's policy and where it is.
type PlacementOnCluster struct {
	// Policy is the placement's policy (nil: PickAll over the whole fleet).
	Policy *placementv1beta1.PlacementPolicy
	// Dynamic is set when the placement has dynamic selectors (Kratix) that
	// the policy alone does not show.
	Dynamic bool
	// Bound is set when the placement has a binding on the cluster.
	Bound bool
	// Held is how many of the placement's active bindings no eviction asks to
	// leave: the clusters a PickN placement keeps (read only for PickN).
	Held int
}

// ClusterMatters reports whether a change of a cluster (old → new; on a
// creation or deletion both are the cluster) can change the scheduling decision
// of a placement. A placement on the cluster always cares. Any other placement
// cares only when it could pick the cluster: PickFixed names it; PickN still
// wants clusters (it keeps the ones it holds, so a full PickN placement never
// moves for another cluster); and the cluster's labels, before or after, match
// one of its required cluster-affinity terms. Location selectors and dynamic
// selectors are not evaluated here: such placements always care.
func ClusterMatters(p PlacementOnCluster, old, new *clusterv1beta1.MemberCluster) bool {
	if p.Bound || p.Policy == nil {
		return true
	}
	policy := p.Policy
	switch policy.PlacementType {
	case placementv1beta1.PickFixed:
		return slices.Contains(policy.ClusterNames, new.Name)
	case placementv1beta1.PickN:
		if policy.NumberOfClusters != nil && p.Held >= int(*policy.NumberOfClusters) {
			return false
		}
	}
	if p.Dynamic || len(policy.LocationSelectors) > 0 || policy.Affinity == nil || policy.Affinity.ClusterAffinity == nil {
		return true
	}
	req := policy.Affinity.ClusterAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if req == nil || len(req.ClusterSelectorTerms) == 0 {
		return true
	}
	for _, t := range req.ClusterSelectorTerms {
		if t.LabelSelector == nil || labelsMatch(t.LabelSelector, old.Labels) || labelsMatch(t.LabelSelector, new.Labels) {
			return true
		}
	}
	return false
}

// labelsMatch reports whether a selector matches; a selector that does not parse
// (which validation refuses) matches, so that the placement is woken.
func labelsMatch(s *metav1.LabelSelector, l map[string]string) bool {
	sel, err := metav1.LabelSelectorAsSelector(s)
	return err != nil || sel.Matches(labels.Set(l))
}

// HeldClusters counts a placement's active bindings that no eviction asks to
// leave, through the binding index of hub/pipeline (a manager's cached
// client). On an error it returns 0, so that the placement is treated as
// wanting clusters.
func HeldClusters(ctx context.Context, c client.Reader, k pipeline.PlacementKey) int {
	bindings, err := pipeline.ListBindingsCached(ctx, c, k)
	if err != nil {
		return 0
	}
	n := 0
	for _, b := range bindings {
		if pipeline.IsActive(b) && pipeline.EvictionRequested(b) == nil {
			n++
		}
	}
	return n
}

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

package placementaffinity

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

const byName = clusterv1beta1.LabelClusterName

func clusterInZone(name, zone string) clusterv1beta1.MemberCluster {
	if zone == "" {
		return ft.Cluster(name)
	}
	return ft.Cluster(name, ft.Labels("zone", zone))
}

func peer(name, app string, clusters ...string) framework.PlacementPeer {
	return framework.PlacementPeer{Name: name, Labels: map[string]string{"app": app}, Clusters: clusters}
}

// near is a term selecting placements with app=app in the topology key's domains.
func near(app, key string) placementv1beta1.PlacementAffinityTerm {
	return placementv1beta1.PlacementAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, TopologyKey: key}
}

func weighted(w int32, t placementv1beta1.PlacementAffinityTerm) placementv1beta1.WeightedPlacementAffinityTerm {
	return placementv1beta1.WeightedPlacementAffinityTerm{Weight: w, PlacementAffinityTerm: t}
}

func requiring(affinity, anti []placementv1beta1.PlacementAffinityTerm) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{
		PlacementAffinity:     &placementv1beta1.PlacementAffinity{RequiredDuringSchedulingIgnoredDuringExecution: affinity},
		PlacementAntiAffinity: &placementv1beta1.PlacementAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: anti},
	}}
}

func preferring(affinity, anti []placementv1beta1.WeightedPlacementAffinityTerm) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{
		PlacementAffinity:     &placementv1beta1.PlacementAffinity{PreferredDuringSchedulingIgnoredDuringExecution: affinity},
		PlacementAntiAffinity: &placementv1beta1.PlacementAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: anti},
	}}
}

func terms(t ...placementv1beta1.PlacementAffinityTerm) []placementv1beta1.PlacementAffinityTerm {
	return t
}

// world: the back-end runs on eu-1, a cache on us-1 and on a cluster without a
// zone; the placement itself (named test, app=front-end) is on eu-2.
func world(policy *placementv1beta1.PlacementPolicy) framework.CycleInput {
	in := ft.Input(policy,
		clusterInZone("eu-1", "eu"), clusterInZone("eu-2", "eu"), clusterInZone("us-1", "us"), clusterInZone("nozone", ""))
	in.PlacementLabels = map[string]string{"app": "front-end"}
	in.OtherPlacements = []framework.PlacementPeer{
		peer("back-end", "back-end", "eu-1"),
		peer("cache", "cache", "us-1", "nozone"),
		peer("test", "front-end", "eu-2"), // the placement itself, listed by mistake
	}
	return in
}

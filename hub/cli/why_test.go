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

package cli

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestWhyRanksByThePreferenceScoreFirst(t *testing.T) {
	score := func(pref, top, aff int32) *placementv1beta1.ClusterScore {
		return &placementv1beta1.ClusterScore{PreferenceScore: ptr.To(pref), TopologySpreadScore: ptr.To(top), AffinityScore: ptr.To(aff)}
	}
	snap := &placementv1beta1.ClusterSchedulingPolicySnapshot{}
	snap.Status.TargetClusters = []placementv1beta1.ClusterDecision{
		{ClusterName: "primary-1", ClusterScore: score(2, 0, 0)},
		{ClusterName: "secondary-1", ClusterScore: score(1, 0, 50)},
		{ClusterName: "secondary-2", ClusterScore: score(1, 0, 0)},
	}
	w := &why{
		snap:     snap,
		decision: &snap.Status.TargetClusters[1],
		policy:   &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1)},
	}
	var out bytes.Buffer
	w.writeScores(&out)
	want := `
Scores:
  preference score 1: the rank of its group in clusterPreferences (the first of n groups scores n); it outweighs the others.
  affinity score 50: the sum of the weights of the preferred affinity terms it meets.
  topology spread score 0: 0 is best; a crowded topology domain scores below 0.
  It ranks 2nd of 3 scored clusters (preference first, then topology spread, then affinity); the policy asks for 1.
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}

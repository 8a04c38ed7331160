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

package framework

import (
	"cmp"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// ClusterScore is how good a cluster is for the placement. Clusters are ranked by
// PreferenceScore first, then by TopologySpreadScore, then by AffinityScore;
// higher is better.
type ClusterScore struct {
	// PreferenceScore is the rank of the cluster's group in the policy's
	// clusterPreferences (k for the first of k groups, 1 for the last); 0 without
	// clusterPreferences. Being compared first, it outweighs the other scores.
	PreferenceScore int32
	// TopologySpreadScore is how well picking the cluster keeps the topology spread
	// constraints (0 is best; crowded domains score below 0).
	TopologySpreadScore int32
	// AffinityScore is the sum of the weights of the preferred affinity terms the
	// cluster meets (cluster and placement affinity).
	AffinityScore int32
}

// Add returns the sum of two scores.
func (s ClusterScore) Add(o ClusterScore) ClusterScore {
	return ClusterScore{
		PreferenceScore:     s.PreferenceScore + o.PreferenceScore,
		TopologySpreadScore: s.TopologySpreadScore + o.TopologySpreadScore,
		AffinityScore:       s.AffinityScore + o.AffinityScore,
	}
}

// Compare returns -1, 0 or 1 as s ranks below, equal to or above o: preference
// score first, then topology spread score, then affinity score.
func (s ClusterScore) Compare(o ClusterScore) int {
	switch {
	case s.PreferenceScore != o.PreferenceScore:
		return cmp.Compare(s.PreferenceScore, o.PreferenceScore)
	case s.TopologySpreadScore != o.TopologySpreadScore:
		return cmp.Compare(s.TopologySpreadScore, o.TopologySpreadScore)
	}
	return cmp.Compare(s.AffinityScore, o.AffinityScore)
}

// apiScores converts scores to the API form in bulk: the returned values share two
// backing arrays, so converting a thousand scores costs three allocations.
type apiScores struct {
	scores []placementv1beta1.ClusterScore
	ints   []int32
}

func newAPIScores(n int) *apiScores {
	return &apiScores{
		scores: make([]placementv1beta1.ClusterScore, 0, n),
		ints:   make([]int32, 0, 3*n),
	}
}

// convert returns the API form of a score; PreferenceScore is left out when 0
// (the policy has no clusterPreferences: a cluster in none of them is not
// scored).
func (a *apiScores) convert(s ClusterScore) *placementv1beta1.ClusterScore {
	a.ints = append(a.ints, s.AffinityScore, s.TopologySpreadScore, s.PreferenceScore)
	n := len(a.ints)
	out := placementv1beta1.ClusterScore{
		AffinityScore:       &a.ints[n-3],
		TopologySpreadScore: &a.ints[n-2],
	}
	if s.PreferenceScore != 0 {
		out.PreferenceScore = &a.ints[n-1]
	}
	a.scores = append(a.scores, out)
	return &a.scores[len(a.scores)-1]
}

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

package clusteraffinity

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// Candidates names, from the fleet's label index, the clusters that can match a
// required term: for each term, those with a value its equality requirements
// (matchLabels, In) ask for; a cluster matching no term's is rejected by Filter.
// It cannot tell (ok false) when a term has no such requirement.
func (p *Plugin) Candidates(_ context.Context, cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy, fleet *framework.Fleet) ([]int32, bool) {
	s, err := readState(cs, policy)
	if err != nil || len(s.required) == 0 {
		return nil, false
	}
	var out []int32
	for i := range s.required {
		at, ok := labelCandidates(s.required[i].labels, fleet)
		if !ok {
			return nil, false
		}
		out = union(out, at)
	}
	return out, true
}

// labelCandidates returns the positions of the clusters that meet every
// equality requirement of sel (=, ==, in), a superset of those sel matches; ok
// is false when sel has none.
func labelCandidates(sel labels.Selector, fleet *framework.Fleet) ([]int32, bool) {
	reqs, selectable := sel.Requirements()
	if !selectable {
		return nil, true // labels.Nothing(): no cluster
	}
	var out []int32
	found := false
	for i := range reqs {
		r := &reqs[i]
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
		default:
			continue
		}
		var at []int32
		for _, v := range r.ValuesUnsorted() {
			at = union(at, fleet.WithLabel(r.Key(), v))
		}
		if !found {
			out, found = at, true
			continue
		}
		out = intersect(out, at)
	}
	return out, found
}

// union returns the ascending positions in a or b. It returns a or b itself
// when the other is empty: neither is ever modified.
func union(a, b []int32) []int32 {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]int32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] > b[j]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// intersect returns the ascending positions in both a and b, in a new slice.
func intersect(a, b []int32) []int32 {
	out := make([]int32, 0, min(len(a), len(b)))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

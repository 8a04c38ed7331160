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
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"time"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// StateKey names a plugin's entry in the CycleState; by convention the plugin's name.
type StateKey string

// ErrNotFound is returned by CycleState.Read for a key nothing was written under.
var ErrNotFound = errors.New("not found in cycle state")

// CycleState is what one scheduling cycle knows: the input, seen through read-only
// accessors, the clusters selected so far, and the plugins' own per-cycle data
// (written and read back under the plugin's name). A CycleState lives for one cycle
// and is used by one goroutine.
type CycleState struct {
	in       *CycleInput
	infos    []ClusterInfo
	clusters []*ClusterInfo
	byName   map[string]*ClusterInfo
	bound    int
	// nameOrder is whether clusters are in name order (they come from a Fleet).
	nameOrder bool
	// gone are the clusters of active bindings that are not input clusters, sorted.
	gone []string

	selected     []bool
	selectedList []*ClusterInfo

	// data holds the plugins' entries; a slice, as a cycle has a handful of them
	// and plugins read theirs for every cluster.
	data           []stateEntry
	chosenLocation string

	selectorsDone bool
	selectors     []SelectorTerm
	selectorsErr  error
}

// NewCycleState returns the state of a cycle over in. The framework makes one per
// cycle; tests of plugins make their own.
func NewCycleState(in *CycleInput) *CycleState {
	b := &buffers{}
	b.take(inputLen(in))
	return newCycleState(in, b)
}

// inputLen returns the number of input clusters.
func inputLen(in *CycleInput) int {
	if in.Fleet != nil {
		return in.Fleet.Len()
	}
	return len(in.Clusters)
}

// newCycleState returns the state of a cycle over in, in the buffers b (taken
// for inputLen(in) clusters).
func newCycleState(in *CycleInput, b *buffers) *CycleState {
	n := len(b.infos)
	s := &CycleState{
		in:        in,
		infos:     b.infos,
		clusters:  b.clusters,
		selected:  b.selected,
		data:      make([]stateEntry, 0, 8),
		nameOrder: in.Fleet != nil,
	}
	active := activeBindingTargets(in.Bindings)
	for i := range n {
		var mc *clusterv1beta1.MemberCluster
		if in.Fleet != nil {
			mc = in.Fleet.members[i]
		} else {
			mc = &in.Clusters[i]
		}
		found, bound := active[mc.Name]
		if bound && !found {
			active[mc.Name] = true
		} else {
			bound = false // a second cluster of the same name is not bound twice
		}
		s.infos[i] = ClusterInfo{Index: i, Name: mc.Name, Cluster: mc, Bound: bound}
		s.clusters[i] = &s.infos[i]
		if bound {
			s.bound++
		}
	}
	for name, found := range active {
		if !found {
			s.gone = append(s.gone, name)
		}
	}
	slices.Sort(s.gone)
	return s
}

// activeBindingTargets returns the clusters that active bindings target, each
// mapped to false.
func activeBindingTargets(bindings []placementv1beta1.BindingObj) map[string]bool {
	out := make(map[string]bool, len(bindings))
	for _, b := range bindings {
		if pipeline.IsActive(b) {
			out[b.GetBindingSpec().TargetCluster] = false
		}
	}
	return out
}

// Clusters returns every input cluster, in input order (Index order), including
// those a PickFixed list or a Location leaves out of consideration.
func (s *CycleState) Clusters() []*ClusterInfo { return s.clusters }

// Cluster returns the named input cluster.
func (s *CycleState) Cluster(name string) (*ClusterInfo, bool) {
	if s.byName == nil {
		s.byName = make(map[string]*ClusterInfo, len(s.clusters))
		for _, c := range s.clusters {
			s.byName[c.Name] = c
		}
	}
	c, ok := s.byName[name]
	return c, ok
}

// Fleet returns the fleet view the cycle reads, or nil when its input is a list
// of clusters (CycleInput.Clusters). With a view, a cluster's Index is its
// position in Fleet().Members, so plugins can read the view's indexes and
// parsed values (PropertyQuantities) by it.
func (s *CycleState) Fleet() *Fleet { return s.in.Fleet }

// BoundCount returns how many input clusters the placement has an active binding to.
func (s *CycleState) BoundCount() int { return s.bound }

// PlacementName returns the name of the placement being scheduled.
func (s *CycleState) PlacementName() string { return s.in.PlacementName }

// PlacementLabels returns the labels of the placement being scheduled.
func (s *CycleState) PlacementLabels() map[string]string { return s.in.PlacementLabels }

// OtherPlacements returns the other placements and where they are.
func (s *CycleState) OtherPlacements() []PlacementPeer { return s.in.OtherPlacements }

// Locations returns all Locations.
func (s *CycleState) Locations() []clusterv1beta1.Location { return s.in.Locations }

// DynamicSelectors returns the dynamic selectors of the placement.
func (s *CycleState) DynamicSelectors() []DynamicSelector { return s.in.DynamicSelectors }

// ExcludedClusters returns the clusters the placement must not be on, each with
// the reason; see CycleInput.ExcludedClusters. Plugins must not modify it.
func (s *CycleState) ExcludedClusters() map[string]string { return s.in.ExcludedClusters }

// Group returns the resource group being scheduled ("" for all resources).
func (s *CycleState) Group() string { return s.in.Group }

// Now returns the time the cycle runs at.
func (s *CycleState) Now() time.Time {
	if s.in.Now.IsZero() {
		s.in.Now = time.Now()
	}
	return s.in.Now
}

// Rand returns the cycle's source of randomness; nil means "pick the first".
func (s *CycleState) Rand() *rand.Rand { return s.in.Rand }

// EffectiveSelectors returns the placement's required cluster selector terms with
// the dynamic selectors merged in (see EffectiveSelectors), computed once per
// cycle. nil means the placement has no required label or property selector.
func (s *CycleState) EffectiveSelectors(policy *placementv1beta1.PlacementPolicy) ([]SelectorTerm, error) {
	if !s.selectorsDone {
		s.selectors, s.selectorsErr = EffectiveSelectors(policy, s.in.DynamicSelectors, s.in.Group, s.in.SelectorMerge)
		s.selectorsDone = true
	}
	return s.selectors, s.selectorsErr
}

// Selected returns the clusters selected so far in the cycle: the kept ones, then
// the ones picked so far, in the order they were selected.
func (s *CycleState) Selected() []*ClusterInfo { return s.selectedList }

// IsSelected reports whether the cluster is selected so far in the cycle.
func (s *CycleState) IsSelected(c *ClusterInfo) bool { return s.selected[c.Index] }

// SetChosenLocation records the Location the placement is kept in this cycle.
func (s *CycleState) SetChosenLocation(name string) { s.chosenLocation = name }

// ChosenLocation returns the Location recorded with SetChosenLocation.
func (s *CycleState) ChosenLocation() string { return s.chosenLocation }

type stateEntry struct {
	key   StateKey
	value any
}

// Write stores a plugin's data under key (by convention the plugin's name),
// replacing what was there.
func (s *CycleState) Write(key StateKey, v any) {
	for i := range s.data {
		if s.data[i].key == key {
			s.data[i].value = v
			return
		}
	}
	s.data = append(s.data, stateEntry{key: key, value: v})
}

// Read returns the data stored under key, or ErrNotFound.
func (s *CycleState) Read(key StateKey) (any, error) {
	for i := range s.data {
		if s.data[i].key == key {
			return s.data[i].value, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrNotFound, key)
}

// ReadState returns the data stored under key as a T: the typed getter plugins
// build theirs on.
func ReadState[T any](s *CycleState, key StateKey) (T, error) {
	var zero T
	v, err := s.Read(key)
	if err != nil {
		return zero, err
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("cycle state %q holds %T, not %T", key, v, zero)
	}
	return t, nil
}

// markSelected adds the cluster to the selection.
func (s *CycleState) markSelected(c *ClusterInfo) {
	if s.selected[c.Index] {
		return
	}
	s.selected[c.Index] = true
	s.selectedList = append(s.selectedList, c)
}

// unmarkSelected removes the cluster from the selection.
func (s *CycleState) unmarkSelected(c *ClusterInfo) {
	if !s.selected[c.Index] {
		return
	}
	s.selected[c.Index] = false
	for i, o := range s.selectedList {
		if o == c {
			s.selectedList = append(s.selectedList[:i], s.selectedList[i+1:]...)
			break
		}
	}
}

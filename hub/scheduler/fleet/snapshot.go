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

package fleet

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Snapshot is the scheduler's fleet snapshot. Upsert and Delete apply
// MemberCluster events; View returns the view at the current generation. It is
// safe for concurrent use. The clusters it is given are kept, not copied: they
// must not be modified afterwards (informer cache objects are not).
type Snapshot struct {
	mu sync.Mutex
	// members are the current clusters by name.
	members map[string]*clusterv1beta1.MemberCluster
	// pending are the clusters changed since the last view (nil: deleted).
	pending map[string]*clusterv1beta1.MemberCluster
	// disconnected are the members whose AgentConnected condition is not True.
	disconnected map[string]*clusterv1beta1.MemberCluster
	// generation counts the changes; read without the lock by View's fast path.
	generation atomic.Uint64
	// view is the last view built, published whole.
	view atomic.Pointer[View]
}

// View is the fleet at one generation. It is immutable.
type View struct {
	*framework.Fleet
	// Disconnected are the members whose AgentConnected condition is not True,
	// sorted by name: those within their grace period make time alone change a
	// decision.
	Disconnected []*clusterv1beta1.MemberCluster
}

// New returns an empty snapshot at generation 0.
func New() *Snapshot {
	s := &Snapshot{
		members:      map[string]*clusterv1beta1.MemberCluster{},
		pending:      map[string]*clusterv1beta1.MemberCluster{},
		disconnected: map[string]*clusterv1beta1.MemberCluster{},
	}
	s.view.Store(&View{Fleet: framework.NewFleet(0, nil)})
	return s
}

// Generation returns the current generation: it moves on every change a view
// would show.
func (s *Snapshot) Generation() uint64 { return s.generation.Load() }

// Len returns the number of members.
func (s *Snapshot) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.members)
}

// Upsert adds a member or replaces it. It reports whether the generation moved:
// not when the cluster is the same as far as the scheduler reads it.
func (s *Snapshot) Upsert(mc *clusterv1beta1.MemberCluster) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.members[mc.Name]; ok && SchedulingEqual(old, mc) {
		return false
	}
	s.members[mc.Name] = mc
	s.pending[mc.Name] = mc
	if connected(mc) {
		delete(s.disconnected, mc.Name)
	} else {
		s.disconnected[mc.Name] = mc
	}
	s.generation.Add(1)
	return true
}

// Delete removes the named member. It reports whether the generation moved (not
// for a member it did not hold).
func (s *Snapshot) Delete(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.members[name]; !ok {
		return false
	}
	delete(s.members, name)
	delete(s.disconnected, name)
	s.pending[name] = nil
	s.generation.Add(1)
	return true
}

// View returns the fleet at the current generation. Cycles of the same
// generation share one view; the first View after a change builds it.
func (s *Snapshot) View() *View {
	if v := s.view.Load(); v.Generation() == s.generation.Load() {
		return v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.view.Load()
	gen := s.generation.Load()
	if prev.Generation() == gen {
		return prev
	}
	v := &View{
		Fleet:        framework.NewFleet(gen, merge(prev.Members(), s.pending, len(s.members))),
		Disconnected: slices.SortedFunc(maps.Values(s.disconnected), byName),
	}
	clear(s.pending)
	s.view.Store(v)
	return v
}

// merge returns sorted with the changed clusters applied (nil: deleted), in a
// new slice of size n: a binary search per change, and the runs between
// changes copied whole.
func merge(sorted []*clusterv1beta1.MemberCluster, changed map[string]*clusterv1beta1.MemberCluster, n int) []*clusterv1beta1.MemberCluster {
	out := make([]*clusterv1beta1.MemberCluster, 0, n)
	i := 0
	for _, name := range slices.Sorted(maps.Keys(changed)) {
		at, found := slices.BinarySearchFunc(sorted[i:], name, func(mc *clusterv1beta1.MemberCluster, name string) int {
			return strings.Compare(mc.Name, name)
		})
		out = append(out, sorted[i:i+at]...)
		i += at
		if found {
			i++
		}
		if mc := changed[name]; mc != nil {
			out = append(out, mc)
		}
	}
	return append(out, sorted[i:]...)
}

func byName(a, b *clusterv1beta1.MemberCluster) int { return strings.Compare(a.Name, b.Name) }

func connected(mc *clusterv1beta1.MemberCluster) bool {
	c := conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected)
	return c != nil && c.Status == metav1.ConditionTrue
}

// SchedulingEqual reports whether two versions of a cluster are the same to the
// scheduler: the same labels, spec, deletion timestamp, conditions, property
// values and resource usage (observation times and heartbeats aside).
func SchedulingEqual(o, n *clusterv1beta1.MemberCluster) bool {
	if o == n {
		return true
	}
	if o.Name != n.Name || !maps.Equal(o.Labels, n.Labels) || !o.DeletionTimestamp.Equal(n.DeletionTimestamp) {
		return false
	}
	if !equality.Semantic.DeepEqual(o.Spec, n.Spec) || !equality.Semantic.DeepEqual(o.Status.Conditions, n.Status.Conditions) {
		return false
	}
	if len(o.Status.Properties) != len(n.Status.Properties) {
		return false
	}
	for name, p := range o.Status.Properties {
		if q, ok := n.Status.Properties[name]; !ok || q.Value != p.Value {
			return false
		}
	}
	ou, nu := &o.Status.ResourceUsage, &n.Status.ResourceUsage
	return equality.Semantic.DeepEqual(ou.Capacity, nu.Capacity) &&
		equality.Semantic.DeepEqual(ou.Allocatable, nu.Allocatable) &&
		equality.Semantic.DeepEqual(ou.Available, nu.Available)
}

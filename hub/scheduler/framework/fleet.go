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
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

// Fleet is an immutable view of the member clusters at one generation, sorted by
// name: what the scheduler's fleet snapshot (hub/scheduler/fleet) hands each
// cycle, so that a cycle neither lists, copies nor sorts the fleet. Nothing in it
// may be modified. Its indexes are built on first use, once per generation, and
// shared by every cycle (and goroutine) reading the same view.
type Fleet struct {
	generation uint64
	members    []*clusterv1beta1.MemberCluster

	indexOnce sync.Once
	// labels maps a label key to its values, each to the positions (ascending,
	// so in name order) of the members that have it.
	labels map[string]map[string][]int32
	// tainted are the positions of the members with at least one taint.
	tainted []int32
	// properties maps a reported property name to the positions of the members
	// that report it.
	properties map[string][]int32

	// quantitiesMu guards quantities, which maps a property name to its parsed
	// values, built on first use of the property (PropertyQuantities).
	quantitiesMu sync.Mutex
	quantities   map[string]*quantityColumn

	// columnsMu guards columns, which maps a label key to its column, built on
	// first use of the key (LabelColumn).
	columnsMu sync.Mutex
	columns   map[string]*labelColumn
}

// labelColumn is one label key's LabelColumn, built once.
type labelColumn struct {
	once   sync.Once
	column LabelColumn
}

// LabelColumn is every member's value of one label key, as numbers: see
// Fleet.LabelColumn.
type LabelColumn struct {
	// Values are the key's distinct values, in the order of the first member
	// with each.
	Values []string
	// At[i] is the index in Values of member i's value, or -1 when it has no
	// such label.
	At []int32
}

// quantityColumn is every member's parsed value of one property, built once.
type quantityColumn struct {
	once   sync.Once
	values []PropertyQuantity
}

// PropertyQuantity is a cluster's value of a property, parsed once per view: see
// Fleet.PropertyQuantities.
type PropertyQuantity struct {
	// Quantity is the value (zero when !OK). It is shared by every cycle reading
	// the view: call its methods on a copy (Cmp and AsDec modify their receiver).
	Quantity resource.Quantity
	// Float is Quantity as a float64 (AsApproximateFloat64).
	Float float64
	// OK is whether the cluster has the property as a quantity (PropertyValue).
	OK bool
}

// NewFleet returns a view of members at a generation. members must be sorted by
// name, with unique names, and neither the slice nor the clusters may change
// afterwards; the caller keeps that promise (it is checked only in tests).
func NewFleet(generation uint64, members []*clusterv1beta1.MemberCluster) *Fleet {
	return &Fleet{generation: generation, members: members}
}

// Generation is the snapshot's generation the view was taken at: two views with
// the same generation hold the same clusters.
func (f *Fleet) Generation() uint64 { return f.generation }

// Len returns the number of member clusters.
func (f *Fleet) Len() int { return len(f.members) }

// Members returns the member clusters sorted by name. Callers must not modify the
// slice or the clusters.
func (f *Fleet) Members() []*clusterv1beta1.MemberCluster { return f.members }

// Member returns the named member cluster.
func (f *Fleet) Member(name string) (*clusterv1beta1.MemberCluster, bool) {
	i, ok := slices.BinarySearchFunc(f.members, name, func(mc *clusterv1beta1.MemberCluster, n string) int {
		return strings.Compare(mc.Name, n)
	})
	if !ok {
		return nil, false
	}
	return f.members[i], true
}

// WithLabel returns the positions in Members, ascending, of the clusters whose
// label key has the value, as selectors see labels (ClusterInfo.Labels: the
// built-in cluster.flotilla.io/name label always holds the cluster's name).
// Callers must not modify the slice.
func (f *Fleet) WithLabel(key, value string) []int32 {
	if key == clusterv1beta1.LabelClusterName {
		if i, ok := f.position(value); ok {
			return []int32{int32(i)}
		}
		return nil
	}
	f.index()
	return f.labels[key][value]
}

// Domains returns, for a topology key, each of its values and how many clusters
// have it. Clusters without the label are in no domain.
func (f *Fleet) Domains(key string) map[string]int {
	f.index()
	out := make(map[string]int, len(f.labels[key]))
	for v, at := range f.labels[key] {
		out[v] = len(at)
	}
	return out
}

// Tainted returns the positions, ascending, of the clusters with at least one
// taint. Callers must not modify the slice.
func (f *Fleet) Tainted() []int32 {
	f.index()
	return f.tainted
}

// WithProperty returns the positions, ascending, of the clusters that report the
// property in status.properties. Callers must not modify the slice.
func (f *Fleet) WithProperty(name string) []int32 {
	f.index()
	return f.properties[name]
}

// PropertyQuantities returns every member's value of a property, by position in
// Members, as PropertyValue gives it (a reported property, else the one derived
// from resource usage), parsed once per view when first asked for and shared by
// every cycle reading it. Callers must not modify the slice, and must copy a
// value's Quantity before calling its methods.
func (f *Fleet) PropertyQuantities(name string) []PropertyQuantity {
	f.quantitiesMu.Lock()
	if f.quantities == nil {
		f.quantities = map[string]*quantityColumn{}
	}
	col := f.quantities[name]
	if col == nil {
		col = &quantityColumn{}
		f.quantities[name] = col
	}
	f.quantitiesMu.Unlock()
	col.once.Do(func() {
		col.values = make([]PropertyQuantity, len(f.members))
		for i, mc := range f.members {
			q, ok := PropertyValue(mc, name)
			if !ok {
				continue
			}
			// String caches the canonical form in the Quantity: do it now, before
			// the value is shared, so that readers never write it.
			_ = q.String()
			col.values[i] = PropertyQuantity{Quantity: q, Float: q.AsApproximateFloat64(), OK: true}
		}
	})
	return col.values
}

// LabelColumn returns every member's value of the label key, as selectors see
// labels (ClusterInfo.Labels: the built-in cluster.flotilla.io/name label always
// holds the cluster's name), by position in Members: a cycle reads a member's
// value as a number, and works out what a value means once per value rather
// than once per member. It is built once per view when first asked for, and
// shared by every cycle reading it; callers must not modify it.
func (f *Fleet) LabelColumn(key string) *LabelColumn {
	f.columnsMu.Lock()
	if f.columns == nil {
		f.columns = map[string]*labelColumn{}
	}
	col := f.columns[key]
	if col == nil {
		col = &labelColumn{}
		f.columns[key] = col
	}
	f.columnsMu.Unlock()
	col.once.Do(func() { col.column = newLabelColumn(f.members, key) })
	return &col.column
}

// newLabelColumn numbers the members' values of the label key.
func newLabelColumn(members []*clusterv1beta1.MemberCluster, key string) LabelColumn {
	c := LabelColumn{At: make([]int32, len(members))}
	if key == clusterv1beta1.LabelClusterName {
		c.Values = make([]string, len(members))
		for i, mc := range members {
			c.Values[i], c.At[i] = mc.Name, int32(i)
		}
		return c
	}
	ids := map[string]int32{}
	for i, mc := range members {
		v, ok := mc.Labels[key]
		if !ok {
			c.At[i] = -1
			continue
		}
		id, seen := ids[v]
		if !seen {
			id = int32(len(c.Values))
			ids[v] = id
			c.Values = append(c.Values, v)
		}
		c.At[i] = id
	}
	return c
}

func (f *Fleet) position(name string) (int, bool) {
	return slices.BinarySearchFunc(f.members, name, func(mc *clusterv1beta1.MemberCluster, n string) int {
		return strings.Compare(mc.Name, n)
	})
}

// index builds the indexes once.
func (f *Fleet) index() {
	f.indexOnce.Do(func() {
		f.labels = map[string]map[string][]int32{}
		f.properties = map[string][]int32{}
		for i, mc := range f.members {
			at := int32(i)
			for k, v := range mc.Labels {
				values := f.labels[k]
				if values == nil {
					values = map[string][]int32{}
					f.labels[k] = values
				}
				values[v] = append(values[v], at)
			}
			if len(mc.Spec.Taints) > 0 {
				f.tainted = append(f.tainted, at)
			}
			for name := range mc.Status.Properties {
				f.properties[name] = append(f.properties[name], at)
			}
		}
	})
}

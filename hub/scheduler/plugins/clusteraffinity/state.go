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
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// pluginState is the policy's cluster affinity compiled for one cycle.
type pluginState struct {
	// required are the effective required terms (ORed); empty means none.
	required []requiredTerm
	// labelMismatch is the status for a cluster failing the labels of the only
	// required term; shared by all such clusters.
	labelMismatch *framework.Status
	// preferred are the preferred terms.
	preferred []preferredTerm
	// props caches the clusters' values of the properties the terms use.
	props propertyCache
}

type requiredTerm struct {
	labels labels.Selector
	// match matches labels over a fleet view; nil without one.
	match *labelMatcher
	props []propertyRequirement
}

type preferredTerm struct {
	weight int32
	labels labels.Selector
	// match matches labels over a fleet view; nil without one.
	match  *labelMatcher
	props  []propertyRequirement
	sorter *sorter
}

type propertyRequirement struct {
	prop  int // index in propertyCache.names
	name  string
	op    placementv1beta1.PropertySelectorOperator
	value resource.Quantity
	raw   string
}

// sorter scales a preferred term's weight by a property; min and max are set by
// PreScore.
type sorter struct {
	prop     int
	order    placementv1beta1.PropertySortOrder
	min, max float64
	seen     bool
}

// readState is the typed getter of the plugin's cycle state: it compiles the
// policy on first use in a cycle.
func readState(cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy) (*pluginState, error) {
	if s, err := framework.ReadState[*pluginState](cs, Name); err == nil {
		return s, nil
	}
	s, err := compile(cs, policy)
	if err != nil {
		return nil, err
	}
	cs.Write(Name, s)
	return s, nil
}

// compile builds the plugin state of a cycle.
func compile(cs *framework.CycleState, policy *placementv1beta1.PlacementPolicy) (*pluginState, error) {
	s := &pluginState{}
	terms, err := cs.EffectiveSelectors(policy)
	if err != nil {
		return nil, err
	}
	for i, t := range terms {
		rt := requiredTerm{labels: t.Labels}
		if rt.props, err = s.props.requirements(t.Properties); err != nil {
			return nil, fmt.Errorf("required cluster selector term %d: %w", i, err)
		}
		s.required = append(s.required, rt)
	}
	if len(s.required) == 1 && !s.required[0].labels.Empty() {
		s.labelMismatch = framework.NewStatus(framework.ClusterMismatch,
			"cluster labels do not match the required selector "+s.required[0].labels.String())
	}
	for i, p := range preferredTerms(policy) {
		pt := preferredTerm{weight: p.Weight}
		if pt.labels, err = selector(p.Preference.LabelSelector); err != nil {
			return nil, fmt.Errorf("preferred cluster selector term %d: %w", i, err)
		}
		if pt.props, err = s.props.requirements(p.Preference.PropertySelector); err != nil {
			return nil, fmt.Errorf("preferred cluster selector term %d: %w", i, err)
		}
		if ps := p.Preference.PropertySorter; ps != nil {
			pt.sorter = &sorter{prop: s.props.index(ps.Name), order: ps.SortOrder}
		}
		s.preferred = append(s.preferred, pt)
	}
	s.props.init(cs.Fleet(), len(cs.Clusters()))
	if fleet := cs.Fleet(); fleet != nil {
		for i := range s.required {
			s.required[i].match = newLabelMatcher(s.required[i].labels, fleet)
		}
		for i := range s.preferred {
			s.preferred[i].match = newLabelMatcher(s.preferred[i].labels, fleet)
		}
	}
	return s, nil
}

func preferredTerms(policy *placementv1beta1.PlacementPolicy) []placementv1beta1.PreferredClusterSelector {
	if policy == nil || policy.Affinity == nil || policy.Affinity.ClusterAffinity == nil {
		return nil
	}
	return policy.Affinity.ClusterAffinity.PreferredDuringSchedulingIgnoredDuringExecution
}

// selector converts a label selector; nil selects everything.
func selector(ls *metav1.LabelSelector) (labels.Selector, error) {
	if ls == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(ls)
}

// propertyCache holds the clusters' values of the properties in use: read from
// the fleet view, which parses them once per generation, or, for a cycle over a
// list of clusters, parsed at most once per cluster and property in the cycle.
type propertyCache struct {
	names []string
	// columns[p], for a cycle over a fleet view, are the view's values of
	// property p by cluster index; nil otherwise.
	columns [][]framework.PropertyQuantity
	// values[c*len(names)+p] is cluster c's value of property p, without a view.
	values []propertyValue
}

type propertyValue struct {
	state uint8 // 0: not looked up yet; 1: present; 2: absent
	q     resource.Quantity
	f     float64
}

// index returns the index of a property, adding it if new.
func (pc *propertyCache) index(name string) int {
	for i, n := range pc.names {
		if n == name {
			return i
		}
	}
	pc.names = append(pc.names, name)
	return len(pc.names) - 1
}

// requirements compiles a property selector.
func (pc *propertyCache) requirements(ps *placementv1beta1.PropertySelector) ([]propertyRequirement, error) {
	if ps == nil {
		return nil, nil
	}
	out := make([]propertyRequirement, 0, len(ps.MatchExpressions))
	for _, e := range ps.MatchExpressions {
		if len(e.Values) != 1 {
			return nil, fmt.Errorf("property %s: operator %s needs exactly one value, got %d", e.Name, e.Operator, len(e.Values))
		}
		q, err := resource.ParseQuantity(e.Values[0])
		if err != nil {
			return nil, fmt.Errorf("property %s: value %q is not a quantity: %w", e.Name, e.Values[0], err)
		}
		switch e.Operator {
		case placementv1beta1.PropertySelectorGreaterThan, placementv1beta1.PropertySelectorGreaterThanOrEqualTo,
			placementv1beta1.PropertySelectorEqualTo, placementv1beta1.PropertySelectorNotEqualTo,
			placementv1beta1.PropertySelectorLessThan, placementv1beta1.PropertySelectorLessThanOrEqualTo:
		default:
			return nil, fmt.Errorf("property %s: unknown operator %q", e.Name, e.Operator)
		}
		out = append(out, propertyRequirement{prop: pc.index(e.Name), name: e.Name, op: e.Operator, value: q, raw: e.Values[0]})
	}
	return out, nil
}

// init prepares the cache for n clusters, once the properties are known: the
// view's parsed columns when the cycle reads a fleet view, else room for n.
func (pc *propertyCache) init(fleet *framework.Fleet, n int) {
	if len(pc.names) == 0 {
		return
	}
	if fleet != nil {
		pc.columns = make([][]framework.PropertyQuantity, len(pc.names))
		for p, name := range pc.names {
			pc.columns[p] = fleet.PropertyQuantities(name)
		}
		return
	}
	pc.values = make([]propertyValue, n*len(pc.names))
}

// get returns a cluster's value of property p. It is a copy: the view's values
// are shared with other cycles, and Quantity.Cmp modifies its receiver.
func (pc *propertyCache) get(c *framework.ClusterInfo, p int) propertyValue {
	if pc.columns != nil {
		v := &pc.columns[p][c.Index]
		if !v.OK {
			return propertyValue{state: 2}
		}
		return propertyValue{state: 1, q: v.Quantity, f: v.Float}
	}
	v := &pc.values[c.Index*len(pc.names)+p]
	if v.state == 0 {
		v.state = 2
		if q, ok := PropertyValue(c.Cluster, pc.names[p]); ok {
			v.state, v.q, v.f = 1, q, q.AsApproximateFloat64()
		}
	}
	return *v
}

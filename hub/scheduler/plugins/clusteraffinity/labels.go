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
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// labelMatcher matches a label selector against the clusters of a fleet view by
// position: each requirement's verdict on a value of its key is worked out once
// per cycle, when a cluster with the value is first asked about, and read from
// the view's label column (framework.Fleet.LabelColumn) for every other
// cluster. A requirement's verdict depends only on whether the cluster has its
// key and on the value, so it is the selector's own.
type labelMatcher struct {
	// nothing is whether the selector matches no cluster (labels.Nothing).
	nothing bool
	reqs    []columnRequirement
}

// columnRequirement is one requirement of a labelMatcher.
type columnRequirement struct {
	req labels.Requirement
	col *framework.LabelColumn
	// verdicts[v] is the verdict on value v of the column: 0 not known yet, 1
	// matches, 2 does not.
	verdicts []uint8
	// absent is the verdict on a cluster without the key.
	absent bool
}

// newLabelMatcher returns the matcher of sel over fleet.
func newLabelMatcher(sel labels.Selector, fleet *framework.Fleet) *labelMatcher {
	reqs, selectable := sel.Requirements()
	if !selectable {
		return &labelMatcher{nothing: true}
	}
	m := &labelMatcher{reqs: make([]columnRequirement, len(reqs))}
	for i := range reqs {
		col := fleet.LabelColumn(reqs[i].Key())
		m.reqs[i] = columnRequirement{
			req:      reqs[i],
			col:      col,
			verdicts: make([]uint8, len(col.Values)),
			absent:   reqs[i].Matches(oneLabel{}),
		}
	}
	return m
}

// matches reports whether the cluster matches sel, the selector m was made of;
// without a matcher (a cycle over a list of clusters) it asks sel.
func (m *labelMatcher) matches(sel labels.Selector, c *framework.ClusterInfo) bool {
	if m == nil {
		return sel.Matches(c.Labels())
	}
	if m.nothing {
		return false
	}
	for i := range m.reqs {
		r := &m.reqs[i]
		v := r.col.At[c.Index]
		if v < 0 {
			if !r.absent {
				return false
			}
			continue
		}
		if r.verdicts[v] == 0 {
			r.verdicts[v] = 2
			if r.req.Matches(oneLabel{key: r.req.Key(), value: r.col.Values[v], has: true}) {
				r.verdicts[v] = 1
			}
		}
		if r.verdicts[v] != 1 {
			return false
		}
	}
	return true
}

// oneLabel is a cluster's labels as one requirement sees them: its key, with
// a value or not at all.
type oneLabel struct {
	key, value string
	has        bool
}

func (l oneLabel) Has(key string) bool { return l.has && key == l.key }

func (l oneLabel) Get(key string) string {
	v, _ := l.Lookup(key)
	return v
}

func (l oneLabel) Lookup(key string) (string, bool) {
	if l.has && key == l.key {
		return l.value, true
	}
	return "", false
}

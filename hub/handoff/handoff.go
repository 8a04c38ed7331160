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

package handoff

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// Keep returns the hand-off values a placement's status holds after a look at
// its bindings (of every state: a binding being removed still reports until
// it is gone), one per rule that has one, in the rules' order. kept is what the
// status holds now; now stamps a value the status takes. The rules:
//
//  1. A candidate for a rule is a value a binding's feedback reports for the
//     rule's object (group, kind, namespace, name; version too when the rule
//     names one) under the rule's jsonPathName, that is not empty, carries no
//     error and is at most MaxHandOffValueLength long. An empty value (the
//     path matched nothing, as on a copy that has just started) never
//     replaces a known one.
//  2. A binding that holds the placement (Scheduled or Bound, not being
//     deleted) ranks above one being left, and one being left above a cluster
//     with no binding at all. The best candidate is the one of the highest
//     rank, then the newest report (when the report carries a time), then the
//     cluster whose name sorts last, so that the choice does not depend on the
//     order of the bindings.
//  3. The best candidate replaces the kept value when it differs from it in
//     value or cluster and ranks at least as high as the kept value's cluster
//     does now: the copy that replaced a cluster takes over from it as soon
//     as it reports, and a late report of the cluster being left never undoes
//     what its replacement reported. A replacing value is stamped with now;
//     a value reported again as it was changes nothing, so nothing is written.
//  4. A kept value stays when no binding reports the rule any more: that is
//     the point, the cluster that reported it may be gone.
//  5. Values of rules no longer in the spec are dropped.
//
// The result is nil when there are no values, so that an unchanged status
// compares equal.
func Keep(rules []placementv1beta1.StateHandOffRule, kept []placementv1beta1.HandOffValue, bindings []placementv1beta1.BindingObj, now metav1.Time) []placementv1beta1.HandOffValue {
	rankOf := map[string]int{}
	for _, b := range bindings {
		cluster := b.GetBindingSpec().TargetCluster
		rankOf[cluster] = max(rankOf[cluster], rank(b))
	}
	var out []placementv1beta1.HandOffValue
	for _, rule := range rules {
		prev, havePrev := find(kept, rule.Name)
		best, haveBest := bestCandidate(rule, bindings)
		switch {
		case haveBest && (!havePrev || (best.value != prev.Value || best.cluster != prev.Cluster) && best.rank >= rankOf[prev.Cluster]):
			out = append(out, placementv1beta1.HandOffValue{Name: rule.Name, Value: best.value, Cluster: best.cluster, ObservationTime: now.DeepCopy()})
		case havePrev:
			out = append(out, prev)
		}
	}
	return out
}

// Freeze returns the hand-off values a binding created now is given: one per
// rule, in the rules' order, the value kept in the placement's status, or an
// entry with an empty value when no cluster has reported one yet (the first
// placement). Nil when the placement has no rules.
func Freeze(rules []placementv1beta1.StateHandOffRule, kept []placementv1beta1.HandOffValue) []placementv1beta1.HandOffValue {
	var out []placementv1beta1.HandOffValue
	for _, rule := range rules {
		v, ok := find(kept, rule.Name)
		if !ok {
			v = placementv1beta1.HandOffValue{Name: rule.Name}
		}
		if v.ObservationTime != nil {
			v.ObservationTime = v.ObservationTime.DeepCopy()
		}
		out = append(out, v)
	}
	return out
}

// The ranks of rule 2; a cluster without a binding ranks 0.
const (
	rankLeaving = 1
	rankHolding = 2
)

func rank(b placementv1beta1.BindingObj) int {
	if pipeline.IsActive(b) {
		return rankHolding
	}
	return rankLeaving
}

// candidate is a value a binding reports for a rule.
type candidate struct {
	value, cluster string
	rank           int
	observed       *metav1.Time
}

// better orders candidates (rule 2).
func (a candidate) better(b candidate) bool {
	if a.rank != b.rank {
		return a.rank > b.rank
	}
	ta, tb := a.observed, b.observed
	switch {
	case ta == nil && tb == nil:
	case ta == nil:
		return false
	case tb == nil:
		return true
	case !ta.Equal(tb):
		return ta.After(tb.Time)
	}
	return a.cluster > b.cluster
}

// bestCandidate returns the best candidate of rule among the bindings'
// feedback (rules 1 and 2).
func bestCandidate(rule placementv1beta1.StateHandOffRule, bindings []placementv1beta1.BindingObj) (candidate, bool) {
	var best candidate
	found := false
	for _, b := range bindings {
		for i := range b.GetBindingStatus().Feedback {
			rf := &b.GetBindingStatus().Feedback[i]
			if !matches(rule.Feedback, rf.ResourceIdentifier) {
				continue
			}
			for _, fv := range rf.Values {
				if fv.Name != rule.Feedback.JSONPathName || fv.Error != "" || fv.Value == "" || len(fv.Value) > placementv1beta1.MaxHandOffValueLength {
					continue
				}
				c := candidate{value: fv.Value, cluster: b.GetBindingSpec().TargetCluster, rank: rank(b), observed: rf.ObservationTime}
				if !found || c.better(best) {
					best, found = c, true
				}
			}
		}
	}
	return best, found
}

func matches(f placementv1beta1.HandOffFeedback, id placementv1beta1.ResourceIdentifier) bool {
	return f.Group == id.Group && f.Kind == id.Kind && f.Namespace == id.Namespace && f.Name == id.Name &&
		(f.Version == "" || f.Version == id.Version)
}

func find(values []placementv1beta1.HandOffValue, name string) (placementv1beta1.HandOffValue, bool) {
	for _, v := range values {
		if v.Name == name {
			return v, true
		}
	}
	return placementv1beta1.HandOffValue{}, false
}

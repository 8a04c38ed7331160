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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func at(sec int) *metav1.Time { return &metav1.Time{Time: t0.Add(time.Duration(sec) * time.Second)} }

var ckptRule = placementv1beta1.StateHandOffRule{Name: "ckpt", Feedback: placementv1beta1.HandOffFeedback{
	Kind: "ConfigMap", Namespace: "app", Name: "state", JSONPathName: "checkpoint",
}}

var configMap = placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "state"}

// report is a binding on cluster in state whose feedback reports value for
// object id under name, read at time observed (nil: no time, as the work
// generator reports today).
func report(cluster string, state placementv1beta1.BindingState, id placementv1beta1.ResourceIdentifier, name, value string, observed *metav1.Time) placementv1beta1.BindingObj {
	b := &placementv1beta1.ClusterResourceBinding{}
	b.Spec.TargetCluster, b.Spec.State = cluster, state
	b.Status.Feedback = []placementv1beta1.ResourceFeedback{{
		ResourceIdentifier: id, ObservationTime: observed,
		Values: []placementv1beta1.FeedbackValue{{Name: name, Value: value}},
	}}
	return b
}

// holding is a Bound binding reporting value for the rule's object.
func holding(cluster, value string) placementv1beta1.BindingObj {
	return report(cluster, placementv1beta1.BindingStateBound, configMap, "checkpoint", value, nil)
}

// leaving is an Unscheduled binding reporting value for the rule's object.
func leaving(cluster, value string) placementv1beta1.BindingObj {
	return report(cluster, placementv1beta1.BindingStateUnscheduled, configMap, "checkpoint", value, nil)
}

func kept(value, cluster string, sec int) placementv1beta1.HandOffValue {
	return placementv1beta1.HandOffValue{Name: "ckpt", Value: value, Cluster: cluster, ObservationTime: at(sec)}
}

func bindings(bs ...placementv1beta1.BindingObj) []placementv1beta1.BindingObj { return bs }

func TestKeep(t *testing.T) {
	const now = 100
	rules := []placementv1beta1.StateHandOffRule{ckptRule}
	tests := []struct {
		name     string
		rules    []placementv1beta1.StateHandOffRule
		kept     []placementv1beta1.HandOffValue
		bindings []placementv1beta1.BindingObj
		want     []placementv1beta1.HandOffValue
	}{
		{
			name:     "a placement without rules keeps nothing",
			bindings: bindings(holding("a", "ckpt-7")),
		},
		{
			name:     "the first value a cluster reports is kept, stamped with the time the hub took it",
			rules:    rules,
			bindings: bindings(holding("a", "ckpt-7")),
			want:     []placementv1beta1.HandOffValue{kept("ckpt-7", "a", now)},
		},
		{
			name:     "a new value of the same cluster replaces the kept one",
			rules:    rules,
			kept:     []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7)},
			bindings: bindings(holding("a", "ckpt-8")),
			want:     []placementv1beta1.HandOffValue{kept("ckpt-8", "a", now)},
		},
		{
			name:     "the same value reported again changes nothing, so nothing is written",
			rules:    rules,
			kept:     []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7)},
			bindings: bindings(holding("a", "ckpt-7")),
			want:     []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7)},
		},
		{
			name:  "the kept value survives the loss of the binding of the cluster that reported it",
			rules: rules,
			kept:  []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7)},
			want:  []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7)},
		},
		{
			name:     "an empty value of a copy that has just started does not replace a known one",
			rules:    rules,
			kept:     []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7)},
			bindings: bindings(leaving("a", "ckpt-7"), holding("b", "")),
			want:     []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7)},
		},
		{
			name:     "the replacement's first value takes over from the cluster being left",
			rules:    rules,
			kept:     []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7)},
			bindings: bindings(leaving("a", "ckpt-7"), holding("b", "ckpt-8")),
			want:     []placementv1beta1.HandOffValue{kept("ckpt-8", "b", now)},
		},
		{
			name:     "a late report of the cluster being left does not undo its replacement's value",
			rules:    rules,
			kept:     []placementv1beta1.HandOffValue{kept("ckpt-8", "b", 8)},
			bindings: bindings(leaving("a", "ckpt-9"), holding("b", "")),
			want:     []placementv1beta1.HandOffValue{kept("ckpt-8", "b", 8)},
		},
		{
			name:     "the cluster being left still moves the value on while its replacement has reported none",
			rules:    rules,
			kept:     []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7)},
			bindings: bindings(leaving("a", "ckpt-8"), holding("b", "")),
			want:     []placementv1beta1.HandOffValue{kept("ckpt-8", "a", now)},
		},
		{
			name:  "of two holding clusters the newer report wins",
			rules: rules,
			bindings: bindings(
				report("b", placementv1beta1.BindingStateBound, configMap, "checkpoint", "from-b", at(9)),
				report("a", placementv1beta1.BindingStateBound, configMap, "checkpoint", "from-a", at(7)),
			),
			want: []placementv1beta1.HandOffValue{kept("from-b", "b", now)},
		},
		{
			name:     "reports without a time are decided by cluster name, not by the order of the bindings",
			rules:    rules,
			bindings: bindings(holding("b", "from-b"), holding("a", "from-a")),
			want:     []placementv1beta1.HandOffValue{kept("from-b", "b", now)},
		},
		{
			name:  "another object's value or another path's value is not the rule's",
			rules: rules,
			bindings: bindings(
				report("a", placementv1beta1.BindingStateBound, placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "other"}, "checkpoint", "x", nil),
				report("b", placementv1beta1.BindingStateBound, configMap, "epoch", "y", nil),
			),
		},
		{
			name:     "a value too long to carry is not kept",
			rules:    rules,
			kept:     []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7)},
			bindings: bindings(holding("a", strings.Repeat("x", placementv1beta1.MaxHandOffValueLength+1))),
			want:     []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7)},
		},
		{
			name:     "the value of a rule removed from the spec is dropped",
			rules:    []placementv1beta1.StateHandOffRule{{Name: "epoch", Feedback: placementv1beta1.HandOffFeedback{Kind: "ConfigMap", Namespace: "app", Name: "state", JSONPathName: "epoch"}}},
			kept:     []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7)},
			bindings: bindings(report("a", placementv1beta1.BindingStateBound, configMap, "epoch", "3", nil)),
			want:     []placementv1beta1.HandOffValue{{Name: "epoch", Value: "3", Cluster: "a", ObservationTime: at(now)}},
		},
		{
			name: "a rule naming a version counts only reports of that version",
			rules: []placementv1beta1.StateHandOffRule{{Name: "ckpt", Feedback: placementv1beta1.HandOffFeedback{
				Version: "v2", Kind: "ConfigMap", Namespace: "app", Name: "state", JSONPathName: "checkpoint"}}},
			bindings: bindings(holding("a", "ckpt-7")),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Keep(tt.rules, tt.kept, tt.bindings, *at(now))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Keep() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFreeze(t *testing.T) {
	epoch := placementv1beta1.StateHandOffRule{Name: "epoch", Feedback: placementv1beta1.HandOffFeedback{Kind: "ConfigMap", Name: "state", JSONPathName: "epoch"}}
	tests := []struct {
		name  string
		rules []placementv1beta1.StateHandOffRule
		kept  []placementv1beta1.HandOffValue
		want  []placementv1beta1.HandOffValue
	}{
		{
			name: "a placement without rules gives a binding nothing",
			kept: []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7)},
		},
		{
			name:  "a binding created before any cluster reported gets empty values, one per rule",
			rules: []placementv1beta1.StateHandOffRule{ckptRule, epoch},
			want:  []placementv1beta1.HandOffValue{{Name: "ckpt"}, {Name: "epoch"}},
		},
		{
			name:  "a binding created for a replacement gets the values kept from the cluster it replaces",
			rules: []placementv1beta1.StateHandOffRule{ckptRule, epoch},
			kept:  []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7)},
			want:  []placementv1beta1.HandOffValue{kept("ckpt-7", "a", 7), {Name: "epoch"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Freeze(tt.rules, tt.kept)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Freeze() (-want +got):\n%s", diff)
			}
		})
	}
}

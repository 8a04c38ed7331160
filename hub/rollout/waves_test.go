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

package rollout

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Tiny builders: a binding per cluster, named after it.
func scheduled(cluster string) Binding {
	return Binding{Name: cluster, Cluster: cluster, State: placementv1beta1.BindingStateScheduled}
}

func oldReady(cluster string) Binding {
	return Binding{Name: cluster, Cluster: cluster, State: placementv1beta1.BindingStateBound, HasResources: true, Ready: true}
}

func oldNotReady(cluster string) Binding {
	return Binding{Name: cluster, Cluster: cluster, State: placementv1beta1.BindingStateBound, HasResources: true, NotReady: "Applied=False"}
}

func currentReady(cluster string) Binding {
	b := oldReady(cluster)
	b.Current = true
	return b
}

func currentUpdating(cluster string) Binding {
	b := oldNotReady(cluster)
	b.Current = true
	b.NotReady = "Available=False NotAvailableYet: 0/2 replicas available"
	return b
}

func unscheduledReady(cluster string) Binding {
	b := oldReady(cluster)
	b.State = placementv1beta1.BindingStateUnscheduled
	return b
}

func unscheduledEmpty(cluster string) Binding {
	return Binding{Name: cluster, Cluster: cluster, State: placementv1beta1.BindingStateUnscheduled}
}

func actions(p Plan) map[string]Action {
	out := map[string]Action{}
	for n, s := range p.Steps {
		out[n] = s.Action
	}
	return out
}

func TestSelectWave(t *testing.T) {
	const (
		none   = ActionNone
		bind   = ActionBind
		update = ActionUpdate
		remove = ActionRemove
		hold   = ActionHold
	)
	for _, tc := range []struct {
		name        string
		in          Input
		want        map[string]Action
		wantHolders []string
	}{
		{
			name: "a new placement binds every scheduled cluster at once, since none holds resources yet",
			in:   Input{Target: 3, MaxUnavailable: 1, MaxSurge: 0, Bindings: []Binding{scheduled("a"), scheduled("b"), scheduled("c")}},
			want: map[string]Action{"a": bind, "b": bind, "c": bind},
		},
		{
			name: "with maxUnavailable 1 an update moves one ready cluster, the first by name",
			in:   Input{Target: 3, MaxUnavailable: 1, Bindings: []Binding{oldReady("c"), oldReady("a"), oldReady("b")}},
			want: map[string]Action{"a": update, "b": hold, "c": hold},
		},
		{
			name:        "a cluster that is still becoming available on the new resources holds the others",
			in:          Input{Target: 3, MaxUnavailable: 1, Bindings: []Binding{currentUpdating("a"), oldReady("b"), oldReady("c")}},
			want:        map[string]Action{"a": none, "b": hold, "c": hold},
			wantHolders: []string{"a (Available=False NotAvailableYet: 0/2 replicas available)"},
		},
		{
			name: "once the updated cluster is available the next one moves",
			in:   Input{Target: 3, MaxUnavailable: 1, Bindings: []Binding{currentReady("a"), oldReady("b"), oldReady("c")}},
			want: map[string]Action{"a": none, "b": update, "c": hold},
		},
		{
			name: "maxUnavailable 2 moves two clusters in one wave",
			in:   Input{Target: 3, MaxUnavailable: 2, Bindings: []Binding{oldReady("a"), oldReady("b"), oldReady("c")}},
			want: map[string]Action{"a": update, "b": update, "c": hold},
		},
		{
			name:        "a cluster that is not ready on the old resources moves at once and costs nothing",
			in:          Input{Target: 3, MaxUnavailable: 1, Bindings: []Binding{oldReady("a"), oldReady("b"), oldNotReady("c")}},
			want:        map[string]Action{"a": hold, "b": hold, "c": update},
			wantHolders: []string{"c (Applied=False)"},
		},
		{
			name: "every cluster on the latest resources leaves nothing to do",
			in:   Input{Target: 2, MaxUnavailable: 1, Bindings: []Binding{currentReady("a"), currentReady("b")}},
			want: map[string]Action{"a": none, "b": none},
		},
		{
			name: "an unscheduled binding that never held resources goes at once",
			in:   Input{Target: 1, MaxUnavailable: 1, Bindings: []Binding{currentReady("a"), unscheduledEmpty("b")}},
			want: map[string]Action{"a": none, "b": remove},
		},
		{
			name: "removing a ready cluster waits while maxUnavailable is used up by an update",
			in:   Input{Target: 2, MaxUnavailable: 1, Bindings: []Binding{currentUpdating("a"), currentReady("b"), unscheduledReady("c")}},
			want: map[string]Action{"a": none, "b": none, "c": remove},
		},
		{
			name:        "removing a ready cluster waits when it would leave too few available",
			in:          Input{Target: 2, MaxUnavailable: 1, Bindings: []Binding{currentUpdating("a"), currentUpdating("b"), unscheduledReady("c")}},
			want:        map[string]Action{"a": none, "b": none, "c": hold},
			wantHolders: []string{"a (Available=False NotAvailableYet: 0/2 replicas available)", "b (Available=False NotAvailableYet: 0/2 replicas available)"},
		},
		{
			name: "a PickN move with maxSurge 1 binds the new cluster and removes the old one",
			in:   Input{Target: 1, MaxUnavailable: 1, MaxSurge: 1, Bindings: []Binding{unscheduledReady("a"), scheduled("b")}},
			want: map[string]Action{"a": remove, "b": bind},
		},
		{
			name:        "maxSurge 0 keeps a new cluster waiting while the cluster it replaces is kept for availability",
			in:          Input{Target: 2, MaxUnavailable: 1, MaxSurge: 0, Bindings: []Binding{currentUpdating("a"), unscheduledReady("b"), scheduled("c")}},
			want:        map[string]Action{"a": none, "b": hold, "c": hold},
			wantHolders: []string{"a (Available=False NotAvailableYet: 0/2 replicas available)"},
		},
		{
			name:        "maxSurge 1 lets the new cluster in while the old one is kept",
			in:          Input{Target: 2, MaxUnavailable: 1, MaxSurge: 1, Bindings: []Binding{currentUpdating("a"), unscheduledReady("b"), scheduled("c")}},
			want:        map[string]Action{"a": none, "b": hold, "c": bind},
			wantHolders: []string{"a (Available=False NotAvailableYet: 0/2 replicas available)"},
		},
		{
			name: "a cluster added to a PickAll placement is bound within maxSurge while others update",
			in:   Input{Target: 4, MaxUnavailable: 1, MaxSurge: 1, Bindings: []Binding{oldReady("a"), oldReady("b"), oldReady("c"), scheduled("d")}},
			want: map[string]Action{"a": hold, "b": hold, "c": hold, "d": bind},
		},
		{
			name: "a target the fleet cannot fill still rolls out, maxUnavailable counting the clusters that are there",
			in:   Input{Target: 3, MaxUnavailable: 1, Bindings: []Binding{oldReady("a"), oldReady("b")}},
			want: map[string]Action{"a": update, "b": hold},
		},
		{
			name: "fewer available clusters than the target allows no update while a replacement is coming, without blaming anyone",
			in:   Input{Target: 3, MaxUnavailable: 1, MaxSurge: 0, Bindings: []Binding{oldReady("a"), oldReady("b"), scheduled("c")}},
			want: map[string]Action{"a": hold, "b": hold, "c": bind},
		},
		{
			name: "the only cluster left, unscheduled with no replacement, is removed",
			in:   Input{Target: 2, MaxUnavailable: 1, Bindings: []Binding{unscheduledReady("a")}},
			want: map[string]Action{"a": remove},
		},
		{
			name: "an unscheduled cluster stays until its replacement is available",
			in:   Input{Target: 2, MaxUnavailable: 1, Bindings: []Binding{unscheduledReady("a"), scheduled("c")}},
			want: map[string]Action{"a": hold, "c": bind},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SelectWave(tc.in)
			if diff := cmp.Diff(tc.want, actions(got)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantHolders, got.Holders); diff != "" {
				t.Errorf("holders (-want +got):\n%s", diff)
			}
			for n, s := range got.Steps {
				if s.Action == ActionHold && s.Why == "" {
					t.Errorf("%s is held without a reason", n)
				}
			}
		})
	}
}

func TestLimits(t *testing.T) {
	ptr := func(v intstr.IntOrString) *intstr.IntOrString { return &v }
	for _, tc := range []struct {
		name                string
		cfg                 *placementv1beta1.RollingUpdateConfig
		target              int
		wantUnavail, wantSu int
	}{
		{"defaults are 25% each: at least one unavailable, surge rounded up", nil, 3, 1, 1},
		{"numbers are taken as they are", &placementv1beta1.RollingUpdateConfig{MaxUnavailable: ptr(intstr.FromInt32(2)), MaxSurge: ptr(intstr.FromInt32(0))}, 10, 2, 0},
		{"percentages of ten clusters", &placementv1beta1.RollingUpdateConfig{MaxUnavailable: ptr(intstr.FromString("25%")), MaxSurge: ptr(intstr.FromString("25%"))}, 10, 2, 3},
		{"a small percentage still lets one cluster update", &placementv1beta1.RollingUpdateConfig{MaxUnavailable: ptr(intstr.FromString("1%"))}, 3, 1, 1},
		{"0% surge is none", &placementv1beta1.RollingUpdateConfig{MaxSurge: ptr(intstr.FromString("0%"))}, 3, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, s := Limits(tc.cfg, tc.target)
			if u != tc.wantUnavail || s != tc.wantSu {
				t.Errorf("Limits = (%d, %d), want (%d, %d)", u, s, tc.wantUnavail, tc.wantSu)
			}
		})
	}
}

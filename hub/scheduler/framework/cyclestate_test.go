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
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func mc(name string, labels map[string]string) clusterv1beta1.MemberCluster {
	return clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func binding(cluster string, state placementv1beta1.BindingState) *placementv1beta1.ClusterResourceBinding {
	return &placementv1beta1.ClusterResourceBinding{Spec: placementv1beta1.ResourceBindingSpec{TargetCluster: cluster, State: state}}
}

func TestCycleStateMarksBoundClusters(t *testing.T) {
	deleting := binding("d", placementv1beta1.BindingStateBound)
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	in := &CycleInput{
		Clusters: []clusterv1beta1.MemberCluster{mc("a", nil), mc("b", nil), mc("c", nil), mc("d", nil), mc("e", nil)},
		Bindings: []placementv1beta1.BindingObj{
			binding("a", placementv1beta1.BindingStateBound),
			binding("b", placementv1beta1.BindingStateScheduled),
			binding("c", placementv1beta1.BindingStateUnscheduled),
			deleting,
			binding("gone", placementv1beta1.BindingStateBound),
		},
	}
	s := NewCycleState(in)
	got := map[string]bool{}
	for _, c := range s.Clusters() {
		got[c.Name] = c.Bound
	}
	want := map[string]bool{"a": true, "b": true, "c": false, "d": false, "e": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bound clusters (-want +got):\n%s", diff)
	}
	if s.BoundCount() != 2 {
		t.Errorf("BoundCount() = %d, want 2", s.BoundCount())
	}
	if diff := cmp.Diff([]string{"gone"}, s.gone); diff != "" {
		t.Errorf("gone (-want +got):\n%s", diff)
	}
}

func TestClusterLabelsIncludeTheBuiltInNameLabel(t *testing.T) {
	in := &CycleInput{Clusters: []clusterv1beta1.MemberCluster{
		mc("member-1", map[string]string{"env": "dev", clusterv1beta1.LabelClusterName: "stale"}),
	}}
	c := NewCycleState(in).Clusters()[0]
	l := c.Labels()
	if !l.Has(clusterv1beta1.LabelClusterName) || l.Get(clusterv1beta1.LabelClusterName) != "member-1" {
		t.Errorf("name label = %q, want member-1", l.Get(clusterv1beta1.LabelClusterName))
	}
	if !l.Has("env") || l.Get("env") != "dev" || l.Has("zone") || l.Get("zone") != "" {
		t.Errorf("labels do not reflect the cluster's")
	}
}

func TestReadStateIsTyped(t *testing.T) {
	s := NewCycleState(&CycleInput{})
	if _, err := ReadState[*int](s, "p"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReadState() of nothing = %v, want ErrNotFound", err)
	}
	n := 3
	s.Write("p", &n)
	if got, err := ReadState[*int](s, "p"); err != nil || *got != 3 {
		t.Errorf("ReadState() = %v, %v", got, err)
	}
	if _, err := ReadState[string](s, "p"); err == nil {
		t.Errorf("ReadState() with the wrong type succeeded")
	}
}

func TestSelection(t *testing.T) {
	s := NewCycleState(&CycleInput{Clusters: []clusterv1beta1.MemberCluster{mc("a", nil), mc("b", nil)}})
	a, b := s.Clusters()[0], s.Clusters()[1]
	s.markSelected(b)
	s.markSelected(a)
	s.markSelected(a)
	if len(s.Selected()) != 2 || s.Selected()[0] != b || !s.IsSelected(a) {
		t.Fatalf("Selected() = %v", s.Selected())
	}
	s.unmarkSelected(b)
	if len(s.Selected()) != 1 || s.IsSelected(b) {
		t.Errorf("after unmarking b, Selected() = %v", s.Selected())
	}
}

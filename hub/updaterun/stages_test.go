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

package updaterun

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func cluster(name string, labels ...string) memberCluster {
	m := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		m[labels[i]] = labels[i+1]
	}
	return memberCluster{name: name, labels: m}
}

func stage(name string, matchLabels map[string]string, sortKey string) placementv1beta1.StageConfig {
	st := placementv1beta1.StageConfig{Name: name, LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels}}
	if sortKey != "" {
		st.SortingLabelKey = ptr.To(sortKey)
	}
	return st
}

// stageClusters returns, per stage, the names of its clusters in order.
func stageClusters(stages []placementv1beta1.StageUpdatingStatus) map[string][]string {
	out := map[string][]string{}
	for _, st := range stages {
		names := []string{}
		for _, c := range st.Clusters {
			names = append(names, c.ClusterName)
		}
		out[st.StageName] = names
	}
	return out
}

func TestComputeStages(t *testing.T) {
	fleet := []memberCluster{
		cluster("member-3", "stage", "prod", "order", "10"),
		cluster("member-1", "stage", "canary"),
		cluster("member-2", "stage", "prod", "order", "9"),
		cluster("member-4", "stage", "prod"),
		cluster("member-5", "stage", "lab"),
	}
	tests := []struct {
		name           string
		stages         []placementv1beta1.StageConfig
		want           map[string][]string
		wantUnselected []string
	}{
		{
			name:           "clusters are ordered by name without a sorting label key",
			stages:         []placementv1beta1.StageConfig{stage("canary", map[string]string{"stage": "canary"}, ""), stage("prod", map[string]string{"stage": "prod"}, "")},
			want:           map[string][]string{"canary": {"member-1"}, "prod": {"member-2", "member-3", "member-4"}},
			wantUnselected: []string{"member-5"},
		},
		{
			name:           "a numeric sorting label orders by number, clusters without it last",
			stages:         []placementv1beta1.StageConfig{stage("prod", map[string]string{"stage": "prod"}, "order")},
			want:           map[string][]string{"prod": {"member-2", "member-3", "member-4"}},
			wantUnselected: []string{"member-1", "member-5"},
		},
		{
			name:   "a cluster goes to the first stage that matches it",
			stages: []placementv1beta1.StageConfig{stage("canary", map[string]string{"stage": "canary"}, ""), stage("everything", map[string]string{}, "")},
			want:   map[string][]string{"canary": {"member-1"}, "everything": {"member-2", "member-3", "member-4", "member-5"}},
		},
		{
			name:           "a stage that matches nothing is empty",
			stages:         []placementv1beta1.StageConfig{stage("none", map[string]string{"stage": "nowhere"}, "")},
			want:           map[string][]string{"none": {}},
			wantUnselected: []string{"member-1", "member-2", "member-3", "member-4", "member-5"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stages, unselected, err := computeStages(&placementv1beta1.StagedUpdateStrategySpec{Stages: tt.stages}, fleet)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, stageClusters(stages)); diff != "" {
				t.Errorf("stages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantUnselected, unselected); diff != "" {
				t.Errorf("unselected (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeStagesCopiesTasksAndRefusesBadSelectors(t *testing.T) {
	spec := &placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{{
		Name:          "canary",
		LabelSelector: &metav1.LabelSelector{},
		AfterStageTasks: []placementv1beta1.AfterStageTask{
			{Type: placementv1beta1.AfterStageTaskTypeApproval},
			{Type: placementv1beta1.AfterStageTaskTypeTimedWait, WaitTime: &metav1.Duration{Duration: 1}},
		},
	}}}
	stages, _, err := computeStages(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []placementv1beta1.AfterStageTaskStatus{{Type: placementv1beta1.AfterStageTaskTypeApproval}, {Type: placementv1beta1.AfterStageTaskTypeTimedWait}}
	if diff := cmp.Diff(want, stages[0].AfterStageTaskStatus); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}

	spec.Stages[0].LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "stage", Operator: "Near"}}}
	if _, _, err := computeStages(spec, nil); err == nil {
		t.Error("a selector with an unknown operator was accepted")
	}
}

func TestSortClustersAlphabeticallyWhenAValueIsNotANumber(t *testing.T) {
	cs := []memberCluster{cluster("a", "order", "10"), cluster("b", "order", "9"), cluster("c", "order", "x")}
	sortClusters(cs, "order")
	got := []string{cs[0].name, cs[1].name, cs[2].name}
	if diff := cmp.Diff([]string{"a", "b", "c"}, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestMaxConcurrency(t *testing.T) {
	tests := []struct {
		name     string
		v        *intstr.IntOrString
		clusters int
		want     int
	}{
		{"unset is one at a time", nil, 5, 1},
		{"a number is taken as is", ptr.To(intstr.FromInt32(2)), 5, 2},
		{"a number above the cluster count is fine", ptr.To(intstr.FromInt32(10)), 3, 10},
		{"a percentage rounds down", ptr.To(intstr.FromString("50%")), 5, 2},
		{"a percentage is at least one", ptr.To(intstr.FromString("10%")), 3, 1},
		{"all of them", ptr.To(intstr.FromString("100%")), 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := maxConcurrency(tt.v, tt.clusters); got != tt.want {
				t.Errorf("maxConcurrency = %d, want %d", got, tt.want)
			}
		})
	}
}

// clusterStatus builds a cluster's status in a stage: "waiting", "started" or
// "succeeded".
func clusterStatus(name, state string) placementv1beta1.ClusterUpdatingStatus {
	c := placementv1beta1.ClusterUpdatingStatus{ClusterName: name}
	if state == "started" || state == "succeeded" {
		set(&c.Conditions, placementv1beta1.ConditionClusterUpdatingStarted, clusterStartedCondition("s-1", "1"), 1)
	}
	if state == "succeeded" {
		set(&c.Conditions, placementv1beta1.ConditionUpdateRunSucceeded, clusterSucceeded("s-1", "1"), 1)
	}
	return c
}

func TestPlanStage(t *testing.T) {
	onTarget := bindingView{active: true, snapshot: "s-1", available: true}
	movingToTarget := bindingView{active: true, snapshot: "s-1"}
	onOld := bindingView{active: true, snapshot: "s-0", available: true}
	tests := []struct {
		name     string
		clusters []placementv1beta1.ClusterUpdatingStatus
		views    map[string]bindingView
		limit    int
		want     stagePlan
	}{
		{
			name:     "nothing started: the first limit clusters start, in stage order",
			clusters: []placementv1beta1.ClusterUpdatingStatus{clusterStatus("c", "waiting"), clusterStatus("a", "waiting"), clusterStatus("b", "waiting")},
			views:    map[string]bindingView{"a": onOld, "b": onOld, "c": onOld},
			limit:    2,
			want:     stagePlan{start: []string{"c", "a"}, updating: []string{"c", "a"}},
		},
		{
			name:     "a cluster still updating holds the only slot",
			clusters: []placementv1beta1.ClusterUpdatingStatus{clusterStatus("a", "started"), clusterStatus("b", "waiting")},
			views:    map[string]bindingView{"a": movingToTarget, "b": onOld},
			limit:    1,
			want:     stagePlan{updating: []string{"a"}},
		},
		{
			name:     "a started cluster on the target and Available succeeds and frees its slot",
			clusters: []placementv1beta1.ClusterUpdatingStatus{clusterStatus("a", "started"), clusterStatus("b", "waiting")},
			views:    map[string]bindingView{"a": onTarget, "b": onOld},
			limit:    1,
			want:     stagePlan{succeeded: []string{"a"}, start: []string{"b"}, updating: []string{"b"}},
		},
		{
			name:     "a started cluster Available on another snapshot is still updating",
			clusters: []placementv1beta1.ClusterUpdatingStatus{clusterStatus("a", "started")},
			views:    map[string]bindingView{"a": onOld},
			limit:    1,
			want:     stagePlan{updating: []string{"a"}},
		},
		{
			name:     "a cluster that is not started does not succeed even if it runs the target",
			clusters: []placementv1beta1.ClusterUpdatingStatus{clusterStatus("a", "waiting")},
			views:    map[string]bindingView{"a": onTarget},
			limit:    1,
			want:     stagePlan{start: []string{"a"}, updating: []string{"a"}},
		},
		{
			name:     "an unscheduled cluster is left and does not hold the stage",
			clusters: []placementv1beta1.ClusterUpdatingStatus{clusterStatus("a", "succeeded"), clusterStatus("b", "started")},
			views:    map[string]bindingView{"a": onTarget},
			limit:    1,
			want:     stagePlan{unscheduled: []string{"b"}, done: true},
		},
		{
			name:     "every cluster succeeded: the stage is done",
			clusters: []placementv1beta1.ClusterUpdatingStatus{clusterStatus("a", "succeeded"), clusterStatus("b", "succeeded")},
			views:    map[string]bindingView{"a": onTarget, "b": onOld},
			limit:    1,
			want:     stagePlan{done: true},
		},
		{
			name:  "an empty stage is done",
			limit: 1,
			want:  stagePlan{done: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := planStage(tt.clusters, tt.views, "s-1", tt.limit)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(stagePlan{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

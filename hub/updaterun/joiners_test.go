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

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestPlaceJoiners(t *testing.T) {
	cfgs := []placementv1beta1.StageConfig{
		{Name: "canary", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "canary"}}},
		{Name: "prod", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "prod"}}},
	}
	succeeded := []metav1.Condition{{Type: placementv1beta1.ConditionUpdateRunSucceeded, Status: metav1.ConditionTrue}}
	stage := func(name string, done bool, clusters ...string) placementv1beta1.StageUpdatingStatus {
		st := placementv1beta1.StageUpdatingStatus{StageName: name}
		for _, c := range clusters {
			st.Clusters = append(st.Clusters, placementv1beta1.ClusterUpdatingStatus{ClusterName: c})
		}
		if done {
			st.Conditions = succeeded
		}
		return st
	}
	canary := func(name string) memberCluster {
		return memberCluster{name: name, labels: map[string]string{"stage": "canary"}}
	}
	prod := func(name string) memberCluster {
		return memberCluster{name: name, labels: map[string]string{"stage": "prod"}}
	}
	tests := []struct {
		name       string
		stages     []placementv1beta1.StageUpdatingStatus
		unselected []string
		clusters   []memberCluster
		want       []joiner
	}{
		{
			name:     "clusters the run knows are not joiners",
			stages:   []placementv1beta1.StageUpdatingStatus{stage("canary", false, "c1"), stage("prod", false, "p1")},
			clusters: []memberCluster{canary("c1"), prod("p1")},
		},
		{
			name:       "a cluster the run left unselected is not a joiner",
			stages:     []placementv1beta1.StageUpdatingStatus{stage("canary", false, "c1"), stage("prod", false)},
			unselected: []string{"other"},
			clusters:   []memberCluster{canary("c1"), {name: "other"}},
		},
		{
			name:     "a joiner of a stage not reached yet updates in that stage",
			stages:   []placementv1beta1.StageUpdatingStatus{stage("canary", false, "c1"), stage("prod", false, "p1")},
			clusters: []memberCluster{canary("c1"), prod("p1"), prod("p2")},
			want:     []joiner{{cluster: "p2", stage: 1}},
		},
		{
			name:     "a joiner of the stage in progress updates in it",
			stages:   []placementv1beta1.StageUpdatingStatus{stage("canary", false, "c1"), stage("prod", false, "p1")},
			clusters: []memberCluster{canary("c1"), canary("c2"), prod("p1")},
			want:     []joiner{{cluster: "c2", stage: 0}},
		},
		{
			name:     "a joiner of a finished stage updates in the stage in progress, saying which it matched",
			stages:   []placementv1beta1.StageUpdatingStatus{stage("canary", true, "c1"), stage("prod", false, "p1")},
			clusters: []memberCluster{canary("c1"), canary("c2"), prod("p1")},
			want:     []joiner{{cluster: "c2", stage: 1, matched: "canary"}},
		},
		{
			name:     "a joiner no stage matches is left unselected",
			stages:   []placementv1beta1.StageUpdatingStatus{stage("canary", false, "c1"), stage("prod", false)},
			clusters: []memberCluster{canary("c1"), {name: "x", labels: map[string]string{"stage": "lab"}}},
			want:     []joiner{{cluster: "x", stage: -1}},
		},
		{
			name:     "a joiner goes to the first stage that matches, as at initialization",
			stages:   []placementv1beta1.StageUpdatingStatus{stage("canary", false), stage("prod", false)},
			clusters: []memberCluster{{name: "both", labels: map[string]string{"stage": "canary"}}},
			want:     []joiner{{cluster: "both", stage: 0}},
		},
		{
			name:     "after the last stage no cluster is taken in: the run is over",
			stages:   []placementv1beta1.StageUpdatingStatus{stage("canary", true, "c1"), stage("prod", true, "p1")},
			clusters: []memberCluster{canary("c1"), prod("p1"), prod("p2")},
		},
		{
			name:     "joiners are taken in by name",
			stages:   []placementv1beta1.StageUpdatingStatus{stage("canary", false), stage("prod", false)},
			clusters: []memberCluster{prod("p9"), prod("p2"), canary("c5")},
			want:     []joiner{{cluster: "c5", stage: 0}, {cluster: "p2", stage: 1}, {cluster: "p9", stage: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := placeJoiners(cfgs, tt.stages, tt.unselected, tt.clusters)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(joiner{})); diff != "" {
				t.Errorf("placeJoiners (-want +got):\n%s", diff)
			}
		})
	}
}

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

// movedCluster is a cluster the run started, from previous; rolledBack is the
// reason of its RolledBack condition, "" for none.
func movedCluster(name, previous, rolledBack string) placementv1beta1.ClusterUpdatingStatus {
	c := placementv1beta1.ClusterUpdatingStatus{ClusterName: name, PreviousResourceSnapshotName: previous, Conditions: []metav1.Condition{
		{Type: placementv1beta1.ConditionClusterUpdatingStarted, Status: metav1.ConditionTrue},
		{Type: placementv1beta1.ConditionUpdateRunSucceeded, Status: metav1.ConditionTrue},
	}}
	if rolledBack != "" {
		status := metav1.ConditionFalse
		if rolledBack == placementv1beta1.ReasonClusterRolledBack {
			status = metav1.ConditionTrue
		}
		c.Conditions = append(c.Conditions, metav1.Condition{Type: placementv1beta1.ConditionClusterRolledBack, Status: status, Reason: rolledBack})
	}
	return c
}

func TestPlanRollback(t *testing.T) {
	const old, bad = "web-0-snapshot", "web-1-snapshot"
	onBad := bindingView{active: true, snapshot: bad, available: true}
	onOldMoving := bindingView{active: true, snapshot: old}
	onOld := bindingView{active: true, snapshot: old, available: true}
	tests := []struct {
		name     string
		clusters []placementv1beta1.ClusterUpdatingStatus
		views    map[string]bindingView
		limit    int
		want     rollbackPlan
	}{
		{
			name:     "two moved clusters, one at a time: the first moves back, the second waits",
			clusters: []placementv1beta1.ClusterUpdatingStatus{movedCluster("a", old, ""), movedCluster("b", old, "")},
			views:    map[string]bindingView{"a": onBad, "b": onBad},
			limit:    1,
			want:     rollbackPlan{start: []string{"a"}, moving: []string{"a"}},
		},
		{
			name:     "a cluster still moving back holds the next one",
			clusters: []placementv1beta1.ClusterUpdatingStatus{movedCluster("a", old, placementv1beta1.ReasonClusterRollingBack), movedCluster("b", old, "")},
			views:    map[string]bindingView{"a": onOldMoving, "b": onBad},
			limit:    1,
			want:     rollbackPlan{moving: []string{"a"}},
		},
		{
			name:     "a cluster back on its snapshot, Available, is rolled back and the next one starts",
			clusters: []placementv1beta1.ClusterUpdatingStatus{movedCluster("a", old, placementv1beta1.ReasonClusterRollingBack), movedCluster("b", old, "")},
			views:    map[string]bindingView{"a": onOld, "b": onBad},
			limit:    1,
			want:     rollbackPlan{rolledBack: []string{"a"}, start: []string{"b"}, moving: []string{"b"}},
		},
		{
			name:     "with room for two, both move back at once",
			clusters: []placementv1beta1.ClusterUpdatingStatus{movedCluster("a", old, ""), movedCluster("b", old, "")},
			views:    map[string]bindingView{"a": onBad, "b": onBad},
			limit:    2,
			want:     rollbackPlan{start: []string{"a", "b"}, moving: []string{"a", "b"}},
		},
		{
			name: "clusters the run never started are not touched",
			clusters: []placementv1beta1.ClusterUpdatingStatus{
				{ClusterName: "a", PreviousResourceSnapshotName: old},
				movedCluster("b", old, placementv1beta1.ReasonClusterRolledBack),
			},
			views: map[string]bindingView{"a": onOld, "b": onOld},
			limit: 1,
			want:  rollbackPlan{done: true},
		},
		{
			name:     "a cluster that ran nothing before the run is left, and says why",
			clusters: []placementv1beta1.ClusterUpdatingStatus{movedCluster("a", "", "")},
			views:    map[string]bindingView{"a": onBad},
			limit:    1,
			want:     rollbackPlan{left: []leftCluster{{"a", "the cluster ran no resource snapshot before the run, so it keeps the run's"}}, done: true},
		},
		{
			name:     "a cluster that left the placement is left",
			clusters: []placementv1beta1.ClusterUpdatingStatus{movedCluster("a", old, placementv1beta1.ReasonClusterRollingBack)},
			views:    map[string]bindingView{},
			limit:    1,
			want:     rollbackPlan{left: []leftCluster{{"a", "the placement no longer has the cluster"}}, done: true},
		},
		{
			name:     "clusters already rolled back or left are done",
			clusters: []placementv1beta1.ClusterUpdatingStatus{movedCluster("a", old, placementv1beta1.ReasonClusterRolledBack), movedCluster("b", "", placementv1beta1.ReasonClusterNotRolledBack)},
			views:    map[string]bindingView{"a": onOld, "b": onBad},
			limit:    1,
			want:     rollbackPlan{done: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := planRollback(tc.clusters, tc.views, tc.limit)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(rollbackPlan{}, leftCluster{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

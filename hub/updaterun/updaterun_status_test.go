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
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestConditions(t *testing.T) {
	twoStages := []placementv1beta1.StageUpdatingStatus{
		{StageName: "canary", Clusters: []placementv1beta1.ClusterUpdatingStatus{{ClusterName: "member-1"}}},
		{StageName: "prod", Clusters: []placementv1beta1.ClusterUpdatingStatus{{ClusterName: "member-2"}, {ClusterName: "member-3"}}},
	}
	done := []placementv1beta1.StageUpdatingStatus{{StageName: "prod", Clusters: []placementv1beta1.ClusterUpdatingStatus{
		clusterStatus("member-2", "succeeded"),
		{ClusterName: "member-3", Conditions: []metav1.Condition{{Type: placementv1beta1.ConditionUpdateRunSucceeded, Status: metav1.ConditionFalse}}},
	}}}
	tests := []struct {
		name string
		got  condition
		want condition
	}{
		{
			name: "a missing placement is named",
			got:  placementNotFound("web"),
			want: condition{metav1.ConditionFalse, "PlacementNotFound", "ClusterResourcePlacement web does not exist"},
		},
		{
			name: "a placement that rolls itself out is refused",
			got:  placementNotExternal("web", placementv1beta1.RollingUpdateRolloutStrategyType),
			want: condition{metav1.ConditionFalse, "PlacementNotExternal", "ClusterResourcePlacement web has strategy type RollingUpdate; staged update runs roll out only placements whose spec.strategy.type is External"},
		},
		{
			name: "a missing strategy is named",
			got:  strategyNotFound("canary-then-prod"),
			want: condition{metav1.ConditionFalse, "StrategyNotFound", "ClusterStagedUpdateStrategy canary-then-prod does not exist"},
		},
		{
			name: "a missing index lists the kept ones",
			got:  snapshotNotFound("web", "7", []string{"4", "5", "6"}),
			want: condition{metav1.ConditionFalse, "ResourceSnapshotNotFound", "ClusterResourcePlacement web has no resource snapshot with index 7 (it keeps indexes 4, 5, 6)"},
		},
		{
			name: "a placement without snapshots says so",
			got:  snapshotNotFound("web", "0", nil),
			want: condition{metav1.ConditionFalse, "ResourceSnapshotNotFound", "ClusterResourcePlacement web has no resource snapshot with index 0 (it has no resource snapshot yet)"},
		},
		{
			name: "a strategy with a bad selector says why",
			got:  invalidStrategy("s", errors.New("stage a has an invalid labelSelector: bad")),
			want: condition{metav1.ConditionFalse, "InvalidStrategy", "ClusterStagedUpdateStrategy s cannot be used: stage a has an invalid labelSelector: bad"},
		},
		{
			name: "another run in progress is named",
			got:  waitingForOtherRun("web", "run-1"),
			want: condition{metav1.ConditionFalse, "WaitingForOtherRun", "ClusterStagedUpdateRun run-1 of ClusterResourcePlacement web is in progress; this run starts when it succeeds, is stopped or is deleted"},
		},
		{
			name: "initialization counts clusters per stage",
			got:  initialized("web-1-snapshot", "1", twoStages, nil),
			want: condition{metav1.ConditionTrue, "Initialized", "3 clusters in 2 stages (canary: 1, prod: 2) to resource snapshot web-1-snapshot (index 1)"},
		},
		{
			name: "initialization reports clusters no stage selects",
			got:  initialized("web-0-snapshot", "0", twoStages[:1], []string{"member-4"}),
			want: condition{metav1.ConditionTrue, "Initialized", "1 cluster in 1 stage (canary: 1) to resource snapshot web-0-snapshot (index 0); no stage selects member-4, which this run leaves as it is"},
		},
		{
			name: "progress names the updating clusters",
			got:  progressing("prod", []string{"member-2", "member-3"}, 2),
			want: condition{metav1.ConditionTrue, "Progressing", "stage prod: updating member-2, member-3 (at most 2 at a time)"},
		},
		{
			name: "waiting for an approval says how to approve",
			got:  waiting("canary", []taskWait{{approvalRequest: "run-1-canary"}}),
			want: condition{metav1.ConditionFalse, "Waiting", "stage canary: every cluster is updated; waiting for approval of ClusterApprovalRequest run-1-canary (set its Approved condition to True)"},
		},
		{
			name: "waiting for both tasks names both",
			got:  waiting("canary", []taskWait{{approvalRequest: "r"}, {remaining: 1400 * time.Millisecond, waitTime: time.Minute}}),
			want: condition{metav1.ConditionFalse, "Waiting", "stage canary: every cluster is updated; waiting for approval of ClusterApprovalRequest r (set its Approved condition to True) and TimedWait of 1m0s (1s left)"},
		},
		{
			name: "a stopped run says how to resume",
			got:  stopped(),
			want: condition{metav1.ConditionFalse, "Stopped", "spec.state is Stop: no further cluster is updated; set it to Run to resume"},
		},
		{
			name: "success counts the clusters that left",
			got:  runSucceeded(done, "web-0-snapshot", "0"),
			want: condition{metav1.ConditionTrue, "Succeeded", "1 cluster runs resource snapshot web-0-snapshot (index 0); 1 cluster left the placement during the run"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got, cmp.AllowUnexported(condition{})); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApprovalRequestName(t *testing.T) {
	if got := ApprovalRequestName("run-1", "canary"); got != "run-1-canary" {
		t.Errorf("name = %q, want run-1-canary", got)
	}
	long := ApprovalRequestName(strings.Repeat("r", 250), "canary")
	if len(long) > 253 {
		t.Errorf("name of %d characters, want at most 253", len(long))
	}
}

func TestApprovalRequestAltNamesDoNotCollide(t *testing.T) {
	if ApprovalRequestName("a-b", "c") != ApprovalRequestName("a", "b-c") {
		t.Fatalf("the usual names were expected to collide")
	}
	if approvalRequestAltName("a-b", "c") == approvalRequestAltName("a", "b-c") {
		t.Errorf("alternative names collide: %q", approvalRequestAltName("a", "b-c"))
	}
	if n := approvalRequestAltName(strings.Repeat("r", 253), strings.Repeat("s", 63)); len(n) > 253 {
		t.Errorf("alternative name of %d characters, want at most 253", len(n))
	}
	if v := labelValue(strings.Repeat("r", 200)); len(v) > 63 {
		t.Errorf("label value of %d characters, want at most 63", len(v))
	}
	if v := labelValue("run-1"); v != "run-1" {
		t.Errorf("labelValue(run-1) = %q, want it unchanged", v)
	}
}

func TestMatchApprovalRequest(t *testing.T) {
	run := &metav1.ObjectMeta{Name: "run-1", UID: "u1"}
	yes := true
	controlled := []metav1.OwnerReference{{Name: "run-1", UID: "u1", Controller: &yes}}
	otherRun := []metav1.OwnerReference{{Name: "run-1", UID: "u0", Controller: &yes}}
	for _, tc := range []struct {
		name   string
		owners []metav1.OwnerReference
		spec   placementv1beta1.ApprovalRequestSpec
		want   approvalRequestMatch
	}{
		{"a request the run controls for its stage is its own", controlled, placementv1beta1.ApprovalRequestSpec{ParentStageRollout: "run-1", TargetStage: "canary"}, approvalRequestOurs},
		{"a request for the run and stage of a deleted run of the name is stale", otherRun, placementv1beta1.ApprovalRequestSpec{ParentStageRollout: "run-1", TargetStage: "canary"}, approvalRequestStale},
		{"a request for the run and stage that nobody controls is stale", nil, placementv1beta1.ApprovalRequestSpec{ParentStageRollout: "run-1", TargetStage: "canary"}, approvalRequestStale},
		{"a request for another stage is another's, even if the run controls it", controlled, placementv1beta1.ApprovalRequestSpec{ParentStageRollout: "run-1", TargetStage: "prod"}, approvalRequestOthers},
		{"a request for another run is another's", nil, placementv1beta1.ApprovalRequestSpec{ParentStageRollout: "run", TargetStage: "1-canary"}, approvalRequestOthers},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &placementv1beta1.ClusterApprovalRequest{ObjectMeta: metav1.ObjectMeta{Name: "x", OwnerReferences: tc.owners}, Spec: tc.spec}
			if got := matchApprovalRequest(req, run, "canary"); got != tc.want {
				t.Errorf("matchApprovalRequest = %d, want %d", got, tc.want)
			}
		})
	}
}

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

package workgen

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

func workWith(strategy placementv1beta1.ApplyStrategyType, conds []metav1.Condition, manifests ...placementv1beta1.ManifestCondition) *placementv1beta1.Work {
	w := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	w.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{Type: strategy}
	w.Status.Conditions = conds
	w.Status.ManifestConditions = manifests
	return w
}

func cond(t string, s metav1.ConditionStatus, reason string, gen int64) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: reason, ObservedGeneration: gen}
}

func TestCopyAgentReports(t *testing.T) {
	cm := placementv1beta1.WorkResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "cm"}
	drift := &placementv1beta1.DriftDetails{ObservedDrifts: []placementv1beta1.PatchDetail{{Path: "/data/k", ValueInMember: "m", ValueInHub: "h"}}}
	diff := &placementv1beta1.DiffDetails{ObservedDiffs: []placementv1beta1.PatchDetail{{Path: "/data/k", ValueInMember: "m", ValueInHub: "h"}}}
	feedback := []placementv1beta1.FeedbackValue{{Name: "ready", Value: "3"}}
	id := placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "cm"}
	tests := []struct {
		name          string
		work          *placementv1beta1.Work
		wantTypes     []string
		wantDiffRep   string
		wantDrifted   int
		wantDiffed    int
		wantFeedback  []placementv1beta1.ResourceFeedback
		wantFailedLen int
	}{
		{
			name: "drifts and feedback of an applied Work are copied",
			work: workWith(placementv1beta1.ApplyStrategyTypeServerSideApply,
				[]metav1.Condition{cond(placementv1beta1.ConditionApplied, metav1.ConditionFalse, placementv1beta1.ReasonFoundDrifts, 2)},
				placementv1beta1.ManifestCondition{Identifier: cm, DriftDetails: drift, Feedback: feedback}),
			wantTypes:    []string{placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable},
			wantDrifted:  1,
			wantFeedback: []placementv1beta1.ResourceFeedback{{ResourceIdentifier: id, Values: feedback}},
		},
		{
			name: "reports of an older generation are not copied",
			work: workWith(placementv1beta1.ApplyStrategyTypeServerSideApply,
				[]metav1.Condition{cond(placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, 1)},
				placementv1beta1.ManifestCondition{Identifier: cm, DriftDetails: drift, Feedback: feedback}),
			wantTypes: []string{placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable},
		},
		{
			name: "a ReportDiff Work reports DiffReported instead of Applied and Available, with its diffs",
			work: workWith(placementv1beta1.ApplyStrategyTypeReportDiff,
				[]metav1.Condition{cond(placementv1beta1.ConditionDiffReported, metav1.ConditionTrue, placementv1beta1.ReasonDiffReported, 2)},
				placementv1beta1.ManifestCondition{Identifier: cm, DiffDetails: diff}),
			wantTypes:   []string{placementv1beta1.ConditionDiffReported},
			wantDiffRep: "True/DiffReported",
			wantDiffed:  1,
		},
		{
			name:        "a ReportDiff Work not compared yet is pending",
			work:        workWith(placementv1beta1.ApplyStrategyTypeReportDiff, nil),
			wantTypes:   []string{placementv1beta1.ConditionDiffReported},
			wantDiffRep: "Unknown/DiffReportPending",
		},
		{
			name: "manifests a ReportDiff Work could not compare are failed placements",
			work: workWith(placementv1beta1.ApplyStrategyTypeReportDiff,
				[]metav1.Condition{cond(placementv1beta1.ConditionDiffReported, metav1.ConditionFalse, placementv1beta1.ReasonDiffReportFailed, 2)},
				placementv1beta1.ManifestCondition{Identifier: cm, Conditions: []metav1.Condition{cond(placementv1beta1.ConditionDiffReported, metav1.ConditionFalse, placementv1beta1.ReasonDiffReportFailed, 2)}}),
			wantTypes:     []string{placementv1beta1.ConditionDiffReported},
			wantDiffRep:   "False/DiffReportFailed",
			wantFailedLen: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &placementv1beta1.ClusterResourceBinding{}
			b.Spec.TargetCluster = "member-1"
			var own []metav1.Condition
			want := pipeline.BindingStatus{OwnsPlacementLists: true}
			want.FailedPlacements = copyWorkStatus(&own, b, tt.work)
			copyAgentReports(&own, &want, b, tt.work)
			var types []string
			for _, c := range own {
				types = append(types, c.Type)
			}
			if diff := cmp.Diff(tt.wantTypes, types); diff != "" {
				t.Errorf("condition types mismatch (-want +got):\n%s", diff)
			}
			if tt.wantDiffRep != "" {
				c := conditions.Get(own, placementv1beta1.ConditionDiffReported)
				if got := string(c.Status) + "/" + c.Reason; got != tt.wantDiffRep {
					t.Errorf("DiffReported = %s, want %s", got, tt.wantDiffRep)
				}
			}
			if len(want.DriftedPlacements) != tt.wantDrifted || len(want.DiffedPlacements) != tt.wantDiffed || len(want.FailedPlacements) != tt.wantFailedLen {
				t.Errorf("drifted/diffed/failed = %d/%d/%d, want %d/%d/%d", len(want.DriftedPlacements), len(want.DiffedPlacements),
					len(want.FailedPlacements), tt.wantDrifted, tt.wantDiffed, tt.wantFailedLen)
			}
			if diff := cmp.Diff(tt.wantFeedback, want.Feedback); diff != "" {
				t.Errorf("feedback mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetAgentSpecCopiesWhatThePlacementAsksOfAgents(t *testing.T) {
	crp := &placementv1beta1.ClusterResourcePlacement{}
	crp.Spec.Strategy.DeleteStrategy = &placementv1beta1.DeleteStrategy{PropagationPolicy: placementv1beta1.DeletePropagationPolicyAbandon}
	crp.Spec.StatusFeedback = []placementv1beta1.StatusFeedbackRule{{Group: "apps", Version: "v1", Kind: "Deployment", JSONPaths: []placementv1beta1.JSONPathRule{{Name: "ready", Path: ".status.readyReplicas"}}}}
	crp.Spec.AvailabilityRules = []placementv1beta1.AvailabilityRule{{Group: "example.com", Kind: "Database", Expression: "true"}}
	work := &placementv1beta1.Work{}
	setAgentSpec(work, crp)
	want := placementv1beta1.WorkSpec{DeleteStrategy: crp.Spec.Strategy.DeleteStrategy, StatusFeedback: crp.Spec.StatusFeedback, AvailabilityRules: crp.Spec.AvailabilityRules}
	if diff := cmp.Diff(want, work.Spec); diff != "" {
		t.Errorf("Work spec mismatch (-want +got):\n%s", diff)
	}
	setAgentSpec(work, &placementv1beta1.ClusterResourcePlacement{})
	if diff := cmp.Diff(placementv1beta1.WorkSpec{}, work.Spec); diff != "" {
		t.Errorf("Work spec after the placement dropped everything mismatch (-want +got):\n%s", diff)
	}
}

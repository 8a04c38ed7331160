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

package placement

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

func TestReportDiffPlacementsReportDiffReportedNotApplied(t *testing.T) {
	reportDiff := &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeReportDiff}
	binding := func(cluster string, diffReported metav1.ConditionStatus) *placementv1beta1.ClusterResourceBinding {
		b := &placementv1beta1.ClusterResourceBinding{}
		b.Generation = 1
		b.Spec.TargetCluster = cluster
		b.Spec.ApplyStrategy = reportDiff
		b.Status.DriftedPlacements = nil
		b.Status.Feedback = []placementv1beta1.ResourceFeedback{{ResourceIdentifier: placementv1beta1.ResourceIdentifier{Kind: "ConfigMap", Name: "cm"}}}
		conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionDiffReported, diffReported, placementv1beta1.ReasonDiffReported, "compared", 1)
		return b
	}
	crp := &placementv1beta1.ClusterResourcePlacement{}
	crp.Generation = 3
	crp.Spec.Strategy.ApplyStrategy = reportDiff
	conditions.Set(&crp.Status.Conditions, placementv1beta1.ConditionClusterResourcePlacementApplied, metav1.ConditionUnknown, placementv1beta1.ReasonApplyPending, "x", 3)

	var statuses []placementv1beta1.PerClusterPlacementStatus
	for _, b := range []*placementv1beta1.ClusterResourceBinding{binding("member-1", metav1.ConditionTrue), binding("member-2", metav1.ConditionTrue)} {
		pcs := placementv1beta1.PerClusterPlacementStatus{ClusterName: b.Spec.TargetCluster}
		conditions.Set(&pcs.Conditions, placementv1beta1.ConditionWorkSynchronized, metav1.ConditionTrue, placementv1beta1.ReasonWorkSynchronized, "", 3)
		conditions.Set(&pcs.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionUnknown, placementv1beta1.ReasonApplyPending, "not reported yet", 3)
		perClusterAgentReports(b, &pcs, false, 3)
		if conditions.Get(pcs.Conditions, placementv1beta1.ConditionApplied) != nil {
			t.Errorf("%s: a ReportDiff cluster reports Applied", pcs.ClusterName)
		}
		if !conditions.IsTrue(pcs.Conditions, placementv1beta1.ConditionDiffReported) {
			t.Errorf("%s: DiffReported = %+v, want True", pcs.ClusterName, conditions.Get(pcs.Conditions, placementv1beta1.ConditionDiffReported))
		}
		if len(pcs.Feedback) != 1 {
			t.Errorf("%s: feedback = %+v, want the binding's", pcs.ClusterName, pcs.Feedback)
		}
		statuses = append(statuses, pcs)
	}
	placementAgentReports(crp, statuses, 3)
	if conditions.Get(crp.Status.Conditions, placementv1beta1.ConditionClusterResourcePlacementApplied) != nil {
		t.Errorf("a ReportDiff placement reports %s", placementv1beta1.ConditionClusterResourcePlacementApplied)
	}
	c := conditions.Get(crp.Status.Conditions, placementv1beta1.ConditionClusterResourcePlacementDiffReported)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != placementv1beta1.ReasonDiffReported || c.ObservedGeneration != 3 {
		t.Errorf("%s = %+v, want True/DiffReported at generation 3", placementv1beta1.ConditionClusterResourcePlacementDiffReported, c)
	}

	// Back to server-side apply: the placement-level DiffReported goes.
	crp.Spec.Strategy.ApplyStrategy = nil
	placementAgentReports(crp, statuses, 4)
	if conditions.Get(crp.Status.Conditions, placementv1beta1.ConditionClusterResourcePlacementDiffReported) != nil {
		t.Errorf("DiffReported kept after the apply strategy changed")
	}
}

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// This file reports what the agents found beyond applying (drifts, feedback, and
// for ReportDiff placements the DiffReported condition in place of Applied and
// Available) per cluster and over the placement.

// perClusterAgentReports copies a binding's drifted placements and feedback into
// its cluster's status and, for a binding whose Work is compared rather than
// applied (ReportDiff), reports DiffReported instead of Applied and Available.
func perClusterAgentReports(b placementv1beta1.BindingObj, pcs *placementv1beta1.PerClusterPlacementStatus, stale bool, gen int64) {
	st := b.GetBindingStatus()
	pcs.DriftedPlacements = st.DriftedPlacements
	pcs.Feedback = st.Feedback
	// Upsynced is written by the hub's upsync handler as the agent mirrors objects.
	if c := conditions.Get(st.Conditions, placementv1beta1.ConditionUpsynced); c != nil {
		conditions.Set(&pcs.Conditions, placementv1beta1.ConditionUpsynced, c.Status, c.Reason, c.Message, gen)
	}
	if !isReportDiff(b.GetBindingSpec().ApplyStrategy) {
		return
	}
	pcs.Conditions = withoutTypes(pcs.Conditions, placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable)
	c := conditions.Get(st.Conditions, placementv1beta1.ConditionDiffReported)
	switch {
	case !conditions.IsTrue(pcs.Conditions, placementv1beta1.ConditionWorkSynchronized):
		conditions.Set(&pcs.Conditions, placementv1beta1.ConditionDiffReported, metav1.ConditionUnknown, placementv1beta1.ReasonDiffReportPending, "waiting for the previous stage", gen)
	case c == nil || c.ObservedGeneration != b.GetGeneration():
		conditions.Set(&pcs.Conditions, placementv1beta1.ConditionDiffReported, metav1.ConditionUnknown, placementv1beta1.ReasonDiffReportPending, "not reported yet", gen)
	case stale:
		conditions.Set(&pcs.Conditions, placementv1beta1.ConditionDiffReported, metav1.ConditionUnknown, placementv1beta1.ReasonDiffReportPending, "rolling out the latest resources", gen)
	default:
		conditions.Set(&pcs.Conditions, placementv1beta1.ConditionDiffReported, c.Status, c.Reason, c.Message, gen)
	}
}

// placementAgentReports summarises DiffReported over the clusters of a ReportDiff
// placement, in place of Applied and Available.
func placementAgentReports(crp placementv1beta1.PlacementObj, statuses []placementv1beta1.PerClusterPlacementStatus, gen int64) {
	st := crp.GetPlacementStatus()
	diffType := crp.PlacementConditionType(placementv1beta1.ConditionDiffReported)
	if !isReportDiff(crp.GetPlacementSpec().Strategy.ApplyStrategy) || len(statuses) == 0 {
		st.Conditions = withoutTypes(st.Conditions, diffType)
		return
	}
	st.Conditions = withoutTypes(st.Conditions,
		crp.PlacementConditionType(placementv1beta1.ConditionApplied), crp.PlacementConditionType(placementv1beta1.ConditionAvailable))
	status, reason, message := summarise(statuses, placementv1beta1.ConditionDiffReported, placementv1beta1.ReasonDiffReportPending, placementv1beta1.ReasonDiffReported)
	conditions.Set(&st.Conditions, diffType, status, reason, message, gen)
}

func isReportDiff(s *placementv1beta1.ApplyStrategy) bool {
	return s != nil && s.Type == placementv1beta1.ApplyStrategyTypeReportDiff
}

func withoutTypes(in []metav1.Condition, types ...string) []metav1.Condition {
	out := in[:0:0]
	for _, c := range in {
		keep := true
		for _, t := range types {
			keep = keep && c.Type != t
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}

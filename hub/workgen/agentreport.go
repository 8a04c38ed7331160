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
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// This file carries what a placement asks the agents to do beyond applying (how to
// delete, what to report, how to judge availability) into its Works, and what the
// agents report about it (drifts, diffs of ReportDiff or refused take-overs,
// feedback, DiffReported) back onto the
// bindings.

// maxReported bounds the resources listed per binding in each report (the API
// allows 100).
const maxReported = 100

// setAgentSpec copies the placement's delete strategy, status feedback, report
// back, availability rules, upsync selectors and fencing (policy.fencing)
// into a Work's spec.
func setAgentSpec(work *placementv1beta1.Work, crp placementv1beta1.PlacementObj) {
	spec := crp.GetPlacementSpec()
	work.Spec.DeleteStrategy = spec.Strategy.DeleteStrategy.DeepCopy()
	work.Spec.StatusFeedback = append([]placementv1beta1.StatusFeedbackRule(nil), spec.StatusFeedback...)
	work.Spec.AvailabilityRules = append([]placementv1beta1.AvailabilityRule(nil), spec.AvailabilityRules...)
	if len(work.Spec.StatusFeedback) == 0 {
		work.Spec.StatusFeedback = nil
	}
	if len(work.Spec.AvailabilityRules) == 0 {
		work.Spec.AvailabilityRules = nil
	}
	work.Spec.ReportBack = spec.ReportBack
	work.Spec.UpsyncSelectors = append([]placementv1beta1.UpsyncSelector(nil), spec.UpsyncSelectors...)
	if len(work.Spec.UpsyncSelectors) == 0 {
		work.Spec.UpsyncSelectors = nil
	}
	work.Spec.Fencing = nil
	if spec.Policy != nil && spec.Policy.Fencing != nil {
		work.Spec.Fencing = spec.Policy.Fencing.DeepCopy()
	}
}

// copyAgentReports adds the agent's reports on a Work to the work generator's
// part of its binding's status (own: its conditions; want: its lists): the
// resources that drifted, differ (ReportDiff or a refused take-over) and their
// feedback values. For a ReportDiff Work its DiffReported condition replaces
// Applied and Available, and resources that could not be compared are the failed
// placements. Reports of an older generation of the Work are not copied.
func copyAgentReports(own *[]metav1.Condition, want *pipeline.BindingStatus, b placementv1beta1.BindingObj, work *placementv1beta1.Work) {
	want.DriftedPlacements, want.DiffedPlacements, want.Feedback = nil, nil, nil
	diffReported := conditions.Get(work.Status.Conditions, placementv1beta1.ConditionDiffReported)
	reportDiff := work.Spec.ApplyStrategy != nil && work.Spec.ApplyStrategy.Type == placementv1beta1.ApplyStrategyTypeReportDiff
	if reportDiff {
		*own = withoutTypes(*own, placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable)
		want.FailedPlacements = nil
		if diffReported == nil || diffReported.ObservedGeneration != work.Generation {
			conditions.Set(own, placementv1beta1.ConditionDiffReported, metav1.ConditionUnknown, placementv1beta1.ReasonDiffReportPending,
				fmt.Sprintf("waiting for member %s to compare the current Work", b.GetBindingSpec().TargetCluster), b.GetGeneration())
			return
		}
		conditions.Set(own, placementv1beta1.ConditionDiffReported, diffReported.Status, diffReported.Reason, diffReported.Message, b.GetGeneration())
	} else {
		*own = withoutTypes(*own, placementv1beta1.ConditionDiffReported)
		if c := conditions.Get(work.Status.Conditions, placementv1beta1.ConditionApplied); c == nil || c.ObservedGeneration != work.Generation {
			return
		}
	}
	for _, mc := range work.Status.ManifestConditions {
		id := identifierOf(mc.Identifier)
		if mc.DriftDetails != nil && len(want.DriftedPlacements) < maxReported {
			want.DriftedPlacements = append(want.DriftedPlacements, placementv1beta1.DriftedResourcePlacement{
				ResourceIdentifier:              id,
				ObservationTime:                 mc.DriftDetails.ObservationTime,
				FirstDriftedObservedTime:        mc.DriftDetails.FirstDriftedObservedTime,
				TargetClusterObservedGeneration: mc.DriftDetails.ObservedInMemberClusterGeneration,
				ObservedDrifts:                  mc.DriftDetails.ObservedDrifts,
			})
		}
		if mc.DiffDetails != nil && len(want.DiffedPlacements) < maxReported {
			want.DiffedPlacements = append(want.DiffedPlacements, placementv1beta1.DiffedResourcePlacement{
				ResourceIdentifier: id,
				ObservationTime:    mc.DiffDetails.ObservationTime,
				ObservedDiffs:      mc.DiffDetails.ObservedDiffs,
			})
		}
		if len(mc.Feedback) > 0 && len(want.Feedback) < maxReported {
			want.Feedback = append(want.Feedback, placementv1beta1.ResourceFeedback{ResourceIdentifier: id, Values: mc.Feedback})
		}
		if c := conditions.Get(mc.Conditions, placementv1beta1.ConditionDiffReported); reportDiff && c != nil && c.Status == metav1.ConditionFalse && len(want.FailedPlacements) < maxReported {
			want.FailedPlacements = append(want.FailedPlacements, placementv1beta1.FailedResourcePlacement{ResourceIdentifier: id, Condition: *c})
		}
	}
}

func identifierOf(id placementv1beta1.WorkResourceIdentifier) placementv1beta1.ResourceIdentifier {
	return placementv1beta1.ResourceIdentifier{Group: id.Group, Version: id.Version, Kind: id.Kind, Name: id.Name, Namespace: id.Namespace}
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

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

package apply

import (
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/flotilla/agent/availability"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// buildStatus returns the status of the Work of s from the results of its manifests
// (by ordinal). Conditions start from prev, so that their transition times only move
// when their status changes; every condition is observed at the Work's generation.
// Under ReportDiff the Work and its manifests have a DiffReported condition instead
// of Applied and Available.
func buildStatus(s *scope, results []result, prev placementv1beta1.WorkStatus) placementv1beta1.WorkStatus {
	work, manifests := s.work, s.manifests
	if s.strategy.Type == placementv1beta1.ApplyStrategyTypeReportDiff {
		return buildDiffStatus(s, results, prev)
	}
	gen := work.Generation
	status := placementv1beta1.WorkStatus{
		Conditions:         without(prev.Conditions, placementv1beta1.ConditionDiffReported),
		ManifestConditions: make([]placementv1beta1.ManifestCondition, 0, len(manifests)),
	}
	avails := make([]availability.Result, len(manifests))
	for i, m := range manifests {
		r := results[i]
		id := m.identifier()
		mc := placementv1beta1.ManifestCondition{
			Identifier:       id,
			Conditions:       without(previousManifestConditions(prev, id), placementv1beta1.ConditionDiffReported),
			DiffDetails:      r.diff,
			DriftDetails:     r.drift,
			DriftCorrections: r.corrections,
		}
		if r.live != nil {
			mc.Feedback = s.feedback.values(r.live)
			if s.work.Spec.ReportBack == placementv1beta1.ReportBackMirror {
				mc.ReportedStatus = reportedStatus(r.live)
			}
		}
		conditions.Set(&mc.Conditions, placementv1beta1.ConditionApplied, r.applied, r.reason, truncate(r.message, maxMessage), gen)
		avails[i] = manifestAvailability(s.rules, r)
		conditions.Set(&mc.Conditions, placementv1beta1.ConditionAvailable, avails[i].Available, avails[i].Reason, truncate(avails[i].Message, maxMessage), gen)
		status.ManifestConditions = append(status.ManifestConditions, mc)
	}

	applied := workApplied(manifests, results)
	conditions.Set(&status.Conditions, placementv1beta1.ConditionApplied, applied.status, applied.reason, truncate(applied.message, maxMessage), gen)
	avail := workAvailable(manifests, results, avails, applied)
	conditions.Set(&status.Conditions, placementv1beta1.ConditionAvailable, avail.status, avail.reason, truncate(avail.message, maxMessage), gen)
	return status
}

// previousManifestConditions returns a copy of the conditions prev holds for the
// manifest id, matched on everything but the resource (which is unknown until the
// kind is resolved).
func previousManifestConditions(prev placementv1beta1.WorkStatus, id placementv1beta1.WorkResourceIdentifier) []metav1.Condition {
	for _, mc := range prev.ManifestConditions {
		p := mc.Identifier
		if p.Ordinal == id.Ordinal && p.Group == id.Group && p.Version == id.Version && p.Kind == id.Kind && p.Namespace == id.Namespace && p.Name == id.Name {
			return append([]metav1.Condition(nil), mc.Conditions...)
		}
	}
	return nil
}

// manifestAvailability returns the Available condition of one manifest: that of its
// object when applied (by the Work's rule for its kind, if any); Unknown otherwise.
// An object left drifted is judged as it is.
func manifestAvailability(rules availability.Rules, r result) availability.Result {
	switch {
	case r.applied == metav1.ConditionTrue || r.reason == placementv1beta1.ReasonFoundDrifts:
		return rules.Check(r.live)
	case r.applied == metav1.ConditionUnknown:
		return availability.Result{Available: metav1.ConditionUnknown, Reason: placementv1beta1.ReasonApplyPending, Message: "the manifest has not been applied yet"}
	default:
		return availability.Result{Available: metav1.ConditionUnknown, Reason: placementv1beta1.ReasonNotApplied, Message: "the manifest is not applied, so its availability is not tracked"}
	}
}

// buildDiffStatus is buildStatus under ReportDiff: results stand for the
// manifests' DiffReported conditions.
func buildDiffStatus(s *scope, results []result, prev placementv1beta1.WorkStatus) placementv1beta1.WorkStatus {
	gen := s.work.Generation
	drop := []string{placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable}
	status := placementv1beta1.WorkStatus{
		Conditions:         without(prev.Conditions, drop...),
		ManifestConditions: make([]placementv1beta1.ManifestCondition, 0, len(s.manifests)),
	}
	var failedN, pendingN, differ int
	firstFailed, firstDiff := -1, -1
	for i, m := range s.manifests {
		r := results[i]
		id := m.identifier()
		mc := placementv1beta1.ManifestCondition{Identifier: id, Conditions: without(previousManifestConditions(prev, id), drop...), DiffDetails: r.diff}
		c := diffReported(r)
		conditions.Set(&mc.Conditions, placementv1beta1.ConditionDiffReported, c.status, c.reason, truncate(c.message, maxMessage), gen)
		status.ManifestConditions = append(status.ManifestConditions, mc)
		switch c.status {
		case metav1.ConditionFalse:
			failedN++
			if firstFailed < 0 {
				firstFailed = i
			}
		case metav1.ConditionUnknown:
			pendingN++
		}
		if r.diff != nil {
			differ++
			if firstDiff < 0 {
				firstDiff = i
			}
		}
	}
	total := len(results)
	var c summary
	switch {
	case failedN > 0:
		c = summary{status: metav1.ConditionFalse, reason: placementv1beta1.ReasonDiffReportFailed,
			message: some(failedN, total, "not compared", s.manifests[firstFailed].describe(), results[firstFailed].message)}
	case pendingN > 0:
		c = summary{status: metav1.ConditionUnknown, reason: placementv1beta1.ReasonDiffReportPending, message: "the latest spec of the Work has not been compared yet"}
	case differ == 0:
		c = summary{status: metav1.ConditionTrue, reason: placementv1beta1.ReasonDiffReported,
			message: fmt.Sprintf("applyStrategy.type is ReportDiff; the member cluster matches the hub in %s", plural(total, "manifest"))}
	default:
		c = summary{status: metav1.ConditionTrue, reason: placementv1beta1.ReasonDiffReported,
			message: fmt.Sprintf("applyStrategy.type is ReportDiff; %d of %s differ on the member cluster; the first is %s: %s",
				differ, plural(total, "manifest"), s.manifests[firstDiff].describe(), results[firstDiff].message)}
	}
	conditions.Set(&status.Conditions, placementv1beta1.ConditionDiffReported, c.status, c.reason, truncate(c.message, maxMessage), gen)
	return status
}

// diffReported returns the DiffReported condition of one manifest under ReportDiff.
func diffReported(r result) summary {
	switch r.applied {
	case metav1.ConditionTrue:
		return summary{status: metav1.ConditionTrue, reason: placementv1beta1.ReasonDiffReported, message: r.message}
	case metav1.ConditionUnknown:
		return summary{status: metav1.ConditionUnknown, reason: placementv1beta1.ReasonDiffReportPending, message: r.message}
	default:
		return summary{status: metav1.ConditionFalse, reason: placementv1beta1.ReasonDiffReportFailed, message: r.message}
	}
}

// without returns a copy of conditions without the given types.
func without(in []metav1.Condition, types ...string) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(in))
	for _, c := range in {
		if !slices.Contains(types, c.Type) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// summary is a condition of the Work before it is set.
type summary struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

// workApplied summarises the manifests' Applied conditions.
func workApplied(manifests []*manifest, results []result) summary {
	total := len(results)
	var notApplied, drifted int
	first, firstDrift := -1, -1
	byReason := map[string]int{}
	for i, r := range results {
		if r.applied == metav1.ConditionTrue {
			continue
		}
		notApplied++
		byReason[r.reason]++
		if r.reason == placementv1beta1.ReasonFoundDrifts {
			drifted++
			if firstDrift < 0 {
				firstDrift = i
			}
			continue
		}
		if first < 0 {
			first = i
		}
	}
	switch {
	case notApplied == 0 && total == 0:
		return summary{status: metav1.ConditionTrue, reason: placementv1beta1.ReasonApplied, message: "the Work has no manifests"}
	case notApplied == 0:
		return summary{status: metav1.ConditionTrue, reason: placementv1beta1.ReasonApplied, message: all(total, "applied")}
	case byReason[placementv1beta1.ReasonApplyFailed] > 0 || byReason[placementv1beta1.ReasonNotTakenOver] > 0:
		reason := placementv1beta1.ReasonNotTakenOver
		if byReason[placementv1beta1.ReasonApplyFailed] > 0 {
			reason = placementv1beta1.ReasonApplyFailed
		}
		return summary{status: metav1.ConditionFalse, reason: reason, message: some(notApplied, total, "not applied", manifests[first].describe(), results[first].message)}
	case drifted > 0 && first < 0:
		return summary{status: metav1.ConditionFalse, reason: placementv1beta1.ReasonFoundDrifts,
			message: some(drifted, total, "drifted on the member cluster", manifests[firstDrift].describe(), results[firstDrift].message)}
	default:
		return summary{status: metav1.ConditionUnknown, reason: placementv1beta1.ReasonApplyPending, message: some(notApplied, total, "not applied yet", manifests[first].describe(), results[first].message)}
	}
}

// workAvailable summarises the manifests' Available conditions; applied is the Work's
// Applied condition.
func workAvailable(manifests []*manifest, results []result, avails []availability.Result, applied summary) summary {
	total := len(results)
	switch {
	case applied.reason == placementv1beta1.ReasonApplyPending:
		return summary{status: metav1.ConditionUnknown, reason: placementv1beta1.ReasonApplyPending, message: "the Work has not been applied yet"}
	case applied.status != metav1.ConditionTrue && applied.reason != placementv1beta1.ReasonFoundDrifts:
		return summary{status: metav1.ConditionUnknown, reason: placementv1beta1.ReasonNotApplied, message: "not every manifest is applied, so availability is not tracked"}
	}
	var notAvailable, untracked int
	firstNotAvailable, firstUntracked := -1, -1
	for i, av := range avails {
		switch {
		case av.Available != metav1.ConditionTrue:
			notAvailable++
			if firstNotAvailable < 0 {
				firstNotAvailable = i
			}
		case av.Reason == placementv1beta1.ReasonNotTrackable:
			untracked++
			if firstUntracked < 0 {
				firstUntracked = i
			}
		}
	}
	switch {
	case notAvailable > 0:
		return summary{status: metav1.ConditionFalse, reason: placementv1beta1.ReasonNotAvailableYet, message: some(notAvailable, total, "not available yet", manifests[firstNotAvailable].describe(), avails[firstNotAvailable].Message)}
	case untracked > 0:
		return summary{status: metav1.ConditionTrue, reason: placementv1beta1.ReasonNotTrackable, message: fmt.Sprintf("%s, but the availability of %d cannot be tracked (the first is %s)",
			all(total, "available"), untracked, manifests[firstUntracked].describe())}
	case total == 0:
		return summary{status: metav1.ConditionTrue, reason: placementv1beta1.ReasonAvailable, message: "the Work has no manifests"}
	default:
		return summary{status: metav1.ConditionTrue, reason: placementv1beta1.ReasonAvailable, message: all(total, "available")}
	}
}

// all says that all of total manifests are in a state: "all 3 manifests are applied".
func all(total int, state string) string {
	if total == 1 {
		return "the only manifest is " + state
	}
	return fmt.Sprintf("all %d manifests are %s", total, state)
}

// some says that n of total manifests are in a state, naming the first of them:
// "2 of 5 manifests are not applied; the first is Service app/web (manifest 3): why".
func some(n, total int, state, first, why string) string {
	switch {
	case total == 1:
		return fmt.Sprintf("the only manifest, %s, is %s: %s", first, state, why)
	case n == 1:
		return fmt.Sprintf("1 of %d manifests is %s: %s: %s", total, state, first, why)
	default:
		return fmt.Sprintf("%d of %d manifests are %s; the first is %s: %s", n, total, state, first, why)
	}
}

// reportedStatus returns the status of an object on the member for reportBack
// Mirror; nil if it has none or it is larger than maxReportedStatus.
func reportedStatus(live *unstructured.Unstructured) *runtime.RawExtension {
	st, ok := live.Object["status"].(map[string]any)
	if !ok || len(st) == 0 {
		return nil
	}
	raw, err := json.Marshal(st)
	if err != nil || len(raw) > maxReportedStatus {
		return nil
	}
	return &runtime.RawExtension{Raw: raw}
}

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
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/handoff"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/readiness"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// stages are the per-cluster conditions after Scheduled, in pipeline order, with
// the reason used while a stage has not been reported yet and the reason of the
// placement-level summary when every cluster's is True.
var stages = []struct {
	condType      string
	pendingReason string
	trueReason    string
}{
	{placementv1beta1.ConditionRolloutStarted, placementv1beta1.ReasonRolloutPending, placementv1beta1.ReasonRolloutStarted},
	{placementv1beta1.ConditionOverridden, placementv1beta1.ReasonRolloutPending, placementv1beta1.ReasonOverridden},
	{placementv1beta1.ConditionWorkSynchronized, placementv1beta1.ReasonWorkSyncPending, placementv1beta1.ReasonWorkSynchronized},
	{placementv1beta1.ConditionApplied, placementv1beta1.ReasonApplyPending, placementv1beta1.ReasonApplied},
	{placementv1beta1.ConditionAvailable, placementv1beta1.ReasonNotAvailableYet, placementv1beta1.ReasonAvailable},
}

// updateStatus computes the placement's status from its snapshots and bindings,
// writes it when it changed, and records an Event for every placement-level
// condition whose status changed.
func (r *Reconciler) updateStatus(ctx context.Context, s *scope, before placementv1beta1.PlacementObj) error {
	crp := s.placement
	bindings, err := pipeline.ListBindings(ctx, r.Client, s.key)
	if err != nil {
		return err
	}
	snapshots, err := pipeline.ListResourceSnapshots(ctx, r.Client, s.key, nil)
	if err != nil {
		return err
	}
	indexOf := map[string]string{}
	for _, snap := range snapshots {
		indexOf[snap.GetName()] = snap.GetLabels()[placementv1beta1.LabelResourceIndex]
	}
	computeStatus(s, bindings, indexOf)
	if equality.Semantic.DeepEqual(before.GetPlacementStatus(), crp.GetPlacementStatus()) {
		return nil
	}
	// The placement controller is the only writer of a placement's status. The
	// patch is computed against the cached object, which may be older than the
	// status this controller wrote last: without the resourceVersion
	// precondition a merge patch from a stale base leaves fields that the base
	// and the new status share as the server holds them (conditions of one
	// computation beside per-cluster statuses of another). A conflict is
	// retried with a fresher cache.
	if err := r.Client.Status().Patch(ctx, crp, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(pipeline.ManagerPlacement)); err != nil {
		return fmt.Errorf("failed to update status: %w", err)
	}
	r.observeAvailable(before, crp)
	// Events mark what a user acts on: a condition turning True or False (the
	// pending steps in between are in status, not in Events).
	for _, t := range conditions.Changed(before.GetPlacementStatus().Conditions, crp.GetPlacementStatus().Conditions) {
		c := conditions.Get(crp.GetPlacementStatus().Conditions, t)
		if c.Status == metav1.ConditionUnknown || readiness.IsType(t) {
			// Ready, Reconciling and Stalled repeat the condition that decided
			// them, which has its own Event.
			continue
		}
		eventType := corev1.EventTypeNormal
		if c.Status == metav1.ConditionFalse || c.Type == crp.PlacementConditionType(placementv1beta1.ConditionConflicted) {
			eventType = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(crp, nil, eventType, c.Reason, strings.TrimPrefix(t, s.key.Kind()), "%s is %s: %s", t, c.Status, c.Message)
	}
	return nil
}

// computeStatus fills s.placement.Status; a pure function of its inputs.
func computeStatus(s *scope, bindings []placementv1beta1.BindingObj, indexOf map[string]string) {
	crp := s.placement
	spec, st := crp.GetPlacementSpec(), crp.GetPlacementStatus()
	gen := crp.GetGeneration()
	if s.selectErr == nil {
		st.SelectedResources = nil
		if len(s.selected) > 0 {
			st.SelectedResources = identifiers(s.selected)
		}
	}
	latestSnapshot := ""
	if s.resourceSnapshot != nil {
		latestSnapshot = s.resourceSnapshot.GetName()
		st.ObservedResourceIndex = s.resourceSnapshot.GetLabels()[placementv1beta1.LabelResourceIndex]
	}

	// Scheduled.
	schedType := crp.PlacementConditionType(placementv1beta1.ConditionScheduled)
	var schedCond *metav1.Condition
	if s.policySnapshot != nil {
		schedCond = conditions.Get(s.policySnapshot.GetPolicySnapshotStatus().Conditions, placementv1beta1.ConditionScheduled)
	}
	switch {
	case s.selectErr != nil:
		conditions.Set(&st.Conditions, schedType, metav1.ConditionFalse, placementv1beta1.ReasonInvalidResourceSelectors, s.selectErr.Error(), gen)
	case schedCond == nil:
		conditions.Set(&st.Conditions, schedType, metav1.ConditionUnknown, placementv1beta1.ReasonSchedulePending, "waiting for the scheduler", gen)
	default:
		conditions.Set(&st.Conditions, schedType, schedCond.Status, schedCond.Reason, schedCond.Message+reservedNote(s.reservedLeftOut), gen)
	}

	// Conflicted, only while objects are left out for an earlier placement.
	conflictType := crp.PlacementConditionType(placementv1beta1.ConditionConflicted)
	switch {
	case len(s.conflicts) > 0:
		conditions.Set(&st.Conditions, conflictType, metav1.ConditionTrue, placementv1beta1.ReasonSelectedByEarlierPlacement, conflictMessage(s.conflicts), gen)
	case s.selectErr == nil:
		st.Conditions = withoutTypes(st.Conditions, conflictType)
	}

	// Per cluster.
	active := pipeline.ActiveBindings(bindings)
	if s.selectErr != nil {
		// Nothing can progress on a selection that cannot be answered: report
		// Scheduled=False alone rather than later stages waiting on clusters.
		active = nil
	}
	external := spec.Strategy.Type == placementv1beta1.ExternalRolloutStrategyType
	statuses := make([]placementv1beta1.PerClusterPlacementStatus, 0, len(active))
	for _, b := range active {
		statuses = append(statuses, perClusterStatus(b, latestSnapshot, indexOf, external, gen))
	}
	if p := spec.Policy; p != nil && p.PlacementType == placementv1beta1.PickN && p.NumberOfClusters != nil && s.selectErr == nil {
		// One entry for all the clusters not selected, however many the
		// placement asks for: the status's size must not grow with a number.
		if missing := int(*p.NumberOfClusters) - len(active); missing > 0 {
			pcs := placementv1beta1.PerClusterPlacementStatus{}
			status, reason, msg := unfilledSlots(schedCond, missing, int(*p.NumberOfClusters))
			conditions.Set(&pcs.Conditions, placementv1beta1.ConditionScheduled, status, reason, msg, gen)
			statuses = append(statuses, pcs)
		}
	}
	st.PlacementStatuses = statuses
	// Every binding, not only the active ones: a binding being removed still
	// reports, and what it reported last is what its replacement is given.
	st.HandOff = handoff.Keep(spec.StateHandOff, st.HandOff, bindings, s.now)

	// Placement-level stages summarise the clusters.
	for _, stage := range stages {
		t := crp.PlacementConditionType(stage.condType)
		if len(active) == 0 {
			meta := st.Conditions[:0:0]
			for _, c := range st.Conditions {
				if c.Type != t {
					meta = append(meta, c)
				}
			}
			st.Conditions = meta
			continue
		}
		status, reason, message := summarise(statuses, stage.condType, stage.pendingReason, stage.trueReason)
		if external && status == metav1.ConditionTrue {
			message += olderIndexes(statuses, st.ObservedResourceIndex)
		}
		conditions.Set(&st.Conditions, t, status, reason, message, gen)
	}
	placementAgentReports(crp, statuses, gen)
	readiness.SetPlacement(crp)
}

// unfilledSlots is the Scheduled condition of the one status entry (with no
// cluster name) that stands for the missing of asked PickN clusters when no
// binding fills them: not scheduled, with the scheduler's account of why, or
// pending while the scheduler has not decided (or its decision has no binding
// yet).
func unfilledSlots(schedCond *metav1.Condition, missing, asked int) (metav1.ConditionStatus, string, string) {
	switch {
	case schedCond == nil || schedCond.Status == metav1.ConditionUnknown:
		return metav1.ConditionUnknown, placementv1beta1.ReasonSchedulePending, fmt.Sprintf("%d of %d clusters: waiting for the scheduler", missing, asked)
	case schedCond.Status == metav1.ConditionFalse:
		return metav1.ConditionFalse, placementv1beta1.ReasonSchedulingPolicyUnfulfilled, fmt.Sprintf("%d of %d clusters could not be selected: no cluster fits: %s", missing, asked, schedCond.Message)
	default:
		return metav1.ConditionUnknown, placementv1beta1.ReasonSchedulePending, fmt.Sprintf("%d of %d clusters: waiting for the scheduler's bindings (%s)", missing, asked, schedCond.Message)
	}
}

// perClusterStatus reports one binding's progress. A stage is only as fresh as
// the binding's generation. Under a rolling update, stages after Overridden
// count only for the latest resource snapshot: a binding on an older one is
// still being rolled out. An External placement's bindings move only with
// staged update runs, which may hold a cluster on an older snapshot or roll it
// back to one on purpose, so there a binding is judged against the snapshot it
// names, and the messages say which index the cluster runs.
func perClusterStatus(b placementv1beta1.BindingObj, latestSnapshot string, indexOf map[string]string, external bool, gen int64) placementv1beta1.PerClusterPlacementStatus {
	spec, st := b.GetBindingSpec(), b.GetBindingStatus()
	pcs := placementv1beta1.PerClusterPlacementStatus{
		ClusterName:           spec.TargetCluster,
		ObservedResourceIndex: indexOf[spec.ResourceSnapshotName],
		FailedPlacements:      st.FailedPlacements,
		DiffedPlacements:      st.DiffedPlacements,
		// The override snapshots the rollout gave the cluster (see Overridden for
		// whether they applied).
		ApplicableClusterResourceOverrides: spec.ClusterResourceOverrideSnapshots,
		ApplicableResourceOverrides:        spec.ResourceOverrideSnapshots,
	}
	if c := conditions.Get(st.Conditions, placementv1beta1.ConditionScheduled); c != nil {
		conditions.Set(&pcs.Conditions, placementv1beta1.ConditionScheduled, c.Status, c.Reason, c.Message, gen)
	} else {
		msg := spec.ClusterDecision.Reason
		if msg == "" {
			msg = "picked by the scheduler"
		}
		conditions.Set(&pcs.Conditions, placementv1beta1.ConditionScheduled, metav1.ConditionTrue, placementv1beta1.ReasonScheduled, msg, gen)
	}
	older := ""
	if latestSnapshot != "" && spec.ResourceSnapshotName != "" && spec.ResourceSnapshotName != latestSnapshot {
		older = fmt.Sprintf("runs %s; the latest is %s", snapshotLabel(indexOf, spec.ResourceSnapshotName), indexOf[latestSnapshot])
	}
	previous := ""
	for _, stage := range stages {
		c := conditions.Get(st.Conditions, stage.condType)
		afterOverridden := stage.condType != placementv1beta1.ConditionRolloutStarted && stage.condType != placementv1beta1.ConditionOverridden
		switch {
		case c != nil && c.ObservedGeneration == b.GetGeneration() && c.Reason == placementv1beta1.ReasonAgentDisconnected:
			// Applied and Available of a member whose agent is gone: say so,
			// not that the cluster waits for the stage before.
			conditions.Set(&pcs.Conditions, stage.condType, c.Status, c.Reason, c.Message, gen)
		case previous != "":
			conditions.Set(&pcs.Conditions, stage.condType, metav1.ConditionUnknown, stage.pendingReason, "waiting for "+previous, gen)
		case c == nil || c.ObservedGeneration != b.GetGeneration():
			conditions.Set(&pcs.Conditions, stage.condType, metav1.ConditionUnknown, stage.pendingReason, "not reported yet", gen)
		case older != "" && afterOverridden && external:
			conditions.Set(&pcs.Conditions, stage.condType, c.Status, c.Reason, older+": "+c.Message, gen)
		case older != "" && afterOverridden && c.Status == metav1.ConditionTrue:
			conditions.Set(&pcs.Conditions, stage.condType, metav1.ConditionUnknown, stage.pendingReason, older+": rolling out the latest resources", gen)
		default:
			conditions.Set(&pcs.Conditions, stage.condType, c.Status, c.Reason, c.Message, gen)
		}
		if previous == "" && !conditions.IsTrue(pcs.Conditions, stage.condType) {
			previous = stage.condType
		}
	}
	// Under a rolling update a binding on an older snapshot is still being rolled
	// out; an External one is judged against its own snapshot.
	perClusterAgentReports(b, &pcs, older != "" && !external, gen)
	return pcs
}

// snapshotLabel names a snapshot by its resource index, or by its name when
// the snapshot is gone.
func snapshotLabel(indexOf map[string]string, snapshot string) string {
	if i := indexOf[snapshot]; i != "" {
		return "resource snapshot index " + i
	}
	return "resource snapshot " + snapshot + ", which no longer exists"
}

// olderIndexes says which clusters run another resource index than the latest
// (for an External placement, whose runs decide that), or nothing.
func olderIndexes(statuses []placementv1beta1.PerClusterPlacementStatus, latest string) string {
	byIndex := map[string][]string{}
	var indexes []string
	for _, pcs := range statuses {
		if pcs.ClusterName == "" || pcs.ObservedResourceIndex == "" || pcs.ObservedResourceIndex == latest {
			continue
		}
		if byIndex[pcs.ObservedResourceIndex] == nil {
			indexes = append(indexes, pcs.ObservedResourceIndex)
		}
		byIndex[pcs.ObservedResourceIndex] = append(byIndex[pcs.ObservedResourceIndex], pcs.ClusterName)
	}
	if len(indexes) == 0 {
		return ""
	}
	sort.Strings(indexes)
	parts := make([]string, 0, len(indexes))
	for _, i := range indexes {
		parts = append(parts, fmt.Sprintf("%s run%s resource snapshot index %s", strings.Join(byIndex[i], ", "), plural(len(byIndex[i])), i))
	}
	return fmt.Sprintf(" (%s; the latest is %s)", strings.Join(parts, "; "), latest)
}

func plural(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}

// summarise folds one condition type over the clusters: any False makes it
// False, any Unknown makes it Unknown (reason AgentDisconnected, naming the
// clusters, when an agent is disconnected), all True makes it True.
func summarise(statuses []placementv1beta1.PerClusterPlacementStatus, condType, pendingReason, trueReason string) (metav1.ConditionStatus, string, string) {
	var falses, unknowns, disconnected []string
	var firstDisconnected *metav1.Condition
	var firstFalse *metav1.Condition
	total := 0
	for _, pcs := range statuses {
		if pcs.ClusterName == "" {
			continue
		}
		total++
		c := conditions.Get(pcs.Conditions, condType)
		switch {
		case c == nil || c.Status == metav1.ConditionUnknown:
			unknowns = append(unknowns, pcs.ClusterName)
			if c != nil && c.Reason == placementv1beta1.ReasonAgentDisconnected {
				if firstDisconnected == nil {
					firstDisconnected = c
				}
				disconnected = append(disconnected, pcs.ClusterName)
			}
		case c.Status == metav1.ConditionFalse:
			if firstFalse == nil {
				firstFalse = c
			}
			falses = append(falses, pcs.ClusterName)
		}
	}
	switch {
	case len(falses) > 0:
		return metav1.ConditionFalse, firstFalse.Reason, fmt.Sprintf("%d of %d clusters: %s; %s: %s", len(falses), total, strings.Join(falses, ", "), falses[0], firstFalse.Message)
	case len(disconnected) > 0:
		return metav1.ConditionUnknown, placementv1beta1.ReasonAgentDisconnected, fmt.Sprintf("%d of %d clusters have a disconnected agent: %s; %s: %s",
			len(disconnected), total, strings.Join(disconnected, ", "), disconnected[0], firstDisconnected.Message)
	case len(unknowns) > 0:
		return metav1.ConditionUnknown, pendingReason, fmt.Sprintf("waiting for %d of %d clusters: %s", len(unknowns), total, strings.Join(unknowns, ", "))
	default:
		return metav1.ConditionTrue, trueReason, fmt.Sprintf("all %d clusters", total)
	}
}

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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/schedulinggroup"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// workSpec is what fillWork writes into a binding's Work.
type workSpec struct {
	binding   placementv1beta1.BindingObj
	placement placementv1beta1.PlacementObj
	// manifests are the rendered objects (envelopes unwrapped, overrides
	// applied), with the provenance annotations stamped.
	manifests []placementv1beta1.Manifest
	// unstamped are the same without the provenance annotations.
	unstamped []placementv1beta1.Manifest
}

// fillWork makes work (as read, or new) the binding's Work: the placement's
// labels, the parent binding and scheduling group, the cleanup finalizer on a
// new Work (the member removes the Work's objects before the hub lets it go;
// an existing Work lacking it gets it from pipeline.AddFinalizer), the manifests,
// the apply strategy and what the placement asks of agents; a
// ClusterResourceBinding controls it. A Work that exists and belongs to another
// placement is not touched: fillWork returns an error naming the owner.
func fillWork(work *placementv1beta1.Work, in workSpec, scheme *runtime.Scheme) error {
	b, key := in.binding, placementOf(in.binding)
	if !work.CreationTimestamp.IsZero() {
		if owner, ok := pipeline.OwnerKey(work); ok && owner != key {
			return fmt.Errorf("the Work %s/%s belongs to %s %s", work.Namespace, work.Name, owner.Kind(), owner)
		}
	}
	if work.Labels == nil {
		work.Labels = map[string]string{}
	}
	for k, v := range key.Labels() {
		work.Labels[k] = v
	}
	work.Labels[placementv1beta1.LabelParentBinding] = b.GetName()
	if group := schedulinggroup.Of(b.GetLabels()); group != "" {
		work.Labels[schedulinggroup.LabelGroup] = group
	}
	if work.CreationTimestamp.IsZero() {
		controllerutil.AddFinalizer(work, placementv1beta1.AppliedResourcesCleanupFinalizer)
	}
	work.Spec.Workload.Manifests = manifestsFor(work, in)
	work.Spec.ApplyStrategy = b.GetBindingSpec().ApplyStrategy.DeepCopy()
	setAgentSpec(work, in.placement)
	if b.GetNamespace() != "" {
		// A ResourceBinding cannot own an object in another namespace; its
		// labels name it instead (see ownsWork).
		return nil
	}
	return controllerutil.SetControllerReference(b, work, scheme)
}

// manifestsFor is what the Work holds: the stamped manifests, except that an
// existing Work whose manifests are exactly the unstamped ones (a hub before
// provenance wrote it, and its content has not changed since) keeps them as
// they are. Upgrading the hub then re-sends no Work and rewrites no object on
// any member; the Work gets its provenance with its next change.
func manifestsFor(work *placementv1beta1.Work, in workSpec) []placementv1beta1.Manifest {
	if !work.CreationTimestamp.IsZero() && in.unstamped != nil && sameManifests(work.Spec.Workload.Manifests, in.unstamped) {
		return work.Spec.Workload.Manifests
	}
	return in.manifests
}

// sameManifests reports whether a and b hold the same objects, in order,
// whatever the JSON's key order or spacing.
func sameManifests(a, b []placementv1beta1.Manifest) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if bytes.Equal(a[i].Raw, b[i].Raw) {
			continue
		}
		var x, y any
		if json.Unmarshal(a[i].Raw, &x) != nil || json.Unmarshal(b[i].Raw, &y) != nil || !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// statusInput is what the binding's status is decided from.
type statusInput struct {
	binding placementv1beta1.BindingObj
	// work is the binding's Work as written, nil when it could not be.
	work *placementv1beta1.Work
	// overrides are the override snapshots that changed what the cluster gets.
	overrides []string
	// err is why the Work could not be written: a *contentError (the user's to
	// fix: reported, not retried) or another error (retried).
	err error
	// connected is the member's AgentConnected condition, nil if unknown.
	connected *metav1.Condition
}

// statusPlan is the work generator's part of a binding's status, and what else
// the status write entails.
type statusPlan struct {
	status pipeline.BindingStatus
	// warning, when not empty, is announced as a Warning Event on the placement
	// with reason warningReason: an override or envelope newly stops resources
	// from reaching the cluster.
	warning, warningReason string
	// retry, when not nil, is returned by the reconcile (retried with backoff)
	// after the status is written.
	retry error
}

// planStatus decides the work generator's conditions and lists on a binding:
//
//   - Content the user must fix (an envelope that cannot be read, an override
//     that cannot be applied): Overridden=False and WorkSynchronized=False with
//     the failure's reasons; the Work keeps its previous spec and the lists stay
//     as they were; a Warning Event when the failure is new (or its message
//     changed). Not retried: a change of the inputs wakes the generator.
//   - Another failure to write the Work: WorkSynchronized=False
//     (WorkNotSynchronized) with the error, the lists kept; retried.
//   - The Work written: Overridden=True (the overrides applied, or
//     NoOverrideSpecified), WorkSynchronized=True naming the Work and snapshot,
//     Applied and Available copied from the Work when reported for its current
//     generation (else Unknown, pending), the agent's reports (drift, diff,
//     feedback, failed manifests), and Applied/Available Unknown
//     (AgentDisconnected) while the member's agent is disconnected.
func planStatus(in statusInput) statusPlan {
	b := in.binding
	spec, gen := b.GetBindingSpec(), b.GetGeneration()
	own := pipeline.OwnConditions(b.GetBindingStatus().Conditions, ownedConditions...)
	plan := statusPlan{status: pipeline.BindingStatus{OwnsPlacementLists: true}}
	var content *contentError
	switch {
	case errors.As(in.err, &content):
		prev := conditions.Get(b.GetBindingStatus().Conditions, placementv1beta1.ConditionOverridden)
		if prev == nil || prev.Status != metav1.ConditionFalse || prev.Message != content.Error() {
			plan.warning = fmt.Sprintf("nothing new is sent to member %s: %v", spec.TargetCluster, content)
			plan.warningReason = content.overriddenReason
		}
		conditions.Set(&own, placementv1beta1.ConditionOverridden, metav1.ConditionFalse, content.overriddenReason, content.Error(), gen)
		conditions.Set(&own, placementv1beta1.ConditionWorkSynchronized, metav1.ConditionFalse, content.reason,
			fmt.Sprintf("nothing new is sent to member %s: %v", spec.TargetCluster, content), gen)
		keepPlacementLists(&plan.status, b)
	case in.err != nil:
		conditions.Set(&own, placementv1beta1.ConditionWorkSynchronized, metav1.ConditionFalse,
			placementv1beta1.ReasonWorkNotSynchronized, in.err.Error(), gen)
		keepPlacementLists(&plan.status, b)
		plan.retry = fmt.Errorf("work not synchronised: %w", in.err)
	default:
		if len(in.overrides) > 0 {
			conditions.Set(&own, placementv1beta1.ConditionOverridden, metav1.ConditionTrue,
				placementv1beta1.ReasonOverridden, overriddenMessage(in.overrides), gen)
		} else {
			conditions.Set(&own, placementv1beta1.ConditionOverridden, metav1.ConditionTrue,
				placementv1beta1.ReasonNoOverrideSpecified, "no override applies", gen)
		}
		conditions.Set(&own, placementv1beta1.ConditionWorkSynchronized, metav1.ConditionTrue,
			placementv1beta1.ReasonWorkSynchronized, fmt.Sprintf("Work %s/%s holds snapshot %s", in.work.Namespace, in.work.Name, spec.ResourceSnapshotName), gen)
		plan.status.FailedPlacements = copyWorkStatus(&own, b, in.work)
		copyAgentReports(&own, &plan.status, b, in.work)
		markDisconnected(&own, spec.TargetCluster, in.connected, gen)
	}
	plan.status.Conditions = own
	return plan
}

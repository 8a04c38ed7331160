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
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/schedulinggroup"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

func boundBinding(conds ...metav1.Condition) *placementv1beta1.ClusterResourceBinding {
	b := &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "web-m1", Generation: 2, UID: "b-uid",
			Labels: map[string]string{placementv1beta1.LabelPlacementName: "web"}},
		Spec: placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateBound, TargetCluster: "m1", ResourceSnapshotName: "web-3-snapshot"},
	}
	b.Status.Conditions = conds
	b.Status.FailedPlacements = []placementv1beta1.FailedResourcePlacement{{ResourceIdentifier: placementv1beta1.ResourceIdentifier{Kind: "ConfigMap", Name: "old"}}}
	return b
}

func reportedWork(gen int64, applied, available metav1.ConditionStatus, reportedGen int64) *placementv1beta1.Work {
	w := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-member-m1", Name: "web-work", Generation: gen}}
	conditions.Set(&w.Status.Conditions, placementv1beta1.ConditionApplied, applied, "R", "", reportedGen)
	conditions.Set(&w.Status.Conditions, placementv1beta1.ConditionAvailable, available, "R", "", reportedGen)
	return w
}

// summary is a status plan in short: "Type=Status/Reason" per condition, in
// type order, the failed placements, the warning and whether it retries.
func summary(p statusPlan) string {
	var parts []string
	for _, t := range []string{placementv1beta1.ConditionOverridden, placementv1beta1.ConditionWorkSynchronized,
		placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable} {
		if c := conditions.Get(p.status.Conditions, t); c != nil {
			parts = append(parts, fmt.Sprintf("%s=%s/%s", t, c.Status, c.Reason))
		}
	}
	parts = append(parts, fmt.Sprintf("failed=%d", len(p.status.FailedPlacements)))
	if p.warning != "" {
		parts = append(parts, "warning="+p.warningReason)
	}
	if p.retry != nil {
		parts = append(parts, "retry")
	}
	return strings.Join(parts, " ")
}

func TestPlanStatus(t *testing.T) {
	overrideFailed := &contentError{overriddenReason: placementv1beta1.ReasonOverrideFailed,
		reason: placementv1beta1.ReasonOverrideFailedNotSynchronized, err: errors.New("path /spec/x does not exist")}
	disconnected := &metav1.Condition{Type: clusterv1beta1.ConditionAgentConnected, Status: metav1.ConditionFalse,
		Reason: clusterv1beta1.ReasonHeartbeatTimeout, LastTransitionTime: metav1.NewTime(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC))}
	for _, tc := range []struct {
		name string
		in   statusInput
		want string
	}{{
		name: "a Work the agent applied for its generation: its conditions are copied",
		in:   statusInput{binding: boundBinding(), work: reportedWork(4, metav1.ConditionTrue, metav1.ConditionTrue, 4)},
		want: "Overridden=True/NoOverrideSpecified WorkSynchronized=True/WorkSynchronized Applied=True/R Available=True/R failed=0",
	}, {
		name: "applied overrides are named in Overridden",
		in:   statusInput{binding: boundBinding(), work: reportedWork(4, metav1.ConditionTrue, metav1.ConditionTrue, 4), overrides: []string{"ro-1"}},
		want: "Overridden=True/OverriddenSucceeded WorkSynchronized=True/WorkSynchronized Applied=True/R Available=True/R failed=0",
	}, {
		name: "a report for an older generation of the Work is pending, not copied",
		in:   statusInput{binding: boundBinding(), work: reportedWork(5, metav1.ConditionTrue, metav1.ConditionTrue, 4)},
		want: "Overridden=True/NoOverrideSpecified WorkSynchronized=True/WorkSynchronized Applied=Unknown/ApplyPending Available=Unknown/NotAvailableYet failed=0",
	}, {
		name: "a disconnected agent's member is Unknown, whatever it last reported",
		in:   statusInput{binding: boundBinding(), work: reportedWork(4, metav1.ConditionTrue, metav1.ConditionTrue, 4), connected: disconnected},
		want: "Overridden=True/NoOverrideSpecified WorkSynchronized=True/WorkSynchronized Applied=Unknown/AgentDisconnected Available=Unknown/AgentDisconnected failed=0",
	}, {
		name: "an override that cannot be applied is the user's: reported with a warning, lists kept, not retried",
		in:   statusInput{binding: boundBinding(), err: overrideFailed},
		want: "Overridden=False/OverriddenFailed WorkSynchronized=False/OverrideFailed failed=1 warning=OverriddenFailed",
	}, {
		name: "the same override failure again raises no second warning",
		in: statusInput{binding: boundBinding(metav1.Condition{Type: placementv1beta1.ConditionOverridden, Status: metav1.ConditionFalse,
			Reason: placementv1beta1.ReasonOverrideFailed, Message: overrideFailed.Error()}), err: overrideFailed},
		want: "Overridden=False/OverriddenFailed WorkSynchronized=False/OverrideFailed failed=1",
	}, {
		name: "a Work that cannot be written is retried, the lists kept",
		in:   statusInput{binding: boundBinding(), err: errors.New("namespace flotilla-member-m1 does not exist: has member m1 joined?")},
		want: "WorkSynchronized=False/WorkNotSynchronized failed=1 retry",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := planStatus(tc.in)
			if s := summary(got); s != tc.want {
				t.Errorf("planStatus:\n got %s\nwant %s", s, tc.want)
			}
			for _, c := range got.status.Conditions {
				if c.ObservedGeneration != tc.in.binding.GetGeneration() {
					t.Errorf("%s has observedGeneration %d, want the binding's %d", c.Type, c.ObservedGeneration, tc.in.binding.GetGeneration())
				}
			}
		})
	}
}

func TestFillWork(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := placementv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	crp := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	manifests := []placementv1beta1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"kind":"ConfigMap"}`)}}}

	t.Run("a new Work is labelled, finalized and controlled by its ClusterResourceBinding", func(t *testing.T) {
		b := boundBinding()
		b.Labels[schedulinggroup.LabelGroup] = "db"
		work := &placementv1beta1.Work{}
		if err := fillWork(work, workSpec{binding: b, placement: crp, manifests: manifests}, scheme); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{placementv1beta1.LabelPlacementName: "web", placementv1beta1.LabelParentBinding: "web-m1", schedulinggroup.LabelGroup: "db"}
		if diff := cmp.Diff(want, work.Labels); diff != "" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{placementv1beta1.AppliedResourcesCleanupFinalizer}, work.Finalizers); diff != "" {
			t.Errorf("finalizers (-want +got):\n%s", diff)
		}
		if !metav1.IsControlledBy(work, b) {
			t.Errorf("the Work is not controlled by its binding: %+v", work.OwnerReferences)
		}
		if len(work.Spec.Workload.Manifests) != 1 {
			t.Errorf("the Work holds %d manifests, want 1", len(work.Spec.Workload.Manifests))
		}
	})
	t.Run("a ResourceBinding's Work names it by labels, with no owner", func(t *testing.T) {
		rb := &placementv1beta1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "web-m1", Namespace: "team", UID: "rb",
			Labels: map[string]string{placementv1beta1.LabelPlacementName: "web", placementv1beta1.LabelPlacementNamespace: "team"}}}
		work := &placementv1beta1.Work{}
		if err := fillWork(work, workSpec{binding: rb, placement: crp, manifests: manifests}, scheme); err != nil {
			t.Fatal(err)
		}
		if len(work.OwnerReferences) != 0 || !ownsWork(work, rb) {
			t.Errorf("the Work should be the ResourceBinding's by labels only: owners %+v, labels %v", work.OwnerReferences, work.Labels)
		}
	})
	t.Run("an existing Work that lacks the finalizer does not get it in the patch (pipeline.AddFinalizer adds it, locked)", func(t *testing.T) {
		work := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "web-work", Namespace: "flotilla-member-m1", CreationTimestamp: metav1.Now(),
			Finalizers: []string{"example.com/theirs"}}}
		if err := fillWork(work, workSpec{binding: boundBinding(), placement: crp, manifests: manifests}, scheme); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"example.com/theirs"}, work.Finalizers); diff != "" {
			t.Errorf("finalizers (-want +got):\n%s", diff)
		}
	})
	t.Run("a Work of another placement is not touched", func(t *testing.T) {
		other := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "web-work", Namespace: "flotilla-member-m1",
			CreationTimestamp: metav1.Now(), Labels: map[string]string{placementv1beta1.LabelPlacementName: "web", placementv1beta1.LabelPlacementNamespace: "team"}}}
		before := other.DeepCopy()
		err := fillWork(other, workSpec{binding: boundBinding(), placement: crp, manifests: manifests}, scheme)
		if err == nil || !strings.Contains(err.Error(), "belongs to") {
			t.Errorf("fillWork = %v, want an error naming the Work's owner", err)
		}
		if diff := cmp.Diff(before, other); diff != "" {
			t.Errorf("the other placement's Work changed (-before +after):\n%s", diff)
		}
	})
}

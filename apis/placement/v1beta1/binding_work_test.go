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

package v1beta1_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// bindingKinds make bindings of both kinds.
var bindingKinds = []struct {
	name     string
	resource string
	new      func(spec placementv1beta1.ResourceBindingSpec) placementv1beta1.BindingObj
}{
	{
		name:     "ClusterResourceBinding",
		resource: "clusterresourcebindings",
		new: func(spec placementv1beta1.ResourceBindingSpec) placementv1beta1.BindingObj {
			return &placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{GenerateName: "crp-1-member-1-"}, Spec: spec}
		},
	},
	{
		name:     "ResourceBinding",
		resource: "resourcebindings",
		new: func(spec placementv1beta1.ResourceBindingSpec) placementv1beta1.BindingObj {
			return &placementv1beta1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{GenerateName: "rp-1-member-1-", Namespace: testNamespace}, Spec: spec}
		},
	},
}

func TestBindingValidation(t *testing.T) {
	tests := []struct {
		name        string
		spec        placementv1beta1.ResourceBindingSpec
		wantRefusal string
	}{
		{
			name: "a scheduled binding is accepted",
			spec: placementv1beta1.ResourceBindingSpec{
				State:                        placementv1beta1.BindingStateScheduled,
				TargetCluster:                "member-1",
				SchedulingPolicySnapshotName: "crp-1-0",
				ClusterDecision:              placementv1beta1.ClusterDecision{ClusterName: "member-1", Selected: true, Reason: "picked"},
			},
		},
		{
			name:        "a binding without a target cluster is refused",
			spec:        placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateBound},
			wantRefusal: "spec.targetCluster in body should be at least 1 chars long",
		},
		{
			name:        "an unknown state is refused",
			spec:        placementv1beta1.ResourceBindingSpec{State: "Pending", TargetCluster: "member-1"},
			wantRefusal: `spec.state: Unsupported value: "Pending"`,
		},
	}
	for _, kind := range bindingKinds {
		for _, tc := range tests {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				err := env.Client.Create(context.Background(), kind.new(tc.spec))
				testenv.CheckValidation(t, err, tc.wantRefusal)
			})
		}
	}
}

func TestBindingDefaultsAndPrintColumns(t *testing.T) {
	for _, kind := range bindingKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			b := kind.new(placementv1beta1.ResourceBindingSpec{
				State:                            placementv1beta1.BindingStateBound,
				TargetCluster:                    "member-1",
				ResourceSnapshotName:             "crp-1-0-snapshot",
				SchedulingPolicySnapshotName:     "crp-1-0",
				ResourceOverrideSnapshots:        []placementv1beta1.NamespacedName{{Name: "ro-1", Namespace: "app"}},
				ClusterResourceOverrideSnapshots: []string{"cro-1"},
				ApplyStrategy:                    &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverNever},
			})
			if err := env.Client.Create(ctx, b); err != nil {
				t.Fatalf("failed to create the binding: %v", err)
			}
			wantApply := &placementv1beta1.ApplyStrategy{
				Type:             placementv1beta1.ApplyStrategyTypeServerSideApply,
				WhenToApply:      placementv1beta1.WhenToApplyAlways,
				WhenToTakeOver:   placementv1beta1.WhenToTakeOverNever,
				ComparisonOption: placementv1beta1.PartialComparison,
			}
			if diff := cmp.Diff(wantApply, b.GetBindingSpec().ApplyStrategy); diff != "" {
				t.Errorf("apply strategy after defaulting (-want +got):\n%s", diff)
			}

			now := metav1.Now()
			b.GetBindingStatus().Conditions = []metav1.Condition{
				{Type: placementv1beta1.ConditionWorkSynchronized, Status: metav1.ConditionTrue, Reason: placementv1beta1.ReasonWorkSynchronized, LastTransitionTime: now},
				{Type: placementv1beta1.ConditionApplied, Status: metav1.ConditionFalse, Reason: placementv1beta1.ReasonApplyFailed, LastTransitionTime: now},
			}
			if err := env.Client.Status().Update(ctx, b); err != nil {
				t.Fatalf("failed to update the status: %v", err)
			}
			table, err := env.Table(ctx, placementv1beta1.GroupVersion.WithResource(kind.resource), b.GetNamespace(), b.GetName())
			if err != nil {
				t.Fatal(err)
			}
			got, err := testenv.FirstRow(table)
			if err != nil {
				t.Fatal(err)
			}
			want := []testenv.TableColumn{
				{Name: "Name", Value: b.GetName()},
				{Name: "TARGET", Value: "member-1"},
				{Name: "STATE", Value: "Bound"},
				{Name: "WORK-SYNCHRONIZED", Value: "True"},
				{Name: "APPLIED", Value: "False"},
				{Name: "AVAILABLE", Value: ""},
				{Name: "RESOURCE-SNAPSHOT", Priority: 1, Value: "crp-1-0-snapshot"},
				{Name: "POLICY-SNAPSHOT", Priority: 1, Value: "crp-1-0"},
				{Name: "AGE", Value: testenv.AgeValue},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("print columns (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWork(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterv1beta1.MemberNamespace("member-1")}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatalf("failed to create the member namespace: %v", err)
	}
	manifests := []runtime.RawExtension{namespaceObject(t, "app"), configMapObject(t, "app-config")}
	w := &placementv1beta1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Name:      "crp-1-work",
			Namespace: ns.Name,
			Labels:    map[string]string{placementv1beta1.LabelPlacementName: "crp-1", placementv1beta1.LabelParentBinding: "crp-1-member-1"},
		},
		Spec: placementv1beta1.WorkSpec{
			Workload: placementv1beta1.WorkloadTemplate{Manifests: []placementv1beta1.Manifest{
				{RawExtension: manifests[0]},
				{RawExtension: manifests[1]},
			}},
			ApplyStrategy:  &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeReportDiff},
			DeleteStrategy: &placementv1beta1.DeleteStrategy{},
		},
	}
	if err := env.Client.Create(ctx, w); err != nil {
		t.Fatalf("failed to create the work: %v", err)
	}

	t.Run("the manifests are kept and the strategies defaulted", func(t *testing.T) {
		var got []runtime.RawExtension
		for _, m := range w.Spec.Workload.Manifests {
			got = append(got, m.RawExtension)
		}
		if diff := cmp.Diff(decoded(t, manifests...), decoded(t, got...)); diff != "" {
			t.Errorf("manifests after a round trip (-want +got):\n%s", diff)
		}
		if got, want := w.Spec.DeleteStrategy.PropagationPolicy, placementv1beta1.DeletePropagationPolicyDelete; got != want {
			t.Errorf("delete propagation policy is %q, want %q", got, want)
		}
		if got, want := w.Spec.ApplyStrategy.WhenToTakeOver, placementv1beta1.WhenToTakeOverIfNoDiff; got != want {
			t.Errorf("whenToTakeOver is %q, want %q", got, want)
		}
	})

	t.Run("the agent's status is kept and printed", func(t *testing.T) {
		now := metav1.NewTime(time.Now().Truncate(time.Second))
		applied := metav1.Condition{Type: placementv1beta1.ConditionApplied, Status: metav1.ConditionTrue, Reason: placementv1beta1.ReasonApplied, LastTransitionTime: now}
		available := metav1.Condition{Type: placementv1beta1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: placementv1beta1.ReasonNotTrackable, LastTransitionTime: now}
		status := placementv1beta1.WorkStatus{
			Conditions: []metav1.Condition{applied, available},
			ManifestConditions: []placementv1beta1.ManifestCondition{
				{
					Identifier: placementv1beta1.WorkResourceIdentifier{Ordinal: 0, Version: "v1", Kind: "Namespace", Resource: "namespaces", Name: "app"},
					Conditions: []metav1.Condition{applied, available},
				},
				{
					Identifier: placementv1beta1.WorkResourceIdentifier{Ordinal: 1, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "app", Name: "app-config"},
					Conditions: []metav1.Condition{applied, available},
					DiffDetails: &placementv1beta1.DiffDetails{
						ObservationTime: &now,
						ObservedDiffs:   []placementv1beta1.PatchDetail{{Path: "/data/key", ValueInMember: "other", ValueInHub: "value"}},
					},
				},
			},
		}
		w.Status = status
		if err := env.Client.Status().Update(ctx, w); err != nil {
			t.Fatalf("failed to update the status: %v", err)
		}
		if diff := cmp.Diff(status, w.Status); diff != "" {
			t.Errorf("status after the update (-want +got):\n%s", diff)
		}
		table, err := env.Table(ctx, placementv1beta1.GroupVersion.WithResource("works"), w.Namespace, w.Name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := testenv.FirstRow(table)
		if err != nil {
			t.Fatal(err)
		}
		want := []testenv.TableColumn{
			{Name: "Name", Value: w.Name},
			{Name: "APPLIED", Value: "True"},
			{Name: "AVAILABLE", Value: "True"},
			{Name: "AGE", Value: testenv.AgeValue},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("print columns (-want +got):\n%s", diff)
		}
	})
}

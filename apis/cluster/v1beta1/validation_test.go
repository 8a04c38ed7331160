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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

func memberCluster(name string, taints ...clusterv1beta1.Taint) *clusterv1beta1.MemberCluster {
	return &clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       clusterv1beta1.MemberClusterSpec{Taints: taints},
	}
}

func taint(key string, effect clusterv1beta1.TaintEffect) clusterv1beta1.Taint {
	return clusterv1beta1.Taint{Key: key, Value: "true", Effect: effect}
}

func TestMemberClusterDefaults(t *testing.T) {
	ctx := context.Background()
	mc := memberCluster("defaults")
	if err := env.Client.Create(ctx, mc); err != nil {
		t.Fatalf("failed to create the member cluster: %v", err)
	}
	// The CRD's default is the protocol's: one heartbeat period everywhere.
	want := clusterv1beta1.MemberClusterSpec{HeartbeatPeriodSeconds: int32(tunnel.DefaultHeartbeatPeriod / time.Second)}
	if diff := cmp.Diff(want, mc.Spec); diff != "" {
		t.Errorf("spec after defaulting (-want +got):\n%s", diff)
	}

	t.Run("a member cluster without a spec gets the default spec", func(t *testing.T) {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": clusterv1beta1.GroupVersion.String(),
			"kind":       "MemberCluster",
			"metadata":   map[string]any{"name": "no-spec"},
		}}
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatalf("failed to create the member cluster: %v", err)
		}
		got := &clusterv1beta1.MemberCluster{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatalf("failed to get the member cluster: %v", err)
		}
		if diff := cmp.Diff(want, got.Spec); diff != "" {
			t.Errorf("spec after defaulting (-want +got):\n%s", diff)
		}
	})
}

func TestMemberClusterValidation(t *testing.T) {
	tests := []struct {
		name        string
		cluster     *clusterv1beta1.MemberCluster
		wantRefusal string
	}{
		{
			name:    "a cluster with taints of the same key but different effects is accepted",
			cluster: memberCluster("two-effects", taint("maintenance", clusterv1beta1.TaintEffectNoSchedule), taint("maintenance", clusterv1beta1.TaintEffectNoExecute)),
		},
		{
			name:    "a 47-character name is accepted",
			cluster: memberCluster(strings.Repeat("a", 47)),
		},
		{
			name:        "a 48-character name is refused, as its namespace name would be too long",
			cluster:     memberCluster(strings.Repeat("a", 48)),
			wantRefusal: "name must be a DNS label (lower-case letters, digits and '-') of at most 47 characters",
		},
		{
			name:        "a name with a dot is refused, as it is not a valid namespace name",
			cluster:     memberCluster("member.one"),
			wantRefusal: "name must be a DNS label",
		},
		{
			name:        "two taints with the same key and effect are refused",
			cluster:     memberCluster("duplicate-taints", taint("maintenance", clusterv1beta1.TaintEffectNoSchedule), taint("maintenance", clusterv1beta1.TaintEffectNoSchedule)),
			wantRefusal: "Duplicate value",
		},
		{
			name:        "a taint with the PreferNoSchedule effect is refused",
			cluster:     memberCluster("prefer-no-schedule", taint("maintenance", "PreferNoSchedule")),
			wantRefusal: `Unsupported value: "PreferNoSchedule"`,
		},
		{
			name:        "a taint without a key is refused",
			cluster:     memberCluster("no-taint-key", taint("", clusterv1beta1.TaintEffectNoSchedule)),
			wantRefusal: "spec.taints[0].key",
		},
		{
			name: "a heartbeat period of more than ten minutes is refused",
			cluster: func() *clusterv1beta1.MemberCluster {
				mc := memberCluster("slow-heartbeat")
				mc.Spec.HeartbeatPeriodSeconds = 601
				return mc
			}(),
			wantRefusal: "spec.heartbeatPeriodSeconds: Invalid value: 601: spec.heartbeatPeriodSeconds in body should be less than or equal to 600",
		},
		{
			name: "a negative heartbeat period is refused",
			cluster: func() *clusterv1beta1.MemberCluster {
				mc := memberCluster("negative-heartbeat")
				mc.Spec.HeartbeatPeriodSeconds = -1
				return mc
			}(),
			wantRefusal: "should be greater than or equal to 1",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := env.Client.Create(context.Background(), tc.cluster)
			testenv.CheckValidation(t, err, tc.wantRefusal)
		})
	}
}

func TestMemberClusterStatusAndPrintColumns(t *testing.T) {
	ctx := context.Background()
	mc := memberCluster("printed")
	if err := env.Client.Create(ctx, mc); err != nil {
		t.Fatalf("failed to create the member cluster: %v", err)
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	condition := func(conditionType, reason string) metav1.Condition {
		return metav1.Condition{Type: conditionType, Status: metav1.ConditionTrue, Reason: reason, ObservedGeneration: mc.Generation, LastTransitionTime: now}
	}
	mc.Status = clusterv1beta1.MemberClusterStatus{
		Conditions: []metav1.Condition{
			condition(clusterv1beta1.ConditionJoined, clusterv1beta1.ReasonJoined),
			condition(clusterv1beta1.ConditionAgentConnected, clusterv1beta1.ReasonAgentConnected),
			condition(clusterv1beta1.ConditionHealthy, clusterv1beta1.ReasonHealthy),
		},
		AgentVersion:      "v0.1.0",
		KubernetesVersion: "v1.37.1",
		LastHeartbeatTime: &now,
		Properties: map[string]clusterv1beta1.PropertyValue{
			clusterv1beta1.PropertyNodeCount: {Value: "3", ObservationTime: &now},
		},
		ResourceUsage: clusterv1beta1.ResourceUsage{
			Available: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("7500m"),
				corev1.ResourceMemory: resource.MustParse("16Gi"),
			},
			ObservationTime: &now,
		},
		AgentSession: &clusterv1beta1.AgentSession{HubReplica: "flotilla-hub-0", ConnectedSince: &now},
	}
	want := mc.Status.DeepCopy()
	if err := env.Client.Status().Update(ctx, mc); err != nil {
		t.Fatalf("failed to update the status: %v", err)
	}
	if diff := cmp.Diff(want, &mc.Status); diff != "" {
		t.Errorf("status after the update (-want +got):\n%s", diff)
	}

	table, err := env.Table(ctx, clusterv1beta1.GroupVersion.WithResource("memberclusters"), "", mc.Name)
	if err != nil {
		t.Fatal(err)
	}
	got, err := testenv.FirstRow(table)
	if err != nil {
		t.Fatal(err)
	}
	wantColumns := []testenv.TableColumn{
		{Name: "Name", Value: "printed"},
		{Name: "JOINED", Value: "True"},
		{Name: "CONNECTED", Value: "True"},
		{Name: "HEALTHY", Value: "True"},
		{Name: "NODES", Value: "3"},
		{Name: "AVAILABLE-CPU", Value: "7500m"},
		{Name: "AVAILABLE-MEMORY", Value: "16Gi"},
		{Name: "LAST-RECORDED", Value: testenv.AgeValue},
		{Name: "AGE", Value: testenv.AgeValue},
	}
	if diff := cmp.Diff(wantColumns, got); diff != "" {
		t.Errorf("print columns (-want +got):\n%s", diff)
	}
}

func TestLocationValidation(t *testing.T) {
	ctx := context.Background()
	loc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterv1beta1.GroupVersion.String(),
		"kind":       "Location",
		"metadata":   map[string]any{"name": "no-selector"},
		"spec":       map[string]any{},
	}}
	err := env.Client.Create(ctx, loc)
	testenv.CheckValidation(t, err, "spec.instanceSelector: Required value")
}

func TestLocationStatusAndPrintColumns(t *testing.T) {
	ctx := context.Background()
	loc := &clusterv1beta1.Location{
		ObjectMeta: metav1.ObjectMeta{Name: "aws", Labels: map[string]string{"cloud": "aws"}},
		Spec: clusterv1beta1.LocationSpec{
			InstanceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"cloud": "aws"}},
		},
	}
	if err := env.Client.Create(ctx, loc); err != nil {
		t.Fatalf("failed to create the location: %v", err)
	}
	loc.Status = clusterv1beta1.LocationStatus{Instances: 3, AvailableInstances: 2}
	if err := env.Client.Status().Update(ctx, loc); err != nil {
		t.Fatalf("failed to update the status: %v", err)
	}
	table, err := env.Table(ctx, clusterv1beta1.GroupVersion.WithResource("locations"), "", loc.Name)
	if err != nil {
		t.Fatal(err)
	}
	got, err := testenv.FirstRow(table)
	if err != nil {
		t.Fatal(err)
	}
	want := []testenv.TableColumn{
		{Name: "Name", Value: "aws"},
		{Name: "INSTANCES", Value: "3"},
		{Name: "AVAILABLE", Value: "2"},
		{Name: "AGE", Value: testenv.AgeValue},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("print columns (-want +got):\n%s", diff)
	}
}

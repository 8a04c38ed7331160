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
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// object returns a Kubernetes object as JSON.
func object(t *testing.T, obj map[string]any) runtime.RawExtension {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("failed to encode %v: %v", obj, err)
	}
	return runtime.RawExtension{Raw: raw}
}

func namespaceObject(t *testing.T, name string) runtime.RawExtension {
	return object(t, map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata":   map[string]any{"name": name, "labels": map[string]any{"team": "a"}},
	})
}

func configMapObject(t *testing.T, name string) runtime.RawExtension {
	return object(t, map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": name, "namespace": "app"},
		"data":       map[string]any{"key": "value"},
	})
}

// decoded returns the JSON objects of raws, to compare them regardless of formatting.
func decoded(t *testing.T, raws ...runtime.RawExtension) []map[string]any {
	t.Helper()
	out := make([]map[string]any, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw.Raw, &out[i]); err != nil {
			t.Fatalf("failed to decode %s: %v", raw.Raw, err)
		}
	}
	return out
}

func resourceSnapshotSpec(raws ...runtime.RawExtension) placementv1beta1.ResourceSnapshotSpec {
	spec := placementv1beta1.ResourceSnapshotSpec{}
	for _, raw := range raws {
		spec.SelectedResources = append(spec.SelectedResources, placementv1beta1.ResourceContent{RawExtension: raw})
	}
	return spec
}

// resourceSnapshotKinds make resource snapshots of both kinds.
var resourceSnapshotKinds = []struct {
	name string
	new  func(spec placementv1beta1.ResourceSnapshotSpec) placementv1beta1.ResourceSnapshotObj
}{
	{
		name: "ClusterResourceSnapshot",
		new: func(spec placementv1beta1.ResourceSnapshotSpec) placementv1beta1.ResourceSnapshotObj {
			return &placementv1beta1.ClusterResourceSnapshot{ObjectMeta: snapshotMeta("crp-1", ""), Spec: spec}
		},
	},
	{
		name: "ResourceSnapshot",
		new: func(spec placementv1beta1.ResourceSnapshotSpec) placementv1beta1.ResourceSnapshotObj {
			return &placementv1beta1.ResourceSnapshot{ObjectMeta: snapshotMeta("rp-1", testNamespace), Spec: spec}
		},
	},
}

func snapshotMeta(placement, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		GenerateName: placement + "-0-",
		Namespace:    namespace,
		Labels: map[string]string{
			placementv1beta1.LabelPlacementName:    placement,
			placementv1beta1.LabelResourceIndex:    "0",
			placementv1beta1.LabelIsLatestSnapshot: "true",
		},
	}
}

func TestResourceSnapshotKeepsResources(t *testing.T) {
	for _, kind := range resourceSnapshotKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			resources := []runtime.RawExtension{namespaceObject(t, "app"), configMapObject(t, "app-config")}
			s := kind.new(resourceSnapshotSpec(resources...))
			if err := env.Client.Create(ctx, s); err != nil {
				t.Fatalf("failed to create the snapshot: %v", err)
			}
			got := s.DeepCopyObject().(placementv1beta1.ResourceSnapshotObj)
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(s), got.(client.Object)); err != nil {
				t.Fatalf("failed to get the snapshot: %v", err)
			}
			var gotRaws []runtime.RawExtension
			for _, r := range got.GetResourceSnapshotSpec().SelectedResources {
				gotRaws = append(gotRaws, r.RawExtension)
			}
			if diff := cmp.Diff(decoded(t, resources...), decoded(t, gotRaws...)); diff != "" {
				t.Errorf("selected resources after a round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResourceSnapshotValidation(t *testing.T) {
	tests := []struct {
		name        string
		spec        func(t *testing.T) placementv1beta1.ResourceSnapshotSpec
		wantRefusal string
	}{
		{
			name: "a snapshot without resources is accepted",
			spec: func(*testing.T) placementv1beta1.ResourceSnapshotSpec { return placementv1beta1.ResourceSnapshotSpec{} },
		},
		{
			name: "a resource without a kind is refused",
			spec: func(t *testing.T) placementv1beta1.ResourceSnapshotSpec {
				return resourceSnapshotSpec(object(t, map[string]any{"apiVersion": "v1", "metadata": map[string]any{"name": "x"}}))
			},
			wantRefusal: "spec.selectedResources[0].kind: Required value",
		},
	}
	for _, kind := range resourceSnapshotKinds {
		for _, tc := range tests {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				err := env.Client.Create(context.Background(), kind.new(tc.spec(t)))
				testenv.CheckValidation(t, err, tc.wantRefusal)
			})
		}
	}
}

func TestResourceSnapshotSpecIsImmutable(t *testing.T) {
	for _, kind := range resourceSnapshotKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			s := kind.new(resourceSnapshotSpec(namespaceObject(t, "app")))
			if err := env.Client.Create(ctx, s); err != nil {
				t.Fatalf("failed to create the snapshot: %v", err)
			}

			t.Run("a status update is accepted", func(t *testing.T) {
				s.GetResourceSnapshotStatus().Conditions = []metav1.Condition{{
					Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now(),
				}}
				err := env.Client.Status().Update(ctx, s.(client.Object))
				testenv.CheckValidation(t, err, "")
			})

			t.Run("a label change is accepted", func(t *testing.T) {
				s.SetLabels(map[string]string{placementv1beta1.LabelIsLatestSnapshot: "false"})
				err := env.Client.Update(ctx, s.(client.Object))
				testenv.CheckValidation(t, err, "")
			})

			t.Run("a spec change is refused", func(t *testing.T) {
				changed := s.DeepCopyObject().(placementv1beta1.ResourceSnapshotObj)
				*changed.GetResourceSnapshotSpec() = resourceSnapshotSpec(namespaceObject(t, "app"), configMapObject(t, "app-config"))
				err := env.Client.Update(ctx, changed.(client.Object))
				testenv.CheckValidation(t, err, "spec is immutable")
			})
		})
	}
}

// policySnapshotKinds make scheduling policy snapshots of both kinds.
var policySnapshotKinds = []struct {
	name string
	new  func(spec placementv1beta1.SchedulingPolicySnapshotSpec) placementv1beta1.PolicySnapshotObj
}{
	{
		name: "ClusterSchedulingPolicySnapshot",
		new: func(spec placementv1beta1.SchedulingPolicySnapshotSpec) placementv1beta1.PolicySnapshotObj {
			return &placementv1beta1.ClusterSchedulingPolicySnapshot{ObjectMeta: metav1.ObjectMeta{GenerateName: "crp-1-"}, Spec: spec}
		},
	},
	{
		name: "SchedulingPolicySnapshot",
		new: func(spec placementv1beta1.SchedulingPolicySnapshotSpec) placementv1beta1.PolicySnapshotObj {
			return &placementv1beta1.SchedulingPolicySnapshot{ObjectMeta: metav1.ObjectMeta{GenerateName: "rp-1-", Namespace: testNamespace}, Spec: spec}
		},
	},
}

func TestSchedulingPolicySnapshot(t *testing.T) {
	for _, kind := range policySnapshotKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()

			t.Run("a snapshot of an invalid policy is refused", func(t *testing.T) {
				s := kind.new(placementv1beta1.SchedulingPolicySnapshotSpec{Policy: pickFixed(), PolicyHash: []byte("hash")})
				err := env.Client.Create(ctx, s)
				testenv.CheckValidation(t, err, "placementType PickFixed requires clusterNames")
			})

			s := kind.new(placementv1beta1.SchedulingPolicySnapshotSpec{Policy: pickN(2), PolicyHash: []byte("hash")})
			if err := env.Client.Create(ctx, s); err != nil {
				t.Fatalf("failed to create the snapshot: %v", err)
			}

			t.Run("the scheduler's decisions are kept in the status", func(t *testing.T) {
				status := placementv1beta1.SchedulingPolicySnapshotStatus{
					ObservedPlacementGeneration: 3,
					Conditions: []metav1.Condition{{
						Type:               placementv1beta1.ConditionScheduled,
						Status:             metav1.ConditionFalse,
						Reason:             placementv1beta1.ReasonSchedulingPolicyUnfulfilled,
						Message:            "found 1 of 2 clusters: member-2 is not tolerated",
						LastTransitionTime: metav1.Now().Rfc3339Copy(),
					}},
					TargetClusters: []placementv1beta1.ClusterDecision{
						{
							ClusterName:  "member-1",
							Selected:     true,
							ClusterScore: &placementv1beta1.ClusterScore{AffinityScore: ptr.To[int32](20), TopologySpreadScore: ptr.To[int32](0)},
							Reason:       "picked by the scheduling policy",
						},
						{ClusterName: "member-2", Reason: "taint maintenance=true:NoSchedule is not tolerated", FilteredBy: "TaintToleration"},
					},
				}
				*s.GetPolicySnapshotStatus() = status
				if err := env.Client.Status().Update(ctx, s); err != nil {
					t.Fatalf("failed to update the status: %v", err)
				}
				if diff := cmp.Diff(status, *s.GetPolicySnapshotStatus()); diff != "" {
					t.Errorf("status after the update (-want +got):\n%s", diff)
				}
			})

			t.Run("a spec change is refused", func(t *testing.T) {
				s.GetPolicySnapshotSpec().Policy = pickN(3)
				err := env.Client.Update(ctx, s)
				testenv.CheckValidation(t, err, "spec is immutable")
			})
		})
	}
}

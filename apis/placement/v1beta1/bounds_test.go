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
	"fmt"
	"math"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// Every number and list a placement's author controls is bounded, so that no
// placement can make the hub hold more than its own objects need
// (docs/concepts/bounds-and-taints.md). Each bound is tried at and past it.
func TestPlacementBounds(t *testing.T) {
	tolerating := func(seconds int64) *placementv1beta1.PlacementPolicy {
		return with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
			p.Tolerations = []placementv1beta1.Toleration{{Key: "example.com/drain", Operator: placementv1beta1.TolerationOpExists,
				Effect: clusterv1beta1.TaintEffectNoExecute, TolerationSeconds: ptr.To(seconds)}}
		})
	}
	skew := func(n int32) *placementv1beta1.PlacementPolicy {
		return with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
			p.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{{MaxSkew: ptr.To(n), TopologyKey: "zone"}}
		})
	}
	evictAfter := func(n int32) *placementv1beta1.PlacementPolicy {
		return with(pickN(1), func(p *placementv1beta1.PlacementPolicy) { p.UnavailableEvictionSeconds = ptr.To(n) })
	}
	failback := func(stabilization, maxConcurrent int32) *placementv1beta1.PlacementPolicy {
		return with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
			p.ClusterPreferences = []placementv1beta1.ClusterPreference{{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "primary"}}}}
			p.Failback = &placementv1beta1.FailbackPolicy{StabilizationSeconds: ptr.To(stabilization), MaxConcurrent: ptr.To(maxConcurrent)}
		})
	}
	fencing := func(lease int32) *placementv1beta1.PlacementPolicy {
		return with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
			p.Fencing = &placementv1beta1.FencingPolicy{LeaseSeconds: ptr.To(lease)}
		})
	}
	unavailablePeriod := func(n int32) placementv1beta1.PlacementSpec {
		s := spec(nil)
		s.Strategy.RollingUpdate = &placementv1beta1.RollingUpdateConfig{UnavailablePeriodSeconds: ptr.To(n)}
		return s
	}
	tolerations := func(n int) *placementv1beta1.PlacementPolicy {
		return with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
			for i := range n {
				p.Tolerations = append(p.Tolerations, toleration(fmt.Sprintf("key-%d", i), "v"))
			}
		})
	}
	handOff := func(n int) placementv1beta1.PlacementSpec {
		s := spec(pickN(1))
		s.StatusFeedback = []placementv1beta1.StatusFeedbackRule{{Kind: "ConfigMap",
			JSONPaths: []placementv1beta1.JSONPathRule{{Name: "checkpoint", Path: ".data.checkpoint"}}}}
		for i := range n {
			s.StateHandOff = append(s.StateHandOff, placementv1beta1.StateHandOffRule{Name: fmt.Sprintf("value-%d", i),
				Feedback: placementv1beta1.HandOffFeedback{Kind: "ConfigMap", Name: "state", JSONPathName: "checkpoint"}})
		}
		return s
	}
	tests := []struct {
		name        string
		spec        placementv1beta1.PlacementSpec
		wantRefusal string
	}{
		{name: "10 state hand-off rules are accepted", spec: handOff(10)},
		{name: "11 state hand-off rules are refused", spec: handOff(11), wantRefusal: "spec.stateHandOff: Too many: 11: must have at most 10 items"},
		{name: "numberOfClusters 10000 is accepted", spec: spec(pickN(10000))},
		{name: "numberOfClusters 10001 is refused", spec: spec(pickN(10001)),
			wantRefusal: "spec.policy.numberOfClusters: Invalid value: 10001: spec.policy.numberOfClusters in body should be less than or equal to 10000"},
		{name: "numberOfClusters 2147483647 is refused", spec: spec(pickN(math.MaxInt32)),
			wantRefusal: "should be less than or equal to 10000"},
		{name: "tolerationSeconds 9223372036 (the longest the hub counts) is accepted", spec: spec(tolerating(9_223_372_036))},
		{name: "tolerationSeconds 9223372037 is refused", spec: spec(tolerating(9_223_372_037)),
			wantRefusal: "tolerationSeconds in body should be less than or equal to"},
		{name: "maxSkew 10000 is accepted", spec: spec(skew(10000))},
		{name: "maxSkew 10001 is refused", spec: spec(skew(10001)), wantRefusal: "maxSkew in body should be less than or equal to"},
		{name: "failback stabilizationSeconds 1 and maxConcurrent 1 are accepted", spec: spec(failback(1, 1))},
		{name: "failback stabilizationSeconds of a day and maxConcurrent 1000 are accepted", spec: spec(failback(86400, 1000))},
		{name: "failback stabilizationSeconds 0 is refused", spec: spec(failback(0, 1)),
			wantRefusal: "spec.policy.failback.stabilizationSeconds in body should be greater than or equal to 1"},
		{name: "failback stabilizationSeconds past a day is refused", spec: spec(failback(86401, 1)),
			wantRefusal: "spec.policy.failback.stabilizationSeconds in body should be less than or equal to 86400"},
		{name: "failback maxConcurrent 0 is refused", spec: spec(failback(30, 0)),
			wantRefusal: "spec.policy.failback.maxConcurrent in body should be greater than or equal to 1"},
		{name: "failback maxConcurrent 1001 is refused", spec: spec(failback(30, 1001)),
			wantRefusal: "spec.policy.failback.maxConcurrent in body should be less than or equal to 1000"},
		{name: "fencing leaseSeconds 10 is accepted", spec: spec(fencing(10))},
		{name: "fencing leaseSeconds of an hour is accepted", spec: spec(fencing(3600))},
		{name: "fencing leaseSeconds 9 is refused", spec: spec(fencing(9)),
			wantRefusal: "spec.policy.fencing.leaseSeconds in body should be greater than or equal to 10"},
		{name: "fencing leaseSeconds past an hour is refused", spec: spec(fencing(3601)),
			wantRefusal: "spec.policy.fencing.leaseSeconds in body should be less than or equal to 3600"},
		{name: "unavailableEvictionSeconds of 30 days is accepted", spec: spec(evictAfter(2_592_000))},
		{name: "unavailableEvictionSeconds past 30 days is refused", spec: spec(evictAfter(2_592_001)),
			wantRefusal: "spec.policy.unavailableEvictionSeconds in body should be less than or equal to"},
		{name: "unavailablePeriodSeconds of a day is accepted", spec: unavailablePeriod(86400)},
		{name: "unavailablePeriodSeconds past a day is refused", spec: unavailablePeriod(86401),
			wantRefusal: "spec.strategy.rollingUpdate.unavailablePeriodSeconds in body should be less than or equal to"},
		{name: "100 tolerations are accepted", spec: spec(tolerations(100))},
		{name: "101 tolerations are refused", spec: spec(tolerations(101)), wantRefusal: "must have at most 100 items"},
	}
	for _, kind := range placementKinds {
		for _, tc := range tests {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				err := env.Client.Create(context.Background(), kind.new(tc.spec))
				testenv.CheckValidation(t, err, tc.wantRefusal)
			})
		}
	}
}

// waitTime is refused unless the hub can parse it (time.ParseDuration) and it
// is at most 720h. A typed client cannot send a malformed duration, so the
// strategies are sent as unstructured objects.
func TestWaitTimeBounds(t *testing.T) {
	for _, tc := range []struct {
		name        string
		waitTime    string
		wantRefusal string
	}{
		{name: "1h30m is accepted", waitTime: "1h30m"},
		{name: "720h is accepted", waitTime: "720h"},
		{name: "721h is refused", waitTime: "721h", wantRefusal: "waitTime must be a duration of at most 720h"},
		{name: "a duration past what Go can hold is refused", waitTime: "9999999999999h", wantRefusal: "spec.stages[0].afterStageTasks[0].waitTime"},
		{name: "a unit Go does not know is refused", waitTime: "3d", wantRefusal: "spec.stages[0].afterStageTasks[0].waitTime"},
		{name: "a string longer than 32 characters is refused", waitTime: "1s1s1s1s1s1s1s1s1s1s1s1s1s1s1s1s1s", wantRefusal: "Too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": placementv1beta1.GroupVersion.String(),
				"kind":       "ClusterStagedUpdateStrategy",
				"metadata":   map[string]any{"generateName": "wait-"},
				"spec": map[string]any{"stages": []any{map[string]any{
					"name":            "canary",
					"labelSelector":   map[string]any{"matchLabels": map[string]any{"stage": "canary"}},
					"afterStageTasks": []any{map[string]any{"type": "TimedWait", "waitTime": tc.waitTime}},
				}}},
			}}
			err := env.Client.Create(context.Background(), u)
			testenv.CheckValidation(t, err, tc.wantRefusal)
			if err != nil {
				return
			}
			// What the apiserver admits, a typed client can read.
			got := &placementv1beta1.ClusterStagedUpdateStrategy{}
			if err := env.Client.Get(context.Background(), client.ObjectKey{Name: u.GetName()}, got); err != nil {
				t.Fatalf("a typed client cannot read the admitted strategy: %v", err)
			}
		})
	}
}

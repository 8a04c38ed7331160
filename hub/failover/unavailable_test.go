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

package failover

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

func TestUnavailableEvictions(t *testing.T) {
	now := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	healthy := func(name string, ok bool) clusterv1beta1.MemberCluster {
		mc := clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
		st := metav1.ConditionTrue
		if !ok {
			st = metav1.ConditionFalse
		}
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue, "x", "", 1)
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionHealthy, st, "x", "", 1)
		return mc
	}
	notAvailableFor := func(d time.Duration) placementv1beta1.ClusterResourceBinding {
		b := boundTo("m1", false)
		b.Status.Conditions = []metav1.Condition{{Type: placementv1beta1.ConditionAvailable, Status: metav1.ConditionFalse,
			Reason: placementv1beta1.ReasonNotAvailableYet, Message: "0/2 replicas available", LastTransitionTime: metav1.NewTime(now.Add(-d)), ObservedGeneration: 1}}
		return b
	}
	optedIn := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1), UnavailableEvictionSeconds: ptr.To[int32](60)}
	for _, tc := range []struct {
		name        string
		policy      *placementv1beta1.PlacementPolicy
		cluster     clusterv1beta1.MemberCluster
		binding     placementv1beta1.ClusterResourceBinding
		wantEvict   bool
		wantRecheck time.Duration
	}{
		{"resources unavailable past the period on a fine cluster move", optedIn, healthy("m1", true), notAvailableFor(2 * time.Minute), true, 0},
		{"within the period they wait", optedIn, healthy("m1", true), notAvailableFor(20 * time.Second), false, 40 * time.Second},
		{"an unhealthy cluster is the taints' business", optedIn, healthy("m1", false), notAvailableFor(time.Hour), false, 0},
		{"available resources stay", optedIn, healthy("m1", true), boundTo("m1", true), false, 0},
		{"without opting in nothing moves", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1)},
			healthy("m1", true), notAvailableFor(time.Hour), false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, recheck := UnavailableEvictions(tc.policy, []clusterv1beta1.MemberCluster{tc.cluster}, []placementv1beta1.BindingObj{&tc.binding}, now)
			if _, evict := got["m1"]; evict != tc.wantEvict {
				t.Errorf("evict = %v (%v), want %v", evict, got, tc.wantEvict)
			}
			if recheck != tc.wantRecheck {
				t.Errorf("recheck = %s, want %s", recheck, tc.wantRecheck)
			}
		})
	}
}

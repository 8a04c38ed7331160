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
	"math"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func clusterWithNoExecute(name, key string, since time.Time) clusterv1beta1.MemberCluster {
	at := metav1.NewTime(since)
	return clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1beta1.MemberClusterSpec{Taints: []clusterv1beta1.Taint{
			{Key: key, Effect: clusterv1beta1.TaintEffectNoSchedule, TimeAdded: &at},
			{Key: key, Effect: clusterv1beta1.TaintEffectNoExecute, TimeAdded: &at},
		}},
	}
}

func TestNoExecuteEvictions(t *testing.T) {
	now := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	pickN := func(tols ...placementv1beta1.Toleration) *placementv1beta1.PlacementPolicy {
		return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1), Tolerations: tols}
	}
	unreachableFor := func(d time.Duration) clusterv1beta1.MemberCluster {
		return clusterWithNoExecute("m1", clusterv1beta1.TaintUnreachable, now.Add(-d))
	}
	for _, tc := range []struct {
		name        string
		policy      *placementv1beta1.PlacementPolicy
		cluster     clusterv1beta1.MemberCluster
		bound       bool
		wantEvict   bool
		wantKept    bool
		wantRecheck time.Duration
	}{
		{name: "PickN leaves an unreachable cluster after the default 60s", policy: pickN(), cluster: unreachableFor(61 * time.Second), bound: true, wantEvict: true},
		{name: "PickN waits out the default toleration", policy: pickN(), cluster: unreachableFor(50 * time.Second), bound: true, wantRecheck: 10 * time.Second},
		{name: "a toleration with tolerationSeconds shortens the wait",
			policy:  pickN(placementv1beta1.Toleration{Key: clusterv1beta1.TaintUnreachable, Operator: placementv1beta1.TolerationOpExists, TolerationSeconds: ptr.To[int64](10)}),
			cluster: unreachableFor(11 * time.Second), bound: true, wantEvict: true},
		{name: "a toleration without tolerationSeconds keeps the placement for good",
			policy:  pickN(placementv1beta1.Toleration{Key: clusterv1beta1.TaintUnreachable, Operator: placementv1beta1.TolerationOpExists}),
			cluster: unreachableFor(time.Hour), bound: true},
		{name: "the first matching toleration decides, not the shortest",
			policy: pickN(
				placementv1beta1.Toleration{Key: clusterv1beta1.TaintUnreachable, Operator: placementv1beta1.TolerationOpExists, TolerationSeconds: ptr.To[int64](300)},
				placementv1beta1.Toleration{Operator: placementv1beta1.TolerationOpExists, TolerationSeconds: ptr.To[int64](10)}),
			cluster: unreachableFor(11 * time.Second), bound: true, wantRecheck: 289 * time.Second},
		{name: "tolerationSeconds past what a duration holds do not evict at once",
			policy:  pickN(placementv1beta1.Toleration{Key: "drain", Operator: placementv1beta1.TolerationOpExists, TolerationSeconds: ptr.To[int64](9_300_000_000)}),
			cluster: clusterWithNoExecute("m1", "drain", now.Add(-time.Hour)), bound: true,
			wantRecheck: time.Duration(math.MaxInt64) - time.Hour},
		{name: "a user's taint the hub has not recorded yet waits out the toleration from now",
			policy: pickN(placementv1beta1.Toleration{Key: "drain", Operator: placementv1beta1.TolerationOpExists, TolerationSeconds: ptr.To[int64](10)}),
			cluster: clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Spec: clusterv1beta1.MemberClusterSpec{Taints: []clusterv1beta1.Taint{
				{Key: "drain", Effect: clusterv1beta1.TaintEffectNoExecute}}}},
			bound: true, wantRecheck: 10 * time.Second},
		{name: "PickAll keeps a merely unreachable cluster", policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll},
			cluster: unreachableFor(time.Hour), bound: true, wantKept: true},
		{name: "PickAll leaves a drained cluster", policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll},
			cluster: clusterWithNoExecute("m1", "drain", now.Add(-2*time.Minute)), bound: true, wantEvict: true},
		{name: "PickFixed is never moved", policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"m1"}},
			cluster: clusterWithNoExecute("m1", "drain", now.Add(-time.Hour)), bound: true, wantKept: true},
		{name: "a cluster the placement is not on stays out of reach once its toleration ran out", policy: pickN(), cluster: unreachableFor(time.Hour), wantEvict: true},
		{name: "a cluster the placement is not on is no recheck concern", policy: pickN(), cluster: unreachableFor(time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NoExecuteEvictions(tc.policy, []clusterv1beta1.MemberCluster{tc.cluster}, map[string]bool{"m1": tc.bound}, now, 60)
			if _, got := d.Evict["m1"]; got != tc.wantEvict {
				t.Errorf("evict = %v (%v), want %v", got, d.Evict, tc.wantEvict)
			}
			if _, got := d.Kept["m1"]; got != tc.wantKept {
				t.Errorf("kept = %v (%v), want %v", got, d.Kept, tc.wantKept)
			}
			if d.RecheckAfter != tc.wantRecheck {
				t.Errorf("recheck after %s, want %s", d.RecheckAfter, tc.wantRecheck)
			}
			for _, ev := range d.Evict {
				if !strings.Contains(ev.Reason, "NoExecute") {
					t.Errorf("reason %q does not name the taint", ev.Reason)
				}
			}
		})
	}
}

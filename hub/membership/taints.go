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

package membership

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// automaticTaintKeys are the taints the hub owns; users own every other taint.
var automaticTaintKeys = map[string]bool{
	clusterv1beta1.TaintUnreachable: true,
	clusterv1beta1.TaintNotReady:    true,
}

// NewMemberGraceLeft returns how much longer a newly joined member whose Healthy
// condition is not True is spared the not-ready taint: grace counted from the
// Joined condition's transition to True, or 0 when the grace is over, the member
// is healthy, or it has not joined (a member's first heartbeat may come before
// its agent has probed the member API server). Within the grace a member that
// turned healthy and then unhealthy again is spared too.
func NewMemberGraceLeft(mc *clusterv1beta1.MemberCluster, now time.Time, grace time.Duration) time.Duration {
	joined := conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionJoined)
	if grace <= 0 || joined == nil || joined.Status != metav1.ConditionTrue ||
		conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionHealthy) {
		return 0
	}
	return max(0, joined.LastTransitionTime.Add(grace).Sub(now))
}

// DesiredTaints returns the cluster's taints with the automatic ones made to match
// its conditions: unreachable while AgentConnected is False, not-ready while
// Healthy is False, each with effects NoSchedule and NoExecute, added at the time
// the condition turned False (so tolerationSeconds count from the failure, not
// from when the hub noticed). A not-ready taint the cluster does not have yet is
// not added while NewMemberGraceLeft(mc, now, grace) is positive. User taints are
// kept in order, and a user's NoExecute taint without timeAdded gets now: its
// tolerations (tolerationSeconds) count from when the hub first saw it, and the
// time is kept in the MemberCluster, so a hub restart does not restart them.
func DesiredTaints(mc *clusterv1beta1.MemberCluster, now time.Time, grace time.Duration) []clusterv1beta1.Taint {
	want := map[string]*metav1.Time{}
	if c := conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected); c != nil && c.Status == metav1.ConditionFalse {
		t := c.LastTransitionTime
		want[clusterv1beta1.TaintUnreachable] = &t
	}
	if c := conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionHealthy); c != nil && c.Status == metav1.ConditionFalse {
		t := c.LastTransitionTime
		want[clusterv1beta1.TaintNotReady] = &t
	}
	spared := NewMemberGraceLeft(mc, now, grace) > 0
	var out []clusterv1beta1.Taint
	have := map[string]bool{}
	for _, t := range mc.Spec.Taints {
		if automaticTaintKeys[t.Key] {
			if want[t.Key] == nil {
				continue // recovered
			}
			have[t.Key+"/"+string(t.Effect)] = true
		} else if t.Effect == clusterv1beta1.TaintEffectNoExecute && t.TimeAdded == nil {
			seen := metav1.NewTime(now.Truncate(time.Second))
			t.TimeAdded = &seen
		}
		out = append(out, t)
	}
	for _, key := range []string{clusterv1beta1.TaintUnreachable, clusterv1beta1.TaintNotReady} {
		since := want[key]
		if since == nil {
			continue
		}
		for _, effect := range []clusterv1beta1.TaintEffect{clusterv1beta1.TaintEffectNoSchedule, clusterv1beta1.TaintEffectNoExecute} {
			if !have[key+"/"+string(effect)] && !(spared && key == clusterv1beta1.TaintNotReady) {
				out = append(out, clusterv1beta1.Taint{Key: key, Effect: effect, TimeAdded: since})
			}
		}
	}
	return out
}

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

package readiness

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// MemberCluster decides a MemberCluster's verdict from its Joined,
// AgentConnected and Healthy conditions, taken in that order; the first that is
// not True decides:
//
//   - missing: Unknown, reconciling (the hub has not written it yet).
//   - Unknown (joining, no agent connected yet, health not reported):
//     reconciling.
//   - Joined False (leaving, left): reconciling, as the hub is removing what
//     it placed there.
//   - AgentConnected False because the hub replica holding the agent's
//     session was lost: reconciling, as the agent connects to another replica
//     by itself.
//   - AgentConnected False otherwise (the agent disconnected, its heartbeats
//     stopped, or it was refused for version skew), or Healthy False: stalled.
//     The fleet cannot place anything on the cluster until the agent (or the
//     member's API server) is back, which takes someone on the member's side;
//     the verdict turns Ready again by itself when it is.
//
// When all three are True the member is Ready.
func MemberCluster(mc *clusterv1beta1.MemberCluster) Verdict {
	conds := mc.Status.Conditions
	var last *metav1.Condition
	for _, t := range []string{clusterv1beta1.ConditionJoined, clusterv1beta1.ConditionAgentConnected, clusterv1beta1.ConditionHealthy} {
		c := conditions.Get(conds, t)
		switch {
		case c == nil:
			return Verdict{Ready: metav1.ConditionUnknown, Reason: pendingMemberReason(t), Message: t + " is not reported yet"}
		case c.Status == metav1.ConditionUnknown:
			return from(c, false)
		case c.Status == metav1.ConditionFalse:
			stalled := t != clusterv1beta1.ConditionJoined && c.Reason != clusterv1beta1.ReasonHubReplicaLost
			return from(c, stalled)
		}
		last = c
	}
	return ready(last)
}

// pendingMemberReason is the reason of a member condition that has not been
// written yet.
func pendingMemberReason(t string) string {
	switch t {
	case clusterv1beta1.ConditionJoined:
		return clusterv1beta1.ReasonJoining
	case clusterv1beta1.ConditionAgentConnected:
		return clusterv1beta1.ReasonAgentNeverConnected
	}
	return clusterv1beta1.ReasonHealthUnknown
}

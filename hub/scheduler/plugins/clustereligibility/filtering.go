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

package clustereligibility

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// Filter rejects (ClusterUnschedulable) a cluster that is not eligible for new
// placements; see Check.
func (p *Plugin) Filter(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) *framework.Status {
	if ok, why := Check(cluster.Cluster, state.Now(), p.grace); !ok {
		return framework.NewStatus(framework.ClusterUnschedulable, why)
	}
	return nil
}

// Check reports whether a member cluster can take new placements at now, and if
// not, why. It cannot when
//   - it is leaving the fleet (being deleted);
//   - its Joined condition is not True;
//   - its AgentConnected condition is missing or AgentNeverConnected (the agent
//     never connected), or has not been True for longer than gracePeriod (since
//     its lastTransitionTime);
//   - its Healthy condition is False. Unknown health alone does not count: it is
//     what a disconnected agent reports, which the grace period covers.
func Check(mc *clusterv1beta1.MemberCluster, now time.Time, gracePeriod time.Duration) (bool, string) {
	if mc.DeletionTimestamp != nil {
		return false, "cluster is leaving the fleet"
	}
	conds := mc.Status.Conditions
	joined := meta.FindStatusCondition(conds, clusterv1beta1.ConditionJoined)
	if joined == nil {
		return false, "cluster has not joined the fleet"
	}
	if joined.Status != metav1.ConditionTrue {
		return false, fmt.Sprintf("cluster has not joined the fleet (Joined is %s: %s)", joined.Status, joined.Reason)
	}
	connected := meta.FindStatusCondition(conds, clusterv1beta1.ConditionAgentConnected)
	if connected == nil || (connected.Status == metav1.ConditionUnknown && connected.Reason == clusterv1beta1.ReasonAgentNeverConnected) {
		// The grace period covers an agent that was connected, not one that
		// never was (a member that joined and was never heard from again would
		// otherwise be picked for its first minute).
		return false, "cluster's agent has never connected"
	}
	if connected.Status != metav1.ConditionTrue {
		if d := now.Sub(connected.LastTransitionTime.Time); connected.LastTransitionTime.IsZero() || d > gracePeriod {
			return false, fmt.Sprintf("cluster's agent is disconnected (AgentConnected is %s: %s) for longer than the %s grace period",
				connected.Status, connected.Reason, gracePeriod)
		}
	}
	if healthy := meta.FindStatusCondition(conds, clusterv1beta1.ConditionHealthy); healthy != nil && healthy.Status == metav1.ConditionFalse {
		return false, fmt.Sprintf("cluster is not healthy (Healthy is False: %s)", healthy.Reason)
	}
	return true, ""
}

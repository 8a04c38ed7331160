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

package tainttoleration

import (
	"context"
	"time"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/pkg/taints"
)

// PreFilter returns Skip when no cluster under consideration has a taint.
func (p *Plugin) PreFilter(_ context.Context, _ *framework.CycleState, _ *placementv1beta1.PlacementPolicy, clusters []*framework.ClusterInfo) (*framework.PreFilterResult, *framework.Status) {
	for _, c := range clusters {
		if len(c.Cluster.Spec.Taints) > 0 {
			return nil, nil
		}
	}
	return nil, framework.NewStatus(framework.Skip)
}

// Filter rejects (ClusterUnschedulable) a cluster with a taint that none of the
// policy's tolerations tolerates, naming every such taint. A cluster the
// placement is not on yet is also rejected for a NoExecute taint whose
// tolerance (pkg/taints: the first matching toleration decides) has run out
// since the taint was added: failover would evict it from there at once.
func (p *Plugin) Filter(_ context.Context, state *framework.CycleState, policy *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) *framework.Status {
	var tolerations []placementv1beta1.Toleration
	if policy != nil {
		tolerations = policy.Tolerations
	}
	var reasons []string
	for i := range cluster.Cluster.Spec.Taints {
		taint := &cluster.Cluster.Spec.Taints[i]
		if taints.Matching(taint, tolerations) != nil {
			if !cluster.Bound && taint.Effect == clusterv1beta1.TaintEffectNoExecute && toleranceExpired(taint, tolerations, state.Now()) {
				reasons = append(reasons, "taint "+taints.Format(taint)+" is tolerated only for a time that has run out")
			}
			continue
		}
		reason := "taint " + taints.Format(taint) + " is not tolerated"
		if cluster.Bound && taint.Effect == clusterv1beta1.TaintEffectNoExecute {
			// Whether and when the placement leaves is the failover controller's call
			// (hub/failover), which knows the time and the placement type.
			reason += " (the placement stays until its toleration runs out)"
		}
		reasons = append(reasons, reason)
	}
	if len(reasons) == 0 {
		return nil
	}
	return framework.NewStatus(framework.ClusterUnschedulable, reasons...)
}

// toleranceExpired reports whether the tolerance of a tolerated NoExecute
// taint has run out by now (failover's rule, pkg/taints).
func toleranceExpired(taint *clusterv1beta1.Taint, tolerations []placementv1beta1.Toleration, now time.Time) bool {
	deadline, ok := taints.NoExecuteTolerance(taint, tolerations, 0).Deadline(taint, now)
	return ok && !now.Before(deadline)
}

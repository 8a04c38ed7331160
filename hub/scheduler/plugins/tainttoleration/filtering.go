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
	"strings"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
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
// policy's tolerations tolerates, naming every such taint.
func (p *Plugin) Filter(_ context.Context, _ *framework.CycleState, policy *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) *framework.Status {
	var tolerations []placementv1beta1.Toleration
	if policy != nil {
		tolerations = policy.Tolerations
	}
	var reasons []string
	for i := range cluster.Cluster.Spec.Taints {
		taint := &cluster.Cluster.Spec.Taints[i]
		if tolerated(taint, tolerations) {
			continue
		}
		reason := "taint " + format(taint) + " is not tolerated"
		if cluster.Bound && taint.Effect == clusterv1beta1.TaintEffectNoExecute {
			// Whether and when the placement leaves is the NoExecute eviction rule's call
			// (hub/scheduler/noexecute.go), which knows the time and the placement type.
			reason += " (the placement stays until its toleration runs out)"
		}
		reasons = append(reasons, reason)
	}
	if len(reasons) == 0 {
		return nil
	}
	return framework.NewStatus(framework.ClusterUnschedulable, reasons...)
}

// tolerated reports whether any of the tolerations tolerates the taint.
func tolerated(taint *clusterv1beta1.Taint, tolerations []placementv1beta1.Toleration) bool {
	for i := range tolerations {
		if Tolerates(&tolerations[i], taint) {
			return true
		}
	}
	return false
}

// Tolerates reports whether the toleration tolerates the taint: its effect is
// empty (all effects) or the taint's, and
//   - with operator Exists, its key is empty (all keys) or the taint's;
//   - with operator Equal (the default), its key and value are the taint's.
func Tolerates(tol *placementv1beta1.Toleration, taint *clusterv1beta1.Taint) bool {
	if tol.Effect != "" && tol.Effect != taint.Effect {
		return false
	}
	switch tol.Operator {
	case placementv1beta1.TolerationOpExists:
		return tol.Key == "" || tol.Key == taint.Key
	case placementv1beta1.TolerationOpEqual, "":
		return tol.Key == taint.Key && tol.Value == taint.Value
	}
	return false
}

// format writes a taint the way kubectl does: key=value:Effect, or key:Effect.
func format(t *clusterv1beta1.Taint) string {
	var b strings.Builder
	b.WriteString(t.Key)
	if t.Value != "" {
		b.WriteString("=" + t.Value)
	}
	b.WriteString(":" + string(t.Effect))
	return b.String()
}

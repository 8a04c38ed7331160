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
	"time"

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
// policy's tolerations tolerates, naming every such taint. A cluster the
// placement is not on yet is also rejected for a NoExecute taint whose
// tolerations all have a tolerationSeconds that has run out since the taint was
// added (it would be evicted from there at once).
func (p *Plugin) Filter(_ context.Context, state *framework.CycleState, policy *placementv1beta1.PlacementPolicy, cluster *framework.ClusterInfo) *framework.Status {
	var tolerations []placementv1beta1.Toleration
	if policy != nil {
		tolerations = policy.Tolerations
	}
	var reasons []string
	for i := range cluster.Cluster.Spec.Taints {
		taint := &cluster.Cluster.Spec.Taints[i]
		if tolerated(taint, tolerations) {
			if !cluster.Bound && taint.Effect == clusterv1beta1.TaintEffectNoExecute && toleranceExpired(taint, tolerations, state.Now()) {
				reasons = append(reasons, "taint "+format(taint)+" is tolerated only for a time that has run out")
			}
			continue
		}
		reason := "taint " + format(taint) + " is not tolerated"
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

// toleranceExpired reports whether every toleration of the taint has a
// tolerationSeconds, and the longest has passed since the taint was added.
func toleranceExpired(taint *clusterv1beta1.Taint, tolerations []placementv1beta1.Toleration, now time.Time) bool {
	if taint.TimeAdded == nil {
		return false
	}
	var longest int64 = -1
	for i := range tolerations {
		tol := &tolerations[i]
		if !Tolerates(tol, taint) {
			continue
		}
		if tol.TolerationSeconds == nil {
			return false
		}
		longest = max(longest, *tol.TolerationSeconds)
	}
	return longest >= 0 && !now.Before(taint.TimeAdded.Add(time.Duration(longest)*time.Second))
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

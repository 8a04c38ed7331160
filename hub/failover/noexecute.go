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
	"fmt"
	"time"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/taints"
)

// TaintEviction is one cluster a placement must stay off because of a NoExecute
// taint whose toleration ran out.
type TaintEviction struct {
	// Reason says which taint and for how long it was tolerated.
	Reason string
	// Since is when the toleration ran out.
	Since time.Time
	// TaintedAt is when the taint was added (the start of the outage, for metrics).
	TaintedAt time.Time
	// Cause labels the eviction in metrics: "taint" (default) or "unavailable".
	Cause string
}

// NoExecuteDecision is what NoExecute taints mean for one placement now.
type NoExecuteDecision struct {
	// Evict maps each cluster the placement must leave, or not go to, to why.
	Evict map[string]TaintEviction
	// Kept maps bound clusters with an untolerated NoExecute taint that the
	// placement keeps (PickFixed; PickAll on a merely unreachable cluster) to why.
	Kept map[string]string
	// RecheckAfter is when the next toleration runs out (0: none pending).
	RecheckAfter time.Duration
}

// automaticTaint reports taints the hub sets when it loses a cluster, as opposed
// to taints a user sets (a drain).
func automaticTaint(key string) bool {
	return key == clusterv1beta1.TaintUnreachable || key == clusterv1beta1.TaintNotReady
}

// NoExecuteEvictions decides which clusters a placement must leave (or, when it
// is not there, not go to) because of NoExecute taints, by the rules of
// pkg/taints: for each taint the first matching toleration decides (forever
// without tolerationSeconds, otherwise that long after the taint's timeAdded);
// a taint no toleration matches is tolerated for defaultTolerationSeconds.
// PickFixed placements are never moved, and PickAll placements keep a cluster
// that is merely unreachable or not ready (there is nowhere to move them) but
// leave one a user tainted (a drain).
// Kept lists only clusters in bound.
func NoExecuteEvictions(policy *placementv1beta1.PlacementPolicy, clusters []clusterv1beta1.MemberCluster, bound map[string]bool, now time.Time, defaultTolerationSeconds int64) NoExecuteDecision {
	d := NoExecuteDecision{Evict: map[string]TaintEviction{}, Kept: map[string]string{}}
	placementType := placementv1beta1.PickAll
	var tolerations []placementv1beta1.Toleration
	if policy != nil {
		if policy.PlacementType != "" {
			placementType = policy.PlacementType
		}
		tolerations = policy.Tolerations
	}
	defaultFor := taints.SaturatingSeconds(defaultTolerationSeconds)
	for i := range clusters {
		mc := &clusters[i]
		for j := range mc.Spec.Taints {
			taint := &mc.Spec.Taints[j]
			if taint.Effect != clusterv1beta1.TaintEffectNoExecute {
				continue
			}
			tolerance := taints.NoExecuteTolerance(taint, tolerations, defaultFor)
			deadline, ok := tolerance.Deadline(taint, now)
			if !ok {
				continue
			}
			desc := "taint " + taints.Format(taint)
			switch {
			case placementType == placementv1beta1.PickFixed:
				if bound[mc.Name] {
					d.Kept[mc.Name] = desc + ": the cluster is down, but PickFixed placements are never moved"
				}
				continue
			case placementType == placementv1beta1.PickAll && automaticTaint(taint.Key):
				if bound[mc.Name] {
					d.Kept[mc.Name] = desc + ": kept, because a PickAll placement has nowhere else to go; it resumes when the cluster returns"
				}
				continue
			}
			if !now.Before(deadline) {
				since := now
				if taint.TimeAdded != nil {
					since = taint.TimeAdded.Time
				}
				if prev, already := d.Evict[mc.Name]; !already || deadline.Before(prev.Since) {
					d.Evict[mc.Name] = TaintEviction{
						Reason:    fmt.Sprintf("%s not tolerated for more than %s", desc, tolerance.For),
						Since:     deadline,
						TaintedAt: since,
					}
				}
				continue
			}
			if !bound[mc.Name] {
				continue
			}
			if wait := deadline.Sub(now); d.RecheckAfter == 0 || wait < d.RecheckAfter {
				d.RecheckAfter = wait
			}
		}
	}
	return d
}

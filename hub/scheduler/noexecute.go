package scheduler

import (
	"fmt"
	"time"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins/tainttoleration"
)

// NoExecuteDecision is what NoExecute taints mean for one placement now.
type NoExecuteDecision struct {
	// Evict maps each bound cluster the placement must leave to the reason.
	Evict map[string]string
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

// NoExecuteEvictions decides which bound clusters a placement must leave because
// of NoExecute taints: a taint no toleration covers evicts after
// defaultTolerationSeconds; one covered by tolerations with tolerationSeconds
// evicts after the shortest of them; one covered without tolerationSeconds never
// evicts. PickFixed placements are never moved, and PickAll placements keep a
// cluster that is merely unreachable or not ready (there is nowhere to move them)
// but leave one a user tainted (a drain).
func NoExecuteEvictions(policy *placementv1beta1.PlacementPolicy, clusters []clusterv1beta1.MemberCluster, bound map[string]bool, now time.Time, defaultTolerationSeconds int64) NoExecuteDecision {
	d := NoExecuteDecision{Evict: map[string]string{}, Kept: map[string]string{}}
	placementType := placementv1beta1.PickAll
	var tolerations []placementv1beta1.Toleration
	if policy != nil {
		if policy.PlacementType != "" {
			placementType = policy.PlacementType
		}
		tolerations = policy.Tolerations
	}
	for i := range clusters {
		mc := &clusters[i]
		if !bound[mc.Name] {
			continue
		}
		for j := range mc.Spec.Taints {
			taint := &mc.Spec.Taints[j]
			if taint.Effect != clusterv1beta1.TaintEffectNoExecute {
				continue
			}
			grace, forever := toleratedFor(taint, tolerations, defaultTolerationSeconds)
			if forever {
				continue
			}
			desc := fmt.Sprintf("taint %s:NoExecute", taint.Key)
			if taint.Value != "" {
				desc = fmt.Sprintf("taint %s=%s:NoExecute", taint.Key, taint.Value)
			}
			switch {
			case placementType == placementv1beta1.PickFixed:
				d.Kept[mc.Name] = desc + ": the cluster is down, but PickFixed placements are never moved"
				continue
			case placementType == placementv1beta1.PickAll && automaticTaint(taint.Key):
				d.Kept[mc.Name] = desc + ": kept, because a PickAll placement has nowhere else to go; it resumes when the cluster returns"
				continue
			}
			since := now
			if taint.TimeAdded != nil {
				since = taint.TimeAdded.Time
			}
			deadline := since.Add(grace)
			if !now.Before(deadline) {
				if _, already := d.Evict[mc.Name]; !already {
					d.Evict[mc.Name] = fmt.Sprintf("evicted: %s not tolerated for more than %s", desc, grace)
				}
				continue
			}
			if wait := deadline.Sub(now); d.RecheckAfter == 0 || wait < d.RecheckAfter {
				d.RecheckAfter = wait
			}
		}
	}
	return d
}

// toleratedFor returns how long the taint is tolerated, or forever.
func toleratedFor(taint *clusterv1beta1.Taint, tolerations []placementv1beta1.Toleration, defaultSeconds int64) (time.Duration, bool) {
	matched := false
	var shortest *int64
	for i := range tolerations {
		tol := &tolerations[i]
		if !tainttoleration.Tolerates(tol, taint) {
			continue
		}
		matched = true
		if tol.TolerationSeconds == nil {
			return 0, true
		}
		if shortest == nil || *tol.TolerationSeconds < *shortest {
			shortest = tol.TolerationSeconds
		}
	}
	if matched && shortest != nil {
		return time.Duration(max(*shortest, 0)) * time.Second, false
	}
	return time.Duration(defaultSeconds) * time.Second, false
}

package scheduler

import (
	"fmt"
	"sort"
	"strings"
	"time"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// release is an evicted binding let go because its replacement is available.
type release struct {
	cluster     string
	requestedAt time.Time
}

// gracefulHolds returns, among the clusters the cycle unschedules because the
// failover controller asked for it (hub/failover), those whose binding stays for
// now — until every selected cluster is available or the graceful timeout after
// the request passes — each with the message for its Scheduled condition. It
// also returns the evictions released because the replacement is available, and
// when the first held one times out.
func gracefulHolds(now time.Time, timeout time.Duration, active map[string]placementv1beta1.BindingObj, res framework.CycleResult) (map[string]string, []release, time.Duration) {
	var waiting []string
	for _, c := range res.Selected {
		b := active[c]
		if b == nil || !conditions.IsCurrentTrue(b.GetBindingStatus().Conditions, placementv1beta1.ConditionAvailable, b.GetGeneration()) {
			waiting = append(waiting, c)
		}
	}
	sort.Strings(waiting)
	held := map[string]string{}
	var released []release
	var recheck time.Duration
	for _, c := range res.Unschedule {
		b := active[c]
		if b == nil {
			continue
		}
		req := pipeline.EvictionRequested(b)
		if req == nil {
			continue
		}
		deadline := req.LastTransitionTime.Add(timeout)
		if len(waiting) > 0 && now.Before(deadline) {
			held[c] = fmt.Sprintf("evicting: %s; kept until the replacement on %s is available (at most until %s)",
				req.Message, strings.Join(waiting, ", "), deadline.UTC().Format(time.RFC3339))
			recheck = pipeline.Sooner(recheck, deadline.Sub(now))
			continue
		}
		if len(waiting) == 0 && len(res.Selected) > 0 {
			released = append(released, release{cluster: c, requestedAt: req.LastTransitionTime.Time})
		}
	}
	return held, released, recheck
}

// taintedAt is when the outage behind an eviction began: the earliest NoExecute
// taint of the cluster, or the eviction request when there is none.
func taintedAt(clusters []clusterv1beta1.MemberCluster, cluster string, requestedAt time.Time) time.Time {
	at := requestedAt
	for i := range clusters {
		if clusters[i].Name != cluster {
			continue
		}
		for _, t := range clusters[i].Spec.Taints {
			if t.Effect == clusterv1beta1.TaintEffectNoExecute && t.TimeAdded != nil && t.TimeAdded.Time.Before(at) {
				at = t.TimeAdded.Time
			}
		}
	}
	return at
}

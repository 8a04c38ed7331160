package scheduler

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/eviction"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// FailoverOptions configures how NoExecute taints (set by the hub when it loses a
// cluster, or by a user to drain one) move placements. Defaults are filled in by
// NewFailover.
type FailoverOptions struct {
	// DefaultTolerationSeconds is how long a placement stays on a cluster with a
	// NoExecute taint it does not tolerate. Default: 60.
	DefaultTolerationSeconds int64
	// GracefulTimeout bounds how long an evicted binding is kept while its
	// replacement is not available yet. Default: 5m.
	GracefulTimeout time.Duration
	// Limiter paces taint evictions across the fleet. Default: 1 per second, burst 10.
	Limiter *rate.Limiter
	// PartitionThreshold pauses taint evictions while more than this fraction of
	// the clusters is unreachable: then the hub is more likely cut off than the
	// clusters down. Default: 0.55.
	PartitionThreshold float64
	// Recorder reports evictions as Events on the placement.
	Recorder events.EventRecorder
}

// Failover moves placements off clusters with NoExecute taints.
type Failover struct {
	FailoverOptions

	mu sync.Mutex
	// evicting remembers the taint evictions already counted (placement/cluster),
	// so that a rescheduling of the same eviction costs no rate-limit token.
	evicting map[string]bool
}

// NewFailover returns a Failover with defaults for every unset option.
func NewFailover(f FailoverOptions) *Failover {
	if f.DefaultTolerationSeconds == 0 {
		f.DefaultTolerationSeconds = 60
	}
	if f.GracefulTimeout == 0 {
		f.GracefulTimeout = 5 * time.Minute
	}
	if f.Limiter == nil {
		f.Limiter = rate.NewLimiter(rate.Limit(1), 10)
	}
	if f.PartitionThreshold == 0 {
		f.PartitionThreshold = 0.55
	}
	return &Failover{FailoverOptions: f, evicting: map[string]bool{}}
}

var failoverSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
	Name:    "flotilla_failover_seconds",
	Help:    "Time from a cluster's NoExecute taint to its evicted placement being available elsewhere.",
	Buckets: prometheus.ExponentialBuckets(1, 2, 12),
})

func init() { metrics.Registry.MustRegister(failoverSeconds) }

// activeClusters are the clusters where the placement has a live binding.
func activeClusters(bindings []placementv1beta1.ClusterResourceBinding) map[string]*placementv1beta1.ClusterResourceBinding {
	out := map[string]*placementv1beta1.ClusterResourceBinding{}
	for i := range bindings {
		b := &bindings[i]
		if b.DeletionTimestamp.IsZero() && b.Spec.State != placementv1beta1.BindingStateUnscheduled {
			out[b.Spec.TargetCluster] = b
		}
	}
	return out
}

// partitioned reports whether so many clusters are unreachable at once that the
// hub, not the clusters, is the likely failure.
func (f *Failover) partitioned(clusters []clusterv1beta1.MemberCluster) (bool, string) {
	if len(clusters) < 3 {
		return false, ""
	}
	down := 0
	for i := range clusters {
		if conditions.IsFalse(clusters[i].Status.Conditions, clusterv1beta1.ConditionAgentConnected) {
			down++
		}
	}
	if float64(down) > f.PartitionThreshold*float64(len(clusters)) {
		return true, fmt.Sprintf("%d of %d clusters are unreachable: taint evictions are paused until most return", down, len(clusters))
	}
	return false, ""
}

// applyTaints adds the clusters a placement must leave (or not go to) because of
// NoExecute taints to the cycle's exclusions, paced by the rate limit, and
// returns the decision and when to look again.
func (f *Failover) applyTaints(ctx context.Context, crp *placementv1beta1.ClusterResourcePlacement, in *framework.CycleInput) (NoExecuteDecision, time.Duration) {
	active := activeClusters(in.Bindings)
	bound := map[string]bool{}
	for c := range active {
		bound[c] = true
	}
	d := NoExecuteEvictions(in.Policy, in.Clusters, bound, in.Now, f.DefaultTolerationSeconds)
	recheck := d.RecheckAfter
	unavailable, rc := UnavailableEvictions(in.Policy, in.Clusters, in.Bindings, in.Now)
	recheck = minPositive(recheck, rc)
	for c, ev := range unavailable {
		if _, ok := d.Evict[c]; !ok {
			d.Evict[c] = ev
		}
	}
	if len(d.Evict) == 0 {
		return d, recheck
	}
	paused, why := f.partitioned(in.Clusters)
	names := make([]string, 0, len(d.Evict))
	for c := range d.Evict {
		names = append(names, c)
	}
	sort.Strings(names)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cluster := range names {
		ev := d.Evict[cluster]
		if _, manual := in.ExcludedClusters[cluster]; manual {
			continue
		}
		key := crp.Name + "/" + cluster
		if bound[cluster] && !f.evicting[key] {
			if paused {
				log.FromContext(ctx).Info("not evicting", "cluster", cluster, "reason", why)
				delete(d.Evict, cluster)
				d.Kept[cluster] = why
				recheck = minPositive(recheck, 10*time.Second)
				continue
			}
			if !f.Limiter.Allow() {
				delete(d.Evict, cluster)
				recheck = minPositive(recheck, time.Second)
				continue
			}
			f.evicting[key] = true
			cause := ev.Cause
			if cause == "" {
				cause = "taint"
			}
			eviction.CountEviction(cause)
			f.event(crp, corev1.EventTypeWarning, placementv1beta1.ReasonEvicting, "evicting from %s: %s", cluster, ev.Reason)
		}
		if !bound[cluster] {
			delete(f.evicting, key)
		}
		if in.ExcludedClusters == nil {
			in.ExcludedClusters = map[string]string{}
		}
		in.ExcludedClusters[cluster] = "evicted: " + ev.Reason
	}
	return d, recheck
}

// minPositive is the shorter of two waits, where zero means no wait at all.
func minPositive(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}

// holdEvicted returns, among the clusters the cycle unschedules because of a
// taint, those whose binding stays for now: until every replacement is available
// or the graceful timeout passes. It also returns the message for each.
func (f *Failover) holdEvicted(crp *placementv1beta1.ClusterResourcePlacement, in framework.CycleInput, res framework.CycleResult, d NoExecuteDecision) map[string]string {
	active := activeClusters(in.Bindings)
	var waiting []string
	for _, c := range res.Selected {
		b := active[c]
		if b == nil || !conditions.IsCurrentTrue(b.Status.Conditions, placementv1beta1.ConditionAvailable, b.Generation) {
			waiting = append(waiting, c)
		}
	}
	held := map[string]string{}
	for _, c := range res.Unschedule {
		ev, ok := d.Evict[c]
		if !ok || active[c] == nil {
			continue
		}
		if len(waiting) > 0 && in.Now.Before(ev.Since.Add(f.GracefulTimeout)) {
			held[c] = fmt.Sprintf("evicting: %s; kept until the replacement on %s is available (at most until %s)",
				ev.Reason, strings.Join(waiting, ", "), ev.Since.Add(f.GracefulTimeout).UTC().Format(time.RFC3339))
			continue
		}
		if len(waiting) == 0 && len(res.Selected) > 0 {
			failoverSeconds.Observe(in.Now.Sub(ev.TaintedAt).Seconds())
			f.event(crp, corev1.EventTypeNormal, placementv1beta1.ReasonEvicted, "left %s: the replacement on %s is available", c, strings.Join(res.Selected, ", "))
		}
	}
	return held
}

// setEvicting marks a held binding on its Scheduled condition.
func setEvicting(b *placementv1beta1.ClusterResourceBinding, msg string) {
	conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionScheduled, metav1.ConditionFalse, placementv1beta1.ReasonEvicting, msg, b.Generation)
}

func (f *Failover) event(crp *placementv1beta1.ClusterResourcePlacement, eventType, reason, format string, args ...any) {
	if f.Recorder != nil {
		f.Recorder.Eventf(crp, nil, eventType, reason, "Schedule", format, args...)
	}
}

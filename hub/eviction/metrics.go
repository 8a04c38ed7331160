package eviction

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Reasons of flotilla_evictions_total.
const (
	// MetricReasonManual counts evictions by ClusterResourcePlacementEviction.
	MetricReasonManual = "manual"
)

var evictionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "flotilla_evictions_total",
	Help: "Placements evicted from member clusters, by reason (manual: a ClusterResourcePlacementEviction).",
}, []string{"reason"})

func init() {
	metrics.Registry.MustRegister(evictionsTotal)
	evictionsTotal.WithLabelValues(MetricReasonManual)
}

// CountEviction adds one to flotilla_evictions_total{reason}. Other evictors (such
// as NoExecute taints) count here too, with their own reason, rather than
// registering the metric again.
func CountEviction(reason string) { evictionsTotal.WithLabelValues(reason).Inc() }

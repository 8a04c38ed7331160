package updaterun

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Results of flotilla_updaterun_runs_finished_total.
const (
	metricResultSucceeded = "succeeded"
	metricResultFailed    = "failed"
)

var (
	clustersUpdatedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "flotilla_updaterun_clusters_updated_total",
		Help: "Clusters a staged update run moved to its resource snapshot and saw Available.",
	})
	runsFinishedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_updaterun_runs_finished_total",
		Help: "Staged update runs that finished, by result (succeeded, failed).",
	}, []string{"result"})
)

func init() {
	metrics.Registry.MustRegister(clustersUpdatedTotal, runsFinishedTotal)
	runsFinishedTotal.WithLabelValues(metricResultSucceeded)
	runsFinishedTotal.WithLabelValues(metricResultFailed)
}

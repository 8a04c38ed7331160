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

package updaterun

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Results of flotilla_updaterun_runs_finished_total.
const (
	metricResultSucceeded = "succeeded"
	metricResultFailed    = "failed"
	// metricResultRolledBack: an analysis failed and the run rolled back.
	metricResultRolledBack = "rolled_back"
)

var (
	clustersUpdatedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "flotilla_updaterun_clusters_updated_total",
		Help: "Clusters a staged update run moved to its resource snapshot and saw Available.",
	})
	runsFinishedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_updaterun_runs_finished_total",
		Help: "Staged update runs that finished, by result (succeeded, failed, rolled_back).",
	}, []string{"result"})
)

func init() {
	metrics.Registry.MustRegister(clustersUpdatedTotal, runsFinishedTotal)
	runsFinishedTotal.WithLabelValues(metricResultSucceeded)
	runsFinishedTotal.WithLabelValues(metricResultFailed)
	runsFinishedTotal.WithLabelValues(metricResultRolledBack)
}

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

package analysis

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Results of flotilla_updaterun_prometheus_queries_total.
const (
	// metricQueryOK: Prometheus answered with a result a check can judge.
	metricQueryOK = "ok"
	// metricQueryError: the query failed, timed out, did not reach Prometheus,
	// or returned a result no check can judge (too many series, a range vector).
	metricQueryError = "error"
)

// prometheusQueriesTotal keeps the name it had when only staged update runs
// sent queries, so that dashboards built on it go on working; it counts the
// queries of rolling updates' wave analyses too.
var prometheusQueriesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "flotilla_updaterun_prometheus_queries_total",
	Help: "Queries of analyses' prometheus checks (staged update runs and rolling updates) sent to --prometheus-url, by result (ok, error).",
}, []string{"result"})

func init() {
	metrics.Registry.MustRegister(prometheusQueriesTotal)
	prometheusQueriesTotal.WithLabelValues(metricQueryOK)
	prometheusQueriesTotal.WithLabelValues(metricQueryError)
}

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

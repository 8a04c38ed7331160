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

package scheduler

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var failoverSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
	Name:    "flotilla_failover_seconds",
	Help:    "Time from a cluster's NoExecute taint (or its resources turning unavailable) to the evicted placement being available elsewhere.",
	Buckets: prometheus.ExponentialBuckets(1, 2, 12),
})

func init() { metrics.Registry.MustRegister(failoverSeconds) }

// observeFailover records one finished failover of the given length: the
// scheduler lets an evicted binding go once its replacement is available.
func observeFailover(d time.Duration) { failoverSeconds.Observe(d.Seconds()) }

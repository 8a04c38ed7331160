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
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var failbacksTotal = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "flotilla_failbacks_total",
	Help: "Failbacks started: placements with policy.failback moved from a cluster back to a more preferred one.",
})

func init() { metrics.Registry.MustRegister(failbacksTotal) }

// countFailback adds one to flotilla_failbacks_total.
func countFailback() { failbacksTotal.Inc() }

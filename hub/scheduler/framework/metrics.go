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

package framework

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Results of a scheduling cycle, the result label of flotilla_scheduling_cycle_duration_seconds.
const (
	cycleScheduled   = "scheduled"   // Scheduled=True: the policy is fulfilled
	cycleUnfulfilled = "unfulfilled" // Scheduled=False: fewer clusters than asked, or none
	cycleError       = "error"       // the policy could not be evaluated
)

// cycleSeconds is flotilla_scheduling_cycle_duration_seconds{type,result}: how
// long one scheduling cycle took, by placement type and result. Buckets from
// 0.5ms to about 16s.
var cycleSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "flotilla_scheduling_cycle_duration_seconds",
	Help:    "Duration of one scheduling cycle (one placement, all member clusters), by placement type and result.",
	Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
}, []string{"type", "result"})

func init() { metrics.Registry.MustRegister(cycleSeconds) }

// observeCycle records a cycle's duration.
func observeCycle(kind placementv1beta1.PlacementType, res *CycleResult, err error, took time.Duration) {
	result := cycleScheduled
	switch {
	case err != nil:
		result = cycleError
	case res.Status != metav1.ConditionTrue:
		result = cycleUnfulfilled
	}
	cycleSeconds.WithLabelValues(string(kind), result).Observe(took.Seconds())
}

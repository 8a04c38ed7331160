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

package placement

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

var availableSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
	Name:    "flotilla_placement_available_seconds",
	Help:    "Time from the reconcile that found a change of a placement (its creation, a policy change, an edit of a selected object) to the placement being Available on all its clusters.",
	Buckets: prometheus.ExponentialBuckets(0.125, 2, 12),
})

func init() { metrics.Registry.MustRegister(availableSeconds) }

// startChange opens the change this reconcile found in Spans, as soon as it
// wrote a snapshot of it: the scheduler starts on the policy snapshot before
// the resource snapshot is written.
func (r *Reconciler) startChange(s *scope) {
	s.changed = true
	name := ""
	if s.resourceSnapshot != nil {
		name = s.resourceSnapshot.GetName()
	}
	r.Spans.Start(s.key, s.now.Time, name)
}

// observeAvailable ends the placement's change in Spans, and observes
// flotilla_placement_available_seconds, when the placement turns Available
// after a change this process started.
func (r *Reconciler) observeAvailable(before, after placementv1beta1.PlacementObj) {
	t := after.PlacementConditionType(placementv1beta1.ConditionAvailable)
	if conditions.IsTrue(before.GetPlacementStatus().Conditions, t) || !conditions.IsTrue(after.GetPlacementStatus().Conditions, t) {
		return
	}
	if took, ok := r.Spans.Done(pipeline.KeyOf(after)); ok {
		availableSeconds.Observe(took.Seconds())
	}
}

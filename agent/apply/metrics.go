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

package apply

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Values of the result label of flotilla_agent_apply_total.
const (
	// resultApplied: every manifest of the Work was applied.
	resultApplied = "applied"
	// resultFailed: some manifest was not applied, or the apply failed.
	resultFailed = "failed"
	// resultUnchanged: the Work had not changed since its last complete apply, so
	// nothing was written.
	resultUnchanged = "unchanged"
	// resultReported: the apply strategy is ReportDiff; differences were reported
	// and nothing was written.
	resultReported = "reported"
)

// Values of the outcome label of flotilla_agent_drifts_total.
const (
	driftCorrected = "corrected"
	driftReported  = "reported"
)

var (
	applyTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_agent_apply_total",
		Help: "Works the agent applied, by result: applied (every manifest applied), failed (some not applied), unchanged (nothing to do since the last apply), reported (ReportDiff).",
	}, []string{"result"})

	driftsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_agent_drifts_total",
		Help: "Drifts the agent found in objects it applied, by outcome: corrected (applied again, whenToApply Always) or reported (left, whenToApply IfNotDrifted).",
	}, []string{"outcome"})

	watchedResources = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "flotilla_agent_watched_resources",
		Help: "Informers the agent runs on the objects it applied: one per resource (kind), or per resource and namespace with the least-privilege profile.",
	})

	objectsReleasedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_agent_objects_released_total",
		Help: "Objects the agent left on the member cluster, without Flotilla's annotation, labels and field ownership, instead of deleting them when their Work let go of them, by reason: Abandon (propagationPolicy Abandon), TakenOver (the object existed before the Work applied it), NamespaceInUse (a Namespace holding objects no Work applied).",
	}, []string{"reason"})

	manifestsRemovedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "flotilla_agent_manifests_removed_total",
		Help: "Objects the agent deleted from the member cluster because their Work no longer lists them or was removed.",
	})
)

func init() {
	// Make every result visible from the start, at zero. This registers nothing.
	for _, r := range []string{resultApplied, resultFailed, resultUnchanged, resultReported} {
		applyTotal.WithLabelValues(r)
	}
	for _, o := range []string{driftCorrected, driftReported} {
		driftsTotal.WithLabelValues(o)
	}
	for _, r := range []string{placementv1beta1.ReasonReleasedAbandon, placementv1beta1.ReasonReleasedTakenOver, placementv1beta1.ReasonReleasedNamespaceInUse} {
		objectsReleasedTotal.WithLabelValues(r)
	}
}

// Register registers the metrics of the package with reg. Registering them again
// with the same registry is not an error.
func Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{applyTotal, manifestsRemovedTotal, objectsReleasedTotal, driftsTotal, watchedResources} {
		if err := reg.Register(c); err != nil {
			if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
				continue
			}
			return fmt.Errorf("failed to register the apply metrics: %w", err)
		}
	}
	return nil
}

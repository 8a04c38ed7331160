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
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/intstr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Standing is where a placement stands, as its disruption budget sees it.
type Standing struct {
	// Target is how many clusters the placement targets; see TargetCount.
	Target int
	// Available is how many of its clusters are available now; see IsAvailable. A
	// cluster whose eviction has already executed is not counted.
	Available int
	// EvicteeAvailable is whether the cluster to evict is among Available.
	EvicteeAvailable bool
}

// Decision is a disruption budget's answer to one eviction.
type Decision struct {
	// Allowed is whether the eviction keeps the budget.
	Allowed bool
	// Message explains the answer with the numbers.
	Message string
}

// TargetCount returns how many clusters a placement targets: numberOfClusters for
// PickN, and active, the number of its active bindings, for the other types.
func TargetCount(policy *placementv1beta1.PlacementPolicy, active int) int {
	if policy != nil && policy.PlacementType == placementv1beta1.PickN && policy.NumberOfClusters != nil {
		return int(max(*policy.NumberOfClusters, 0))
	}
	return active
}

// IsAvailable reports whether a binding's cluster counts as available: its
// Available condition is True and observed at the binding's current generation.
func IsAvailable(b *placementv1beta1.ClusterResourceBinding) bool {
	return conditions.IsCurrentTrue(b.Status.Conditions, placementv1beta1.ConditionAvailable, b.Generation)
}

// CheckBudget decides whether evicting the placement from cluster keeps the budget,
// given where the placement stands. After the eviction, the available clusters
// must be at least minAvailable, or the unavailable ones (Target minus available)
// at most maxUnavailable. Percentages are of Target; minAvailable rounds up and
// maxUnavailable rounds down. An error means the budget cannot be evaluated.
func CheckBudget(spec placementv1beta1.PlacementDisruptionBudgetSpec, cluster string, st Standing) (Decision, error) {
	after := st.Available
	if st.EvicteeAvailable {
		after--
	}
	after = max(after, 0)
	switch {
	case spec.MinAvailable != nil && spec.MaxUnavailable != nil:
		return Decision{}, errors.New("both minAvailable and maxUnavailable are set; set exactly one")
	case spec.MinAvailable != nil:
		least, desc, err := scaled(spec.MinAvailable, st.Target, true)
		if err != nil {
			return Decision{}, fmt.Errorf("invalid minAvailable: %w", err)
		}
		allowed := after >= least
		return Decision{
			Allowed: allowed,
			Message: fmt.Sprintf("evicting %s %s %d of %d %s available; the budget requires minAvailable %s",
				cluster, wouldLeave(allowed), after, st.Target, clusters(st.Target), desc),
		}, nil
	case spec.MaxUnavailable != nil:
		most, desc, err := scaled(spec.MaxUnavailable, st.Target, false)
		if err != nil {
			return Decision{}, fmt.Errorf("invalid maxUnavailable: %w", err)
		}
		unavailable := max(st.Target-after, 0)
		allowed := unavailable <= most
		return Decision{
			Allowed: allowed,
			Message: fmt.Sprintf("evicting %s %s %d of %d %s unavailable; the budget allows maxUnavailable %s",
				cluster, wouldLeave(allowed), unavailable, st.Target, clusters(st.Target), desc),
		}, nil
	}
	return Decision{}, errors.New("neither minAvailable nor maxUnavailable is set; set exactly one")
}

// scaled returns the number v stands for out of total, rounding a percentage up or
// down, and how to print it: "2", or "2 (50% of 3, rounded up)".
func scaled(v *intstr.IntOrString, total int, roundUp bool) (int, string, error) {
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, roundUp)
	if err != nil {
		return 0, "", err
	}
	if n < 0 {
		return 0, "", fmt.Errorf("%s is negative", v.String())
	}
	if v.Type == intstr.Int {
		return n, fmt.Sprint(n), nil
	}
	way := "down"
	if roundUp {
		way = "up"
	}
	return n, fmt.Sprintf("%d (%s of %d, rounded %s)", n, v.StrVal, total, way), nil
}

func wouldLeave(allowed bool) string {
	if allowed {
		return "leaves"
	}
	return "would leave"
}

func clusters(n int) string {
	if n == 1 {
		return "cluster"
	}
	return "clusters"
}

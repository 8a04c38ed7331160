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
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// condition is a condition's status, reason and message.
type condition struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

// messagePickFixed is the Valid message of an eviction of a PickFixed placement.
const messagePickFixed = "PickFixed placements are never moved; change clusterNames instead"

// validCondition returns the Valid condition of an eviction of crp (nil: it does
// not exist) from cluster, where onCluster says whether the placement has an
// active binding there.
func validCondition(placement, cluster string, crp *placementv1beta1.ClusterResourcePlacement, onCluster bool) condition {
	switch {
	case crp == nil:
		return condition{metav1.ConditionFalse, placementv1beta1.ReasonPlacementNotFound,
			fmt.Sprintf("ClusterResourcePlacement %s does not exist", placement)}
	case !crp.DeletionTimestamp.IsZero():
		return condition{metav1.ConditionFalse, placementv1beta1.ReasonPlacementDeleting,
			fmt.Sprintf("ClusterResourcePlacement %s is being deleted", placement)}
	case crp.Spec.Policy != nil && crp.Spec.Policy.PlacementType == placementv1beta1.PickFixed:
		return condition{metav1.ConditionFalse, placementv1beta1.ReasonPickFixedNotEvictable, messagePickFixed}
	case !onCluster:
		return condition{metav1.ConditionFalse, placementv1beta1.ReasonBindingNotFound,
			fmt.Sprintf("ClusterResourcePlacement %s is not on member cluster %s", placement, cluster)}
	}
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonEvictionValid,
		fmt.Sprintf("ClusterResourcePlacement %s is on member cluster %s", placement, cluster)}
}

// executedCondition returns the Executed condition for the disruption budget's
// decision about evicting placement from cluster; budget is the budget's name, ""
// when the placement has none; err says why the budget cannot be evaluated.
func executedCondition(placement, cluster, budget string, d Decision, err error) condition {
	switch {
	case err != nil:
		return condition{metav1.ConditionFalse, placementv1beta1.ReasonBlockedByDisruptionBudget,
			fmt.Sprintf("ClusterResourcePlacementDisruptionBudget %s cannot be evaluated: %v", budget, err)}
	case !d.Allowed:
		return condition{metav1.ConditionFalse, placementv1beta1.ReasonBlockedByDisruptionBudget, d.Message}
	}
	why := "no disruption budget applies"
	if budget != "" {
		why = d.Message
	}
	return condition{metav1.ConditionTrue, placementv1beta1.ReasonEvicted,
		fmt.Sprintf("%s: ClusterResourcePlacement %s leaves member cluster %s and is not placed there again until this eviction is deleted",
			why, placement, cluster)}
}

// isFinal reports whether an eviction was decided: Valid is False or Executed is
// True. A blocked eviction (Executed False) is not final.
func isFinal(ev *placementv1beta1.ClusterResourcePlacementEviction) bool {
	return conditions.IsFalse(ev.Status.Conditions, placementv1beta1.ConditionEvictionValid) ||
		conditions.IsTrue(ev.Status.Conditions, placementv1beta1.ConditionEvictionExecuted)
}

// set records c as the condition typ of ev.
func set(ev *placementv1beta1.ClusterResourcePlacementEviction, typ string, c condition) {
	conditions.Set(&ev.Status.Conditions, typ, c.status, c.reason, c.message, ev.Generation)
}

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

package rollout

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// readiness tells whether a binding's resources are Available on its cluster,
// and if not, why; for resources the agent cannot track it also says how long
// until they count as available (unavailablePeriod after they were applied).
func readiness(b placementv1beta1.BindingObj, now time.Time, unavailablePeriod time.Duration) (ready bool, why string, recheck time.Duration) {
	st, gen := b.GetBindingStatus(), b.GetGeneration()
	avail := conditions.Get(st.Conditions, placementv1beta1.ConditionAvailable)
	if avail != nil && avail.Status == metav1.ConditionTrue && avail.ObservedGeneration == gen {
		if avail.Reason != placementv1beta1.ReasonNotTrackable {
			return true, "", 0
		}
		until := avail.LastTransitionTime.Add(unavailablePeriod)
		if !now.Before(until) {
			return true, "", 0
		}
		return false, fmt.Sprintf("applied, but not trackable: counted as available %s after it was applied, at %s", unavailablePeriod, until.UTC().Format(time.RFC3339)), until.Sub(now)
	}
	for _, t := range []string{placementv1beta1.ConditionWorkSynchronized, placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable} {
		c := conditions.Get(st.Conditions, t)
		switch {
		case c == nil || c.ObservedGeneration != gen:
			return false, fmt.Sprintf("%s not reported yet for the current resources", t), 0
		case c.Status != metav1.ConditionTrue:
			return false, fmt.Sprintf("%s=%s %s: %s", t, c.Status, c.Reason, c.Message), 0
		}
	}
	return false, "not available yet", 0
}

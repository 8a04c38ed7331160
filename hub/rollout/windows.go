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

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/window"
)

// windowsField is where a rolling update's maintenance windows are, for messages.
const windowsField = "spec.strategy.rollingUpdate.maintenanceWindows"

// WindowHold decides whether a rolling update's maintenance windows hold it at
// now. It returns nil when the rollout may move clusters (no windows, or one is
// open); otherwise the step every bind and update takes instead (Input.Window),
// and how long until the next window opens (0 when none will: the rollout waits
// for a change of the placement):
//
//   - Every window closed: Hold, reason OutsideMaintenanceWindow, saying when
//     the next opens (RFC 3339, UTC).
//   - A window the hub cannot read (window.Parse refuses it): Hold, reason
//     InvalidMaintenanceWindow, with Parse's error, which names the field and
//     what is wrong. Holding is the safe reading of a window the user meant to
//     restrict the rollout with.
func WindowHold(cfg *placementv1beta1.RollingUpdateConfig, now time.Time) (*Step, time.Duration) {
	if cfg == nil || len(cfg.MaintenanceWindows) == 0 {
		return nil, 0
	}
	ws, err := window.Parse(cfg.MaintenanceWindows, windowsField)
	if err != nil {
		return &Step{Action: ActionHold, Reason: placementv1beta1.ReasonInvalidMaintenanceWindow,
			Why: err.Error() + "; the rolling update binds and updates no cluster until it is fixed"}, 0
	}
	st := window.At(ws, now)
	switch {
	case st.Open:
		return nil, 0
	case st.Opens.IsZero():
		return &Step{Action: ActionHold, Reason: placementv1beta1.ReasonOutsideMaintenanceWindow,
			Why: fmt.Sprintf("every maintenance window (%s) is closed and none opens within five years", windowsField)}, 0
	}
	return &Step{Action: ActionHold, Reason: placementv1beta1.ReasonOutsideMaintenanceWindow,
		Why: fmt.Sprintf("every maintenance window is closed; the next opens at %s", st.Opens.UTC().Format(time.RFC3339))}, st.Opens.Sub(now)
}

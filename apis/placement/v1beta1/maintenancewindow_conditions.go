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

package v1beta1

// Reasons for maintenance windows (see MaintenanceWindow).
//
// Of RolloutStarted (per cluster, on the binding and in the placement's
// status.placementStatuses, and in the placement's summary): the rolling update
// holds the cluster back because of spec.strategy.rollingUpdate.maintenanceWindows.
// Of a staged update run's Progressing (on the run and on the stage): the stage
// starts no cluster because of its maintenanceWindows.
const (
	// ReasonOutsideMaintenanceWindow (False): every maintenance window is closed;
	// the message says when the next one opens (RFC 3339), and the rollout goes on
	// then by itself.
	ReasonOutsideMaintenanceWindow = "OutsideMaintenanceWindow"
	// ReasonInvalidMaintenanceWindow (False, RolloutStarted only): a maintenance
	// window of the rolling update cannot be read (a time zone the hub does not
	// know, a schedule the cron parser refuses, or one that never fires); the
	// message names the field and what to change. The rolling update binds and
	// updates no cluster until it is fixed. (A staged update run whose stage has
	// such a window is not initialized: Initialized=False, InvalidStrategy.)
	ReasonInvalidMaintenanceWindow = "InvalidMaintenanceWindow"
)

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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxMaintenanceWindows is how many maintenance windows a rolling update or a
// stage may name.
const MaxMaintenanceWindows = 8

// MaintenanceWindow is a recurring period in which a rollout may move clusters:
// it opens whenever Schedule fires in TimeZone and stays open for Duration of
// elapsed time. A rolling update or a stage with maintenance windows moves no
// cluster while they are all closed (docs/concepts/rollouts.md says which moves
// wait and which never do).
type MaintenanceWindow struct {
	// Schedule is when the window opens: a cron expression of five fields
	// (minute, hour, day of month, month, day of week), each a "*", a value, a
	// range a-b, any of them with a step /n, or a comma-separated list; months
	// and days of the week may also be named (JAN, MON). Day of week runs from 0
	// (Sunday) to 6. For example "0 22 * * 1-5" opens at 22:00 Monday to Friday.
	// When both day of month and day of week are restricted, either one matching
	// is enough (as in cron).
	// +kubebuilder:validation:MinLength=9
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^(\*|[0-5]?[0-9](-[0-5]?[0-9])?)(/[1-9][0-9]?)?(,(\*|[0-5]?[0-9](-[0-5]?[0-9])?)(/[1-9][0-9]?)?)* +(\*|(2[0-3]|[01]?[0-9])(-(2[0-3]|[01]?[0-9]))?)(/[1-9][0-9]?)?(,(\*|(2[0-3]|[01]?[0-9])(-(2[0-3]|[01]?[0-9]))?)(/[1-9][0-9]?)?)* +(\*|\?|(3[01]|[12][0-9]|0?[1-9])(-(3[01]|[12][0-9]|0?[1-9]))?)(/[1-9][0-9]?)?(,(\*|\?|(3[01]|[12][0-9]|0?[1-9])(-(3[01]|[12][0-9]|0?[1-9]))?)(/[1-9][0-9]?)?)* +(\*|(1[0-2]|0?[1-9]|[A-Za-z]{3})(-(1[0-2]|0?[1-9]|[A-Za-z]{3}))?)(/[1-9][0-9]?)?(,(\*|(1[0-2]|0?[1-9]|[A-Za-z]{3})(-(1[0-2]|0?[1-9]|[A-Za-z]{3}))?)(/[1-9][0-9]?)?)* +(\*|\?|([0-6]|[A-Za-z]{3})(-([0-6]|[A-Za-z]{3}))?)(/[1-9][0-9]?)?(,(\*|\?|([0-6]|[A-Za-z]{3})(-([0-6]|[A-Za-z]{3}))?)(/[1-9][0-9]?)?)*$`
	// +required
	Schedule string `json:"schedule"`

	// Duration is how long the window stays open each time it opens, as a
	// duration such as 30m or 2h: elapsed time, so a window that spans a
	// daylight saving change closes at a wall-clock time an hour earlier or
	// later. From 1m to 168h (7 days).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m') && duration(self) <= duration('168h')",message="duration must be from 1m to 168h (7 days)"
	// +required
	Duration metav1.Duration `json:"duration"`

	// TimeZone is the IANA time zone Schedule is read in, such as Europe/Berlin
	// or America/New_York. Default: UTC. A name the hub does not know keeps the
	// rollout from moving clusters, with a condition that names the field.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$`
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
}

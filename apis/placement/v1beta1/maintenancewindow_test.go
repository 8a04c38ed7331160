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

package v1beta1_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

func window(schedule string, d time.Duration, tz string) placementv1beta1.MaintenanceWindow {
	return placementv1beta1.MaintenanceWindow{Schedule: schedule, Duration: metav1.Duration{Duration: d}, TimeZone: tz}
}

// maintenanceWindowCases are checked on a placement's rolling update and on a
// stage; wantRefusal names the field under the list.
var maintenanceWindowCases = []struct {
	name        string
	windows     []placementv1beta1.MaintenanceWindow
	wantRefusal string
}{
	{
		name:    "weekday evenings in Berlin for two hours are accepted",
		windows: []placementv1beta1.MaintenanceWindow{window("0 22 * * 1-5", 2*time.Hour, "Europe/Berlin")},
	},
	{
		name: "lists, ranges, steps, names and a window without a time zone are accepted",
		windows: []placementv1beta1.MaintenanceWindow{
			window("*/15 0-6/2 1,15 JAN-MAR,dec SUN,sat", time.Minute, ""),
			window("30 3 ? * 0", 168*time.Hour, "America/Argentina/Buenos_Aires"),
			window("0 0 31 12 *", 90*time.Minute, "Etc/GMT+5"),
		},
	},
	{
		name: "eight windows are accepted",
		windows: []placementv1beta1.MaintenanceWindow{
			window("0 1 * * *", time.Hour, ""), window("0 2 * * *", time.Hour, ""), window("0 3 * * *", time.Hour, ""), window("0 4 * * *", time.Hour, ""),
			window("0 5 * * *", time.Hour, ""), window("0 6 * * *", time.Hour, ""), window("0 7 * * *", time.Hour, ""), window("0 8 * * *", time.Hour, ""),
		},
	},
	{
		name: "nine windows are refused",
		windows: []placementv1beta1.MaintenanceWindow{
			window("0 1 * * *", time.Hour, ""), window("0 2 * * *", time.Hour, ""), window("0 3 * * *", time.Hour, ""), window("0 4 * * *", time.Hour, ""),
			window("0 5 * * *", time.Hour, ""), window("0 6 * * *", time.Hour, ""), window("0 7 * * *", time.Hour, ""), window("0 8 * * *", time.Hour, ""),
			window("0 9 * * *", time.Hour, ""),
		},
		wantRefusal: "maintenanceWindows: Too many",
	},
	{
		name:        "a minute out of range is refused",
		windows:     []placementv1beta1.MaintenanceWindow{window("60 22 * * *", time.Hour, "")},
		wantRefusal: "maintenanceWindows[0].schedule: Invalid value",
	},
	{
		name:        "an hour out of range is refused",
		windows:     []placementv1beta1.MaintenanceWindow{window("0 24 * * *", time.Hour, "")},
		wantRefusal: "maintenanceWindows[0].schedule: Invalid value",
	},
	{
		name:        "a day of week 7 is refused",
		windows:     []placementv1beta1.MaintenanceWindow{window("0 22 * * 7", time.Hour, "")},
		wantRefusal: "maintenanceWindows[0].schedule: Invalid value",
	},
	{
		name:        "six fields (with seconds) are refused",
		windows:     []placementv1beta1.MaintenanceWindow{window("0 0 22 * * *", time.Hour, "")},
		wantRefusal: "maintenanceWindows[0].schedule: Invalid value",
	},
	{
		name:        "a descriptor is refused",
		windows:     []placementv1beta1.MaintenanceWindow{window("@daily", time.Hour, "")},
		wantRefusal: "maintenanceWindows[0].schedule",
	},
	{
		name:        "a time zone prefix in the schedule is refused",
		windows:     []placementv1beta1.MaintenanceWindow{window("CRON_TZ=UTC 0 22 * * *", time.Hour, "")},
		wantRefusal: "maintenanceWindows[0].schedule: Invalid value",
	},
	{
		name:        "a step of 0 is refused",
		windows:     []placementv1beta1.MaintenanceWindow{window("*/0 22 * * *", time.Hour, "")},
		wantRefusal: "maintenanceWindows[0].schedule: Invalid value",
	},
	{
		name:        "a schedule is required",
		windows:     []placementv1beta1.MaintenanceWindow{window("", time.Hour, "")},
		wantRefusal: "maintenanceWindows[0].schedule",
	},
	{
		name:        "a duration under a minute is refused",
		windows:     []placementv1beta1.MaintenanceWindow{window("0 22 * * *", 30*time.Second, "")},
		wantRefusal: `maintenanceWindows[0].duration: Invalid value: "30s": duration must be from 1m to 168h (7 days)`,
	},
	{
		name:        "a duration over a week is refused",
		windows:     []placementv1beta1.MaintenanceWindow{window("0 22 * * *", 169*time.Hour, "")},
		wantRefusal: `maintenanceWindows[0].duration: Invalid value: "169h0m0s": duration must be from 1m to 168h (7 days)`,
	},
	{
		name:        "a time zone that is not shaped like an IANA name is refused",
		windows:     []placementv1beta1.MaintenanceWindow{window("0 22 * * *", time.Hour, "Europe Berlin")},
		wantRefusal: "maintenanceWindows[0].timeZone: Invalid value",
	},
	{
		name:        "a time zone of 65 characters is refused",
		windows:     []placementv1beta1.MaintenanceWindow{window("0 22 * * *", time.Hour, strings.Repeat("A", 65))},
		wantRefusal: "maintenanceWindows[0].timeZone: Too long",
	},
}

func TestRollingUpdateMaintenanceWindowValidation(t *testing.T) {
	for _, kind := range placementKinds {
		for _, tc := range maintenanceWindowCases {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				s := spec(pickFixed("member-1"))
				s.Strategy.RollingUpdate = &placementv1beta1.RollingUpdateConfig{MaintenanceWindows: tc.windows}
				err := env.Client.Create(context.Background(), kind.new(s))
				testenv.CheckValidation(t, err, tc.wantRefusal)
			})
		}
	}
}

func TestStageMaintenanceWindowValidation(t *testing.T) {
	for _, tc := range maintenanceWindowCases {
		t.Run(tc.name, func(t *testing.T) {
			canary := stage("canary", approval())
			canary.MaintenanceWindows = tc.windows
			err := env.Client.Create(context.Background(), strategy(canary, stage("prod")))
			want := tc.wantRefusal
			if want != "" {
				want = "spec.stages[0]." + want
			}
			testenv.CheckValidation(t, err, want)
		})
	}
}

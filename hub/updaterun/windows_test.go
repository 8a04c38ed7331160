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

package updaterun

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/window"
)

// A closed stage: what planStage would start waits; the rest of the plan stands.
func TestHoldStarts(t *testing.T) {
	onTarget := bindingView{active: true, snapshot: "s-1", available: true}
	movingToTarget := bindingView{active: true, snapshot: "s-1"}
	onOld := bindingView{active: true, snapshot: "s-0", available: true}
	tests := []struct {
		name     string
		clusters []placementv1beta1.ClusterUpdatingStatus
		views    map[string]bindingView
		want     stagePlan
	}{
		{
			name:     "nothing started: nothing starts and the stage is not done",
			clusters: []placementv1beta1.ClusterUpdatingStatus{clusterStatus("a", "waiting"), clusterStatus("b", "waiting")},
			views:    map[string]bindingView{"a": onOld, "b": onOld},
			want:     stagePlan{updating: []string{}},
		},
		{
			name:     "a cluster already moving keeps moving; the next does not start",
			clusters: []placementv1beta1.ClusterUpdatingStatus{clusterStatus("a", "started"), clusterStatus("b", "waiting"), clusterStatus("c", "waiting")},
			views:    map[string]bindingView{"a": movingToTarget, "b": onOld, "c": onOld},
			want:     stagePlan{updating: []string{"a"}},
		},
		{
			name:     "a cluster that finished still succeeds, and frees no slot for another",
			clusters: []placementv1beta1.ClusterUpdatingStatus{clusterStatus("a", "started"), clusterStatus("b", "waiting")},
			views:    map[string]bindingView{"a": onTarget, "b": onOld},
			want:     stagePlan{succeeded: []string{"a"}, updating: []string{}},
		},
		{
			name:     "a stage whose clusters are all done is done, window or not",
			clusters: []placementv1beta1.ClusterUpdatingStatus{clusterStatus("a", "started")},
			views:    map[string]bindingView{"a": onTarget},
			want:     stagePlan{succeeded: []string{"a"}, done: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := holdStarts(planStage(tc.clusters, tc.views, "s-1", 2))
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(stagePlan{})); diff != "" {
				t.Errorf("holdStarts(planStage) (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWindowOf(t *testing.T) {
	now := time.Date(2026, time.November, 28, 21, 0, 0, 0, time.UTC)
	stage := func(ws ...placementv1beta1.MaintenanceWindow) *placementv1beta1.StageConfig {
		return &placementv1beta1.StageConfig{Name: "prod", MaintenanceWindows: ws}
	}
	w := func(schedule, tz string) placementv1beta1.MaintenanceWindow {
		return placementv1beta1.MaintenanceWindow{Schedule: schedule, TimeZone: tz, Duration: metav1.Duration{Duration: time.Hour}}
	}
	tests := []struct {
		name        string
		cfg         *placementv1beta1.StageConfig
		wantOpen    bool
		wantOpens   time.Time
		wantMessage string
	}{
		{name: "a stage without windows is open", cfg: stage(), wantOpen: true},
		{name: "a stage inside its window is open", cfg: stage(w("30 20 * * *", "UTC")), wantOpen: true, wantOpens: time.Date(2026, time.November, 29, 20, 30, 0, 0, time.UTC)},
		{
			name: "a stage before its window waits for it", cfg: stage(w("0 23 * * *", "Europe/Berlin")),
			wantOpens:   time.Date(2026, time.November, 28, 22, 0, 0, 0, time.UTC),
			wantMessage: "stage prod: every maintenance window is closed; 3 cluster(s) wait for the next, which opens at 2026-11-28T22:00:00Z",
		},
		{
			name:        "a window the hub cannot read closes the stage and says which field",
			cfg:         stage(w("0 23 * * *", "Mars/Olympus_Mons")),
			wantMessage: `stage prod: invalid maintenance window: spec.stages[2].maintenanceWindows[0].timeZone "Mars/Olympus_Mons" is not a time zone the hub knows: give an IANA name such as Europe/Berlin or UTC; 3 cluster(s) wait until it is fixed`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := windowOf(tc.cfg, 2, now)
			if got.open != tc.wantOpen || !got.opens.Equal(tc.wantOpens) {
				t.Errorf("windowOf = open %v opens %s, want open %v opens %s", got.open, got.opens, tc.wantOpen, tc.wantOpens)
			}
			if tc.wantOpen {
				return
			}
			if c := outsideWindow(tc.cfg.Name, 3, got); c.message != tc.wantMessage || c.reason != placementv1beta1.ReasonOutsideMaintenanceWindow || c.status != metav1.ConditionFalse {
				t.Errorf("outsideWindow = %+v, want False OutsideMaintenanceWindow %q", c, tc.wantMessage)
			}
		})
	}
}

func TestValidateWindowsNamesTheStageAndTheField(t *testing.T) {
	spec := &placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
		{Name: "canary"},
		{Name: "prod", MaintenanceWindows: []placementv1beta1.MaintenanceWindow{{Schedule: "0 0 30 2 *", Duration: metav1.Duration{Duration: time.Hour}}}},
	}}
	err := validateWindows(spec)
	want := `stage prod: invalid maintenance window: spec.stages[1].maintenanceWindows[0].schedule "0 0 30 2 *" never fires (a day that does not exist in the months given?)`
	if err == nil || err.Error() != want || !errors.Is(err, window.ErrInvalid) {
		t.Errorf("validateWindows = %v, want %q", err, want)
	}
}

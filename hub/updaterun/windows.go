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
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/window"
)

// windowsField is where stage i's maintenance windows are in a strategy.
func windowsField(i int) string {
	return fmt.Sprintf("spec.stages[%d].maintenanceWindows", i)
}

// validateWindows refuses a strategy with a maintenance window the hub cannot
// read; the error names the field (initialization reports it as
// InvalidStrategy).
func validateWindows(spec *placementv1beta1.StagedUpdateStrategySpec) error {
	for i, st := range spec.Stages {
		if _, err := window.Parse(st.MaintenanceWindows, windowsField(i)); err != nil {
			return fmt.Errorf("stage %s: %w", st.Name, err)
		}
	}
	return nil
}

// stageWindow is what a stage's maintenance windows say at now.
type stageWindow struct {
	// open: the stage may start clusters (it has no windows, or one is open).
	open bool
	// opens is when the next window opens, while closed (zero: none will).
	opens time.Time
	// err says why a window cannot be read (the strategy was checked at
	// initialization: only a hub that lost a time zone since gets here); the
	// stage is then closed.
	err error
}

// windowOf reads stage i's maintenance windows at now.
func windowOf(cfg *placementv1beta1.StageConfig, i int, now time.Time) stageWindow {
	if len(cfg.MaintenanceWindows) == 0 {
		return stageWindow{open: true}
	}
	ws, err := window.Parse(cfg.MaintenanceWindows, windowsField(i))
	if err != nil {
		return stageWindow{err: err}
	}
	st := window.At(ws, now)
	return stageWindow{open: st.Open, opens: st.Opens}
}

// holdStarts takes the clusters that would start out of a stage's plan while
// its maintenance windows are closed: clusters already moving keep moving (and
// the stage is still not done), no new one starts. A pure function.
func holdStarts(p stagePlan) stagePlan {
	if len(p.start) == 0 {
		return p
	}
	p.updating = slices.DeleteFunc(slices.Clone(p.updating), func(name string) bool { return slices.Contains(p.start, name) })
	p.start = nil
	p.done = false
	return p
}

// outsideWindow says that the stage starts no cluster until its next
// maintenance window opens.
func outsideWindow(stage string, waiting int, w stageWindow) condition {
	switch {
	case w.err != nil:
		return condition{metav1.ConditionFalse, placementv1beta1.ReasonOutsideMaintenanceWindow,
			fmt.Sprintf("stage %s: %v; %d cluster(s) wait until it is fixed", stage, w.err, waiting)}
	case w.opens.IsZero():
		return condition{metav1.ConditionFalse, placementv1beta1.ReasonOutsideMaintenanceWindow,
			fmt.Sprintf("stage %s: every maintenance window is closed and none opens within five years; %d cluster(s) wait", stage, waiting)}
	}
	return condition{metav1.ConditionFalse, placementv1beta1.ReasonOutsideMaintenanceWindow,
		fmt.Sprintf("stage %s: every maintenance window is closed; %d cluster(s) wait for the next, which opens at %s", stage, waiting, w.opens.UTC().Format(time.RFC3339))}
}

// waitingClusters counts the stage's clusters that have neither started nor
// finished.
func waitingClusters(st *placementv1beta1.StageUpdatingStatus) int {
	n := 0
	for i := range st.Clusters {
		if !clusterStarted(&st.Clusters[i]) && !clusterFinished(&st.Clusters[i]) {
			n++
		}
	}
	return n
}

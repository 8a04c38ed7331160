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

package updaterun_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// joinedAs waits until the run lists cluster in stage, taken in as a joiner
// that matched matched ("" when it updates in the stage it matches).
func joinedAs(t *testing.T, run, cluster, stage, matched string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		r := getRun(t, run)
		for _, st := range r.Status.StagesStatus {
			for _, c := range st.Clusters {
				if c.ClusterName != cluster {
					continue
				}
				if st.StageName != stage || c.Joined == nil || c.Joined.MatchedStage != matched {
					return fmt.Errorf("%s is in stage %s with joined %+v, want stage %s matched %q", cluster, st.StageName, c.Joined, stage, matched)
				}
				return nil
			}
		}
		return fmt.Errorf("the run does not list %s yet", cluster)
	})
}

// Clusters that join the placement during a run get the run's snapshot when
// their stage is reached, or at once in the stage the run is in when their
// stage has passed; one no stage matches is left as it is. None fails the run.
func TestClustersThatJoinDuringARunGetItsSnapshot(t *testing.T) {
	agents := newMemberAgents()
	startHub(t, agents)
	testenv.ReadyMember(t, env.Client, "j-1", map[string]string{"suite": "j", "stage": "canary"})
	testenv.ReadyMember(t, env.Client, "j-2", map[string]string{"suite": "j", "stage": "prod"})
	appNamespace(t, "upd-j", "blue")
	externalPlacement(t, "upd-j", map[string]string{"suite": "j"})
	testenv.Create(t, env.Client, &placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: "upd-j"},
		Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{Name: "canary", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "canary"}},
				AfterStageTasks: []placementv1beta1.AfterStageTask{{Type: placementv1beta1.AfterStageTaskTypeApproval}}},
			{Name: "prod", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "prod"}}},
		}},
	})
	waitUntilExternallyControlled(t, "upd-j", "j-1", "j-2")
	testenv.Create(t, env.Client, newRun("upd-j-0", "upd-j", "0", "upd-j"))
	testenv.Eventually(t, 30*time.Second, colorsAre("upd-j", map[string]string{"j-1": "blue"}))
	waitForRunCondition(t, "upd-j-0", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunWaiting)

	// While the canary waits for approval: a canary cluster joins and updates
	// in the canary stage at once; a prod one waits for prod; one no stage
	// matches is left alone.
	testenv.ReadyMember(t, env.Client, "j-3", map[string]string{"suite": "j", "stage": "canary"})
	testenv.ReadyMember(t, env.Client, "j-4", map[string]string{"suite": "j", "stage": "prod"})
	testenv.ReadyMember(t, env.Client, "j-lab", map[string]string{"suite": "j", "stage": "lab"})
	joinedAs(t, "upd-j-0", "j-3", "canary", "")
	joinedAs(t, "upd-j-0", "j-4", "prod", "")
	testenv.Eventually(t, 30*time.Second, func() error {
		for _, u := range getRun(t, "upd-j-0").Status.UnselectedClusters {
			if u == "j-lab" {
				return nil
			}
		}
		return fmt.Errorf("j-lab is not among the unselected clusters")
	})
	testenv.Eventually(t, 30*time.Second, colorsAre("upd-j", map[string]string{"j-1": "blue", "j-3": "blue"}))
	if err := colorsAre("upd-j", map[string]string{"j-2": "", "j-4": "", "j-lab": ""})(); err != nil {
		t.Fatalf("before the approval: %v", err)
	}

	// Once the canary is approved and prod is under way (j-2 held), a canary
	// cluster that joins updates in prod, since the canary stage has passed.
	agents.hold("j-2", true)
	approve(t, "upd-j-0-canary")
	waitForRunCondition(t, "upd-j-0", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunProgressing)
	testenv.ReadyMember(t, env.Client, "j-5", map[string]string{"suite": "j", "stage": "canary"})
	joinedAs(t, "upd-j-0", "j-5", "prod", "canary")
	agents.hold("j-2", false)

	waitForRunCondition(t, "upd-j-0", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
	if err := colorsAre("upd-j", map[string]string{"j-1": "blue", "j-2": "blue", "j-3": "blue", "j-4": "blue", "j-5": "blue", "j-lab": ""})(); err != nil {
		t.Fatal(err)
	}
	for _, st := range getRun(t, "upd-j-0").Status.StagesStatus {
		for _, c := range st.Clusters {
			if !conditions.IsTrue(c.Conditions, placementv1beta1.ConditionUpdateRunSucceeded) {
				t.Errorf("stage %s: %s did not succeed: %+v", st.StageName, c.ClusterName, c.Conditions)
			}
		}
	}
	testenv.Eventually(t, 10*time.Second, func() error { return hasEvent("upd-j-0", placementv1beta1.EventClusterJoinedRun) })
}

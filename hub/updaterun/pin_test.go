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
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// colorOverride returns a ResourceOverride of the placement's ConfigMap settings
// that sets its color on every cluster.
func colorOverride(namespace, placement, color string) *placementv1beta1.ResourceOverride {
	return &placementv1beta1.ResourceOverride{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "color"},
		Spec: placementv1beta1.ResourceOverrideSpec{
			Placement:         &placementv1beta1.PlacementRef{Name: placement},
			ResourceSelectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "settings"}},
			Policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
				OverrideType: placementv1beta1.JSONPatchOverrideType,
				JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{{
					Operator: placementv1beta1.JSONPatchOverrideOpReplace, Path: "/data/color",
					Value: &apiextensionsv1.JSON{Raw: []byte(`"` + color + `"`)},
				}},
			}}},
		},
	}
}

// latestOverrideSnapshot waits until the override's latest snapshot is the
// named one.
func latestOverrideSnapshot(t *testing.T, namespace, name string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		s := &placementv1beta1.ResourceOverrideSnapshot{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: namespace, Name: name}, s); err != nil {
			return err
		}
		if s.Labels[placementv1beta1.LabelIsLatestSnapshot] != "true" {
			return fmt.Errorf("override snapshot %s is not the latest", name)
		}
		return nil
	})
}

// A run pins the overrides it started with, as it pins the resource snapshot: an
// override edited while the run waits for an approval reaches neither the canary
// it already updated nor the cluster it updates after the approval; the next run
// rolls the edit out.
func TestARunPinsTheOverridesItStartedWith(t *testing.T) {
	ctx := context.Background()
	startHub(t, newMemberAgents())
	testenv.ReadyMember(t, env.Client, "p-1", map[string]string{"suite": "p", "stage": "canary"})
	testenv.ReadyMember(t, env.Client, "p-2", map[string]string{"suite": "p", "stage": "prod"})
	appNamespace(t, "upd-p", "blue")
	externalPlacement(t, "upd-p", map[string]string{"suite": "p"})
	override := colorOverride("upd-p", "upd-p", "pinned")
	testenv.Create(t, env.Client, override)
	latestOverrideSnapshot(t, "upd-p", "color-0")
	testenv.Create(t, env.Client, &placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: "upd-p"},
		Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{Name: "canary", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "canary"}},
				AfterStageTasks: []placementv1beta1.AfterStageTask{{Type: placementv1beta1.AfterStageTaskTypeApproval}}},
			{Name: "prod", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "prod"}}},
		}},
	})
	waitUntilExternallyControlled(t, "upd-p", "p-1", "p-2")

	testenv.Create(t, env.Client, newRun("upd-p-0", "upd-p", "0", "upd-p"))
	waitForRunCondition(t, "upd-p-0", placementv1beta1.ConditionUpdateRunInitialized, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunInitialized)
	pinned := []placementv1beta1.NamespacedName{{Namespace: "upd-p", Name: "color-0"}}
	run := getRun(t, "upd-p-0")
	for _, c := range []string{"p-1", "p-2"} {
		if got := clusterStatus(run, c).ResourceOverrideSnapshots; !slices.Equal(got, pinned) {
			t.Errorf("cluster %s: pinned override snapshots %v, want %v", c, got, pinned)
		}
	}
	testenv.Eventually(t, 30*time.Second, colorsAre("upd-p", map[string]string{"p-1": "pinned", "p-2": ""}))
	waitForRunCondition(t, "upd-p-0", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunWaiting)

	// The override changes while the run waits for the approval.
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: "upd-p", Name: "color"}, override); err != nil {
		t.Fatal(err)
	}
	override.Spec.Policy.OverrideRules[0].JSONPatchOverrides[0].Value = &apiextensionsv1.JSON{Raw: []byte(`"edited"`)}
	if err := env.Client.Update(ctx, override); err != nil {
		t.Fatal(err)
	}
	latestOverrideSnapshot(t, "upd-p", "color-1")
	approve(t, "upd-p-0-canary")
	waitForRunCondition(t, "upd-p-0", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
	if err := colorsAre("upd-p", map[string]string{"p-1": "pinned", "p-2": "pinned"})(); err != nil {
		t.Fatalf("after the approval: %v", err)
	}
	for _, c := range []string{"p-1", "p-2"} {
		b, err := bindingOn("upd-p", c)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(b.Spec.ResourceOverrideSnapshots, pinned) {
			t.Errorf("binding on %s applies override snapshots %v, want the pinned %v", c, b.Spec.ResourceOverrideSnapshots, pinned)
		}
	}

	// The next run pins the edit and rolls it out.
	testenv.Create(t, env.Client, newRun("upd-p-1", "upd-p", "0", "upd-p"))
	waitForRunCondition(t, "upd-p-1", placementv1beta1.ConditionUpdateRunInitialized, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunInitialized)
	if got, want := clusterStatus(getRun(t, "upd-p-1"), "p-2").ResourceOverrideSnapshots, []placementv1beta1.NamespacedName{{Namespace: "upd-p", Name: "color-1"}}; !slices.Equal(got, want) {
		t.Errorf("the next run pinned %v, want %v", got, want)
	}
}

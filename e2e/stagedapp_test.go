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

package e2e

// The set-up the staged-run and rolling-update tests share: an app (a
// namespace with ConfigMap "settings"), a canary-then-prod strategy and the
// placement that carries the app.

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// createApp creates namespace ns on the hub with ConfigMap "settings" holding
// data, and deletes the namespace when the test ends.
func createApp(t *testing.T, hub client.Client, ns string, data map[string]string) {
	t.Helper()
	ctx := context.Background()
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: data},
	}
	for _, o := range objs {
		if err := hub.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	t.Cleanup(func() { _ = hub.Delete(ctx, objs[0]) })
}

// labelStages labels member-1 stage=canary and member-2 and member-3
// stage=prod for the test, as canaryThenProd selects them.
func labelStages(t *testing.T, hub client.Client) (canary, prod []string) {
	t.Helper()
	labelMembers(t, hub, "stage", map[string]string{"member-1": "canary", "member-2": "prod", "member-3": "prod"})
	return []string{"member-1"}, []string{"member-2", "member-3"}
}

// canaryThenProd is a strategy of two stages: "canary" (members labelled
// stage=canary) followed by canaryTasks, then "prod" (stage=prod), updating
// prodConcurrency members at a time (nil: the strategy's default).
func canaryThenProd(name string, prodConcurrency *intstr.IntOrString, canaryTasks ...placementv1beta1.AfterStageTask) *placementv1beta1.ClusterStagedUpdateStrategy {
	return &placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{
				Name:            "canary",
				LabelSelector:   &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "canary"}},
				AfterStageTasks: canaryTasks,
			},
			{
				Name:           "prod",
				LabelSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "prod"}},
				MaxConcurrency: prodConcurrency,
			},
		}},
	}
}

// appPlacement is a placement named after namespace ns that selects it and
// rolls out with the strategy of the given type.
func appPlacement(ns string, strategy placementv1beta1.RolloutStrategyType) *placementv1beta1.ClusterResourcePlacement {
	return &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: ns}},
			Strategy:          placementv1beta1.RolloutStrategy{Type: strategy},
		},
	}
}

// createPlacement creates crp on the hub; when the test ends it deletes it
// and waits until its Work is gone.
func createPlacement(t *testing.T, hub client.Client, crp *placementv1beta1.ClusterResourcePlacement) {
	t.Helper()
	if err := hub.Create(context.Background(), crp); err != nil {
		t.Fatalf("create placement %s: %v", crp.Name, err)
	}
	t.Cleanup(func() { deletePlacementAndWait(t, hub, crp.Name) })
}

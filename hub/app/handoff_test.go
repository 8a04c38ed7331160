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

package app

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// A PickN placement of one cluster hands a checkpoint name on: the member it
// runs on reports ckpt-7 through statusFeedback; a NoExecute taint makes it
// fail over; the replacement's Work carries ckpt-7 where the override puts
// ${PLACEMENT-HANDOFF-ckpt}, although the first member's binding is gone.
// When the replacement then reports ckpt-8, the placement's status keeps that,
// and the replacement's Work is not rewritten: its binding's value is frozen.
func TestStateHandOffCarriesTheLastReportedValueToTheReplacement(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	testenv.ReadyMember(t, c, "ho-a", map[string]string{"suite": "handoff", "fast": "yes"})
	testenv.ReadyMember(t, c, "ho-b", map[string]string{"suite": "handoff"})
	startHub(t)
	testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "handoff"}})
	testenv.Create(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "handoff", Name: "state"}, Data: map[string]string{"checkpoint": ""}})
	testenv.Create(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "handoff", Name: "app"}, Data: map[string]string{"resume": "none"}})
	testenv.Create(t, c, &placementv1beta1.ResourceOverride{
		ObjectMeta: metav1.ObjectMeta{Namespace: "handoff", Name: "resume"},
		Spec: placementv1beta1.ResourceOverrideSpec{
			ResourceSelectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "app"}},
			Policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
				OverrideType: placementv1beta1.JSONPatchOverrideType,
				JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{{Operator: placementv1beta1.JSONPatchOverrideOpReplace, Path: "/data/resume",
					Value: &apiextensionsv1.JSON{Raw: []byte(`"${PLACEMENT-HANDOFF-ckpt}"`)}}},
			}}},
		},
	})
	testenv.Create(t, c, &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "handoff"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "handoff"}},
			Policy: &placementv1beta1.PlacementPolicy{
				PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1),
				Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
						{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"suite": "handoff"}}},
					}},
					PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PreferredClusterSelector{{
						Weight: 50, Preference: placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fast": "yes"}}},
					}},
				}},
				// The test's failure: leave a member so tainted after a second.
				Tolerations: []placementv1beta1.Toleration{{Key: "handoff/failed", Operator: placementv1beta1.TolerationOpExists,
					Effect: clusterv1beta1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](1)}},
			},
			StatusFeedback: []placementv1beta1.StatusFeedbackRule{{Version: "v1", Kind: "ConfigMap",
				JSONPaths: []placementv1beta1.JSONPathRule{{Name: "checkpoint", Path: ".data.checkpoint"}}}},
			StateHandOff: []placementv1beta1.StateHandOffRule{{Name: "ckpt", Feedback: placementv1beta1.HandOffFeedback{
				Kind: "ConfigMap", Namespace: "handoff", Name: "state", JSONPathName: "checkpoint"}}},
		},
	})

	// The first copy starts with nothing to resume from, and reports ckpt-7.
	testenv.Eventually(t, 30*time.Second, func() error {
		_, data, work, err := workManifests(ctx, c, "ho-a", "handoff")
		if err != nil {
			return err
		}
		if got, ok := data["app"]["resume"]; !ok || got != "" {
			return fmt.Errorf("ho-a's app.data.resume = %q (set: %v), want empty: no value was known", got, ok)
		}
		return reportCheckpoint(ctx, c, work, "ckpt-7")
	})
	waitHandOff(t, "ckpt-7", "ho-a")

	// ho-a fails: the placement moves to ho-b, which resumes from ckpt-7.
	if err := retry.RetryOnConflict(patientRetry, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := c.Get(ctx, types.NamespacedName{Name: "ho-a"}, mc); err != nil {
			return err
		}
		mc.Spec.Taints = append(mc.Spec.Taints, clusterv1beta1.Taint{Key: "handoff/failed", Value: "true", Effect: clusterv1beta1.TaintEffectNoExecute})
		return c.Update(ctx, mc)
	}); err != nil {
		t.Fatal(err)
	}
	var workB *placementv1beta1.Work
	testenv.Eventually(t, 60*time.Second, func() error {
		_, data, work, err := workManifests(ctx, c, "ho-b", "handoff")
		if err != nil {
			return err
		}
		if got := data["app"]["resume"]; got != "ckpt-7" {
			return fmt.Errorf("ho-b's app.data.resume = %q, want ckpt-7", got)
		}
		workB = work
		// The new copy is available and has written no checkpoint yet.
		return reportCheckpoint(ctx, c, work, "")
	})
	// The value outlives ho-a's binding.
	testenv.Eventually(t, 60*time.Second, func() error {
		list := &placementv1beta1.ClusterResourceBindingList{}
		if err := c.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: "handoff"}); err != nil {
			return err
		}
		for _, b := range list.Items {
			if b.Spec.TargetCluster == "ho-a" {
				return fmt.Errorf("ho-a's binding %s is still there", b.Name)
			}
		}
		return nil
	})
	waitHandOff(t, "ckpt-7", "ho-a")

	// ho-b reports ckpt-8: the status moves on, ho-b's Work does not.
	testenv.Eventually(t, 30*time.Second, func() error {
		w := &placementv1beta1.Work{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(workB), w); err != nil {
			return err
		}
		return reportCheckpoint(ctx, c, w, "ckpt-8")
	})
	waitHandOff(t, "ckpt-8", "ho-b")
	_, data, work, err := workManifests(ctx, c, "ho-b", "handoff")
	if err != nil {
		t.Fatal(err)
	}
	if got := data["app"]["resume"]; got != "ckpt-7" || work.Generation != workB.Generation {
		t.Errorf("ho-b's Work changed after ho-b reported: resume %q (generation %d), want ckpt-7 (generation %d)", got, work.Generation, workB.Generation)
	}
}

// reportCheckpoint plays the agent: the Work is applied and available, and the
// state ConfigMap's checkpoint is value.
func reportCheckpoint(ctx context.Context, c client.Client, work *placementv1beta1.Work, value string) error {
	work.Status = placementv1beta1.WorkStatus{}
	for i, m := range work.Spec.Workload.Manifests {
		var o struct {
			Kind     string
			Metadata metav1.ObjectMeta
		}
		if err := json.Unmarshal(m.Raw, &o); err != nil {
			return err
		}
		mc := placementv1beta1.ManifestCondition{Identifier: placementv1beta1.WorkResourceIdentifier{
			Ordinal: i, Version: "v1", Kind: o.Kind, Name: o.Metadata.Name, Namespace: o.Metadata.Namespace}}
		if o.Kind == "ConfigMap" && o.Metadata.Name == "state" {
			mc.Feedback = []placementv1beta1.FeedbackValue{{Name: "checkpoint", Value: value}}
		}
		conditions.Set(&mc.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, "applied", work.Generation)
		conditions.Set(&mc.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, placementv1beta1.ReasonAvailable, "available", work.Generation)
		work.Status.ManifestConditions = append(work.Status.ManifestConditions, mc)
	}
	return reportAvailable(ctx, c, work)
}

// waitHandOff waits until the placement's status keeps value, from cluster.
func waitHandOff(t *testing.T, value, cluster string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Name: "handoff"}, crp); err != nil {
			return err
		}
		if h := crp.Status.HandOff; len(h) != 1 || h[0].Name != "ckpt" || h[0].Value != value || h[0].Cluster != cluster || h[0].ObservationTime == nil {
			return fmt.Errorf("status.handOff = %+v, want ckpt = %s from %s", h, value, cluster)
		}
		return nil
	})
}

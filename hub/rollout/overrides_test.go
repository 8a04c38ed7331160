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

package rollout_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

func createIfMissing(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// withOverride returns a check that exactly want clusters' bindings name the
// ResourceOverride snapshot ns/name.
func withOverride(t *testing.T, placement, name string, want int) func() error {
	return func() error {
		var got []string
		for _, c := range clusters {
			b := binding(t, placement, c)
			if len(b.Spec.ResourceOverrideSnapshots) == 1 && b.Spec.ResourceOverrideSnapshots[0].Name == name {
				got = append(got, c)
			}
		}
		sort.Strings(got)
		if len(got) != want {
			return fmt.Errorf("bindings applying %s: [%s], want %d", name, strings.Join(got, ","), want)
		}
		return nil
	}
}

// A new override snapshot reaches the bindings like a new resource snapshot: one
// cluster at a time under maxUnavailable 1, each after the one before is
// available; only the clusters a rule selects apply it.
// reportOverridden reports Available for the clusters whose bindings apply an
// override snapshot now. It reads every binding before it reports any: a report
// lets the rollout move the next cluster, which must not be reported in turn.
func reportOverridden(t *testing.T, placement string) {
	t.Helper()
	var overridden []string
	for _, c := range clusters {
		if b := binding(t, placement, c); len(b.Spec.ResourceOverrideSnapshots) == 1 {
			overridden = append(overridden, c)
		}
	}
	for _, c := range overridden {
		report(t, placement, c, true, true, placementv1beta1.ReasonAvailable)
	}
}

func TestOverrideSnapshotRollsOutLikeAResourceChange(t *testing.T) {
	const p = "overridden"
	ctx := context.Background()
	startRollout(t)
	for _, c := range clusters {
		createIfMissing(t, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: c, Labels: map[string]string{"rollout-test": "yes"}}})
	}
	createIfMissing(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}})
	availableEverywhere(t, p)

	testenv.Create(t, env.Client, &placementv1beta1.ResourceOverrideSnapshot{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ro-0", Labels: map[string]string{
			placementv1beta1.LabelOverrideName: "ro", placementv1beta1.LabelOverrideIndex: "0", placementv1beta1.LabelIsLatestSnapshot: "true"}},
		Spec: placementv1beta1.ResourceOverrideSnapshotSpec{OverrideHash: "h", OverrideSpec: placementv1beta1.ResourceOverrideSpec{
			Placement:         &placementv1beta1.PlacementRef{Name: p},
			ResourceSelectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "c"}},
			Policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
				ClusterSelector: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
					{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"rollout-test": "yes"}}}}},
				OverrideType:       placementv1beta1.JSONPatchOverrideType,
				JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{{Operator: "add", Path: "/data/x", Value: &apiextensionsv1.JSON{Raw: []byte(`"y"`)}}},
			}}},
		}},
	})
	testenv.Eventually(t, 20*time.Second, withOverride(t, p, "ro-0", 1))
	consistently(t, time.Second, withOverride(t, p, "ro-0", 1))
	reportOverridden(t, p)
	testenv.Eventually(t, 20*time.Second, withOverride(t, p, "ro-0", 2))

	// A cluster the rule no longer selects drops the override (in its turn).
	mc := &clusterv1beta1.MemberCluster{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "member-3"}, mc); err != nil {
		t.Fatal(err)
	}
	reportOverridden(t, p)
	testenv.Eventually(t, 20*time.Second, withOverride(t, p, "ro-0", 3))
	for _, c := range clusters {
		report(t, p, c, true, true, placementv1beta1.ReasonAvailable)
	}
	mc.Labels["rollout-test"] = "no"
	if err := env.Client.Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, withOverride(t, p, "ro-0", 2))
	if b := binding(t, p, "member-3"); len(b.Spec.ResourceOverrideSnapshots) != 0 {
		t.Errorf("member-3 still applies %v", b.Spec.ResourceOverrideSnapshots)
	}
}

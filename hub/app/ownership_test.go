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
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// testUser is the field manager of this test's own writes: the user's, as
// kubectl's would be. A hub write without a field manager of its own would
// show up as the test binary's name, which is no writer in the table.
const testUser = "ownership-test-user"

// After a placement has gone through the whole pipeline (placement, snapshots,
// bindings, Work, the agent's report and back), every pipeline object holds in
// its managedFields only fields the ownership table (hub/pipeline/ownership.go)
// gives their managers, and every writer the pipeline ran left its mark.
func TestEveryWriterWritesOnlyItsFields(t *testing.T) {
	ctx := context.Background()
	cfg := rest.CopyConfig(env.Config)
	cfg.UserAgent = testUser
	user, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	// The join server and the tunnel server, as they would write a member
	// whose agent connected and reported healthy.
	join := client.WithFieldOwner(user, pipeline.ManagerJoin)
	tunnel := client.WithFieldOwner(user, pipeline.ManagerTunnelServer)
	members := []string{"own-1", "own-2"}
	for _, name := range members {
		testenv.Create(t, user, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterv1beta1.MemberNamespace(name)}})
		mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"suite": "ownership"}}}
		testenv.Create(t, join, mc)
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionJoined, metav1.ConditionTrue, clusterv1beta1.ReasonJoined, "test", mc.Generation)
		if err := join.Status().Update(ctx, mc); err != nil {
			t.Fatal(err)
		}
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue, clusterv1beta1.ReasonAgentConnected, "test", mc.Generation)
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionHealthy, metav1.ConditionTrue, clusterv1beta1.ReasonHealthy, "test", mc.Generation)
		mc.Status.KubernetesVersion = "v1.37.1"
		if err := tunnel.Status().Update(ctx, mc); err != nil {
			t.Fatal(err)
		}
	}
	startHub(t)
	testenv.Create(t, user, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "own"}})
	testenv.Create(t, user, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "own", Name: "settings"}, Data: map[string]string{"k": "v"}})
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "own"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "own"}},
			Policy: &placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
					{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"suite": "ownership"}}},
				}},
			}}},
		},
	}
	testenv.Create(t, user, crp)

	// The agents report their Work applied and available, through the tunnel
	// server's field manager.
	for _, name := range members {
		key := types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace(name), Name: "own-work"}
		testenv.Eventually(t, 20*time.Second, func() error {
			w := &placementv1beta1.Work{}
			if err := user.Get(ctx, key, w); err != nil {
				return err
			}
			conditions.Set(&w.Status.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, "all applied", w.Generation)
			conditions.Set(&w.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, placementv1beta1.ReasonAvailable, "all available", w.Generation)
			return tunnel.Status().Update(ctx, w)
		})
	}
	testenv.Eventually(t, 20*time.Second, func() error {
		got := &placementv1beta1.ClusterResourcePlacement{}
		if err := user.Get(ctx, client.ObjectKeyFromObject(crp), got); err != nil {
			return err
		}
		if !conditions.IsCurrentTrue(got.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionAvailable), got.Generation) {
			return fmt.Errorf("the placement is not available yet: %+v", got.Status.Conditions)
		}
		return nil
	})

	objects := pipelineObjects(ctx, t, user, "own", members)
	// Every writer the pipeline ran (and the stand-ins above) wrote something.
	wantManagers := map[string][]string{
		"ClusterResourcePlacement":        {pipeline.ManagerPlacement, testUser},
		"ClusterSchedulingPolicySnapshot": {pipeline.ManagerPlacement, pipeline.ManagerScheduler},
		"ClusterResourceSnapshot":         {pipeline.ManagerPlacement},
		"ClusterResourceBinding":          {pipeline.ManagerScheduler, pipeline.ManagerRollout, pipeline.ManagerWorkGenerator},
		"Work":                            {pipeline.ManagerWorkGenerator, pipeline.ManagerTunnelServer},
		"MemberCluster":                   {pipeline.ManagerJoin, pipeline.ManagerTunnelServer, pipeline.ManagerMembership},
	}
	isUser := func(m string) bool { return m == testUser }
	var problems []string
	for _, o := range objects {
		table := pipeline.OwnershipOf(o.kind)
		if table == nil {
			t.Fatalf("no ownership table for %s", o.kind)
		}
		for _, v := range table.Violations(o.obj.GetManagedFields(), isUser) {
			problems = append(problems, fmt.Sprintf("%s %s: %s", o.kind, client.ObjectKeyFromObject(o.obj), v))
		}
		have := map[string]bool{}
		for _, e := range o.obj.GetManagedFields() {
			have[e.Manager] = true
		}
		for _, m := range wantManagers[o.kind] {
			if !have[m] {
				problems = append(problems, fmt.Sprintf("%s %s: nothing written by %s (managers: %v)", o.kind, client.ObjectKeyFromObject(o.obj), m, sortedKeys(have)))
			}
		}
	}
	if len(problems) > 0 {
		t.Errorf("managedFields disagree with hub/pipeline/ownership.go:\n%s", strings.Join(problems, "\n"))
	}
}

type pipelineObject struct {
	kind string
	obj  client.Object
}

// pipelineObjects reads the placement's objects of every pipeline kind, and
// the members'; it fails the test if a kind has none.
func pipelineObjects(ctx context.Context, t *testing.T, c client.Client, placement string, members []string) []pipelineObject {
	t.Helper()
	var out []pipelineObject
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := c.Get(ctx, types.NamespacedName{Name: placement}, crp); err != nil {
		t.Fatal(err)
	}
	out = append(out, pipelineObject{"ClusterResourcePlacement", crp})
	owned := client.MatchingLabels{placementv1beta1.LabelPlacementName: placement}
	policies := &placementv1beta1.ClusterSchedulingPolicySnapshotList{}
	resources := &placementv1beta1.ClusterResourceSnapshotList{}
	bindings := &placementv1beta1.ClusterResourceBindingList{}
	for _, l := range []client.ObjectList{policies, resources, bindings} {
		if err := c.List(ctx, l, owned); err != nil {
			t.Fatal(err)
		}
	}
	for i := range policies.Items {
		out = append(out, pipelineObject{"ClusterSchedulingPolicySnapshot", &policies.Items[i]})
	}
	for i := range resources.Items {
		out = append(out, pipelineObject{"ClusterResourceSnapshot", &resources.Items[i]})
	}
	for i := range bindings.Items {
		out = append(out, pipelineObject{"ClusterResourceBinding", &bindings.Items[i]})
	}
	for _, m := range members {
		mc := &clusterv1beta1.MemberCluster{}
		if err := c.Get(ctx, types.NamespacedName{Name: m}, mc); err != nil {
			t.Fatal(err)
		}
		out = append(out, pipelineObject{"MemberCluster", mc})
		works := &placementv1beta1.WorkList{}
		if err := c.List(ctx, works, client.InNamespace(clusterv1beta1.MemberNamespace(m)), owned); err != nil {
			t.Fatal(err)
		}
		for i := range works.Items {
			out = append(out, pipelineObject{"Work", &works.Items[i]})
		}
	}
	count := map[string]int{}
	for _, o := range out {
		count[o.kind]++
	}
	for _, k := range []string{"ClusterSchedulingPolicySnapshot", "ClusterResourceSnapshot", "ClusterResourceBinding", "Work"} {
		if count[k] == 0 {
			t.Fatalf("the placement has no %s", k)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

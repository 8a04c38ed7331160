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

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	planv1beta1 "github.com/flotilla-io/flotilla/apis/plan/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/hub/cli"
)

// planWith runs `kubectl flotilla plan -f FILE -o json` (the plugin's
// command, in process) on objs and returns the hub's answer.
func planWith(t *testing.T, objs ...any) *planv1beta1.PlacementPlanStatus {
	t.Helper()
	pp := &planv1beta1.PlacementPlan{}
	out := runPlan(t, []string{"-o", "json"}, objs...)
	if err := json.Unmarshal([]byte(out), pp); err != nil {
		t.Fatalf("kubectl flotilla plan printed no PlacementPlan: %v\n%s", err, out)
	}
	// The report people read, for the log.
	framework.Logf("kubectl flotilla plan --diff:\n%s", runPlan(t, []string{"--diff"}, objs...))
	return &pp.Status
}

// runPlan runs `kubectl flotilla plan -f FILE args...` on objs and returns
// what it printed.
func runPlan(t *testing.T, args []string, objs ...any) string {
	t.Helper()
	var docs []string
	for _, o := range objs {
		y, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(y))
	}
	file := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := cli.NewCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append([]string{"plan", "-f", file, "--kubeconfig", provider.HubKubeconfig()}, args...))
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("kubectl flotilla plan: %v\n%s", err, errOut.String())
	}
	return out.String()
}

// planned returns the clusters a plan gives each decision, sorted.
func planned(st *planv1beta1.PlacementPlanStatus) map[planv1beta1.Decision][]string {
	out := map[planv1beta1.Decision][]string{}
	for _, c := range st.Clusters {
		out[c.Decision] = append(out[c.Decision], c.Name)
	}
	for _, l := range out {
		sort.Strings(l)
	}
	return out
}

// wantDecisions fails the test unless the plan decides exactly so.
func wantDecisions(t *testing.T, st *planv1beta1.PlacementPlanStatus, want map[planv1beta1.Decision][]string) {
	t.Helper()
	got := planned(st)
	for d, cs := range want {
		if !slices.Equal(cs, got[d]) {
			t.Fatalf("plan: %s clusters are %v, want %v (whole plan: %v)", d, got[d], cs, got)
		}
	}
}

// manifestOf returns a cluster's planned manifest of kind and name.
func manifestOf(st *planv1beta1.PlacementPlanStatus, cluster, kind, name string) *planv1beta1.PlannedManifest {
	for _, c := range st.Clusters {
		if c.Name != cluster {
			continue
		}
		for i := range c.Manifests {
			if c.Manifests[i].Kind == kind && c.Manifests[i].Name == name {
				return &c.Manifests[i]
			}
		}
	}
	return nil
}

// placedAsPlanned checks that the placement is on exactly the clusters.
func placedAsPlanned(ctx context.Context, t *testing.T, name string, want []string) func() error {
	hub := hubClient(t)
	return func() error {
		got, err := clustersOf(ctx, hub, name)
		if err != nil {
			return err
		}
		sort.Strings(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("placement %s is on %v, the plan said %v", name, got, want)
		}
		return framework.PlacementConditionsTrue(ctx, hub, name, want...)()
	}
}

// TestPlan plans a new placement, a policy edit and an override edit with
// `kubectl flotilla plan`, then applies each and checks that what happens
// is what the plan said: the clusters it is on, and the objects there.
func TestPlan(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const ns, name = "e2e-plan", "e2e-plan"
	createOnHub(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	createOnHub(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"color": "blue"}})
	crp := &placementv1beta1.ClusterResourcePlacement{
		TypeMeta:   metav1.TypeMeta{APIVersion: placementv1beta1.GroupVersion.String(), Kind: "ClusterResourcePlacement"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: ns}},
			Policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll, Affinity: &placementv1beta1.Affinity{
				ClusterAffinity: &placementv1beta1.ClusterAffinity{RequiredDuringSchedulingIgnoredDuringExecution: labelSelector(map[string]string{"env": "prod"})}}},
		},
	}

	// A new placement: the env=prod members, every object created there.
	st := planWith(t, crp)
	wantDecisions(t, st, map[planv1beta1.Decision][]string{
		planv1beta1.DecisionSelected: {"member-1", "member-3"}, planv1beta1.DecisionNotSelected: {"member-2"}})
	if m := manifestOf(st, "member-1", "ConfigMap", "settings"); m == nil || m.Change != planv1beta1.ChangeCreate || !strings.Contains(string(m.Object.Raw), "blue") {
		t.Fatalf("plan: member-1 gets ConfigMap settings as %+v, want it created, blue", m)
	}
	if st.Exists {
		t.Errorf("plan: the placement is said to exist before it was created")
	}
	if err := hub.Create(ctx, crp.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deletePlacementAndWait(t, hub, name) })
	framework.Eventually(t, 3*time.Minute, placedAsPlanned(ctx, t, name, []string{"member-1", "member-3"}))

	// A policy edit: zone-b instead of env=prod keeps member-3, drops
	// member-1 and selects member-2; the objects already on member-3 stay
	// as they are.
	edited := crp.DeepCopy()
	edited.Spec.Policy.Affinity.ClusterAffinity.RequiredDuringSchedulingIgnoredDuringExecution = labelSelector(map[string]string{"zone": "zone-b"})
	st = planWith(t, edited)
	wantDecisions(t, st, map[planv1beta1.Decision][]string{
		planv1beta1.DecisionKept: {"member-3"}, planv1beta1.DecisionSelected: {"member-2"}, planv1beta1.DecisionDropped: {"member-1"}})
	if m := manifestOf(st, "member-3", "ConfigMap", "settings"); m == nil || m.Change != planv1beta1.ChangeUnchanged {
		t.Errorf("plan: member-3's ConfigMap settings is %+v, want Unchanged", m)
	}
	if m := manifestOf(st, "member-1", "ConfigMap", "settings"); m == nil || m.Change != planv1beta1.ChangeDelete {
		t.Errorf("plan: member-1's ConfigMap settings is %+v, want Delete", m)
	}
	if r := st.Rollout; r == nil || len(r.Waves) == 0 {
		t.Errorf("plan: no rollout waves: %+v", r)
	}
	live := &placementv1beta1.ClusterResourcePlacement{}
	if err := hub.Get(ctx, types.NamespacedName{Name: name}, live); err != nil {
		t.Fatal(err)
	}
	live.Spec.Policy = edited.Spec.Policy
	if err := hub.Update(ctx, live); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 3*time.Minute, placedAsPlanned(ctx, t, name, []string{"member-2", "member-3"}))
	framework.Eventually(t, time.Minute, onMember(t, "member-1", &corev1.ConfigMap{}, types.NamespacedName{Namespace: ns, Name: "settings"}, false))

	// An override edit: green on env=dev changes member-2's ConfigMap and
	// leaves member-3's alone.
	ro := &placementv1beta1.ResourceOverride{
		TypeMeta:   metav1.TypeMeta{APIVersion: placementv1beta1.GroupVersion.String(), Kind: "ResourceOverride"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "color"},
		Spec: placementv1beta1.ResourceOverrideSpec{
			ResourceSelectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "settings"}},
			Policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
				ClusterSelector: labelSelector(map[string]string{"env": "dev"}),
				JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{{Operator: placementv1beta1.JSONPatchOverrideOpReplace, Path: "/data/color",
					Value: &apiextensionsv1.JSON{Raw: []byte(`"green"`)}}},
			}}},
		},
	}
	st = planWith(t, edited, ro)
	wantDecisions(t, st, map[planv1beta1.Decision][]string{planv1beta1.DecisionKept: {"member-2", "member-3"}})
	if m := manifestOf(st, "member-2", "ConfigMap", "settings"); m == nil || m.Change != planv1beta1.ChangeUpdate || !strings.Contains(m.Diff, "+  color: green") {
		t.Fatalf("plan: member-2's ConfigMap settings is %+v, want an update to green", m)
	}
	if m := manifestOf(st, "member-3", "ConfigMap", "settings"); m == nil || m.Change != planv1beta1.ChangeUnchanged {
		t.Errorf("plan: member-3's ConfigMap settings is %+v, want Unchanged", m)
	}
	if r := st.Rollout; r == nil || len(r.Waves) != 1 || !slices.Equal(r.Waves[0].Update, []string{"member-2"}) {
		t.Errorf("plan: rollout %+v, want one wave updating member-2", r)
	}
	createOnHub(t, hub, ro.DeepCopy())
	color := func(member, want string) func() error {
		c := memberClient(t, member)
		return func() error {
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "settings"}, cm); err != nil {
				return err
			}
			if cm.Data["color"] != want {
				return fmt.Errorf("%s: color %q, the plan said %q", member, cm.Data["color"], want)
			}
			return nil
		}
	}
	framework.Eventually(t, 2*time.Minute, color("member-2", "green"))
	framework.Consistently(t, 5*time.Second, color("member-3", "blue"))
}

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
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/schedulinggroup"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	os.Exit(testenv.Run(m, testenv.Options{Scheme: Scheme()}, func(e *testenv.Env) error {
		env = e
		return env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterv1beta1.HubNamespace}})
	}))
}

// startHub runs every hub controller against the test API server.
func startHub(t *testing.T) {
	t.Helper()
	startHubWith(t, func(*Options) {})
}

// startHubWith starts the hub as startHub does, with change made to its
// options.
func startHubWith(t *testing.T, change func(*Options)) {
	t.Helper()
	opts := NewOptions()
	opts.ReplicaName = "test-hub"
	opts.TunnelBindAddress = "127.0.0.1:0"
	// No agent confirms removals here: let deleted Works go at once.
	opts.WorkCleanupTimeout = time.Second
	// Fenced placements wait their lease plus this.
	opts.FencingMargin = time.Second
	change(opts)
	env.StartManager(t, func(mgr ctrl.Manager) error { return setupHub(context.Background(), mgr, opts) })
}

// The hub's pipeline turns a placement into one Work per chosen member and, once
// the members report the Work applied and available, reports the placement so.
func TestPipelineFromPlacementToWorkAndBack(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	testenv.ReadyMember(t, c, "alpha", map[string]string{"env": "prod"})
	testenv.ReadyMember(t, c, "beta", map[string]string{"env": "dev"})
	startHub(t)
	stagesBefore := stageCounts(t)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "settings"}, Data: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "app"}},
			Policy: &placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
					{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
				}},
			}}},
		},
	}
	if err := c.Create(ctx, crp); err != nil {
		t.Fatal(err)
	}

	work := &placementv1beta1.Work{}
	workKey := types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace("alpha"), Name: "app-work"}
	testenv.Eventually(t, 30*time.Second, func() error {
		if err := c.Get(ctx, workKey, work); err != nil {
			return err
		}
		if n := len(work.Spec.Workload.Manifests); n != 2 {
			return fmt.Errorf("work has %d manifests, want the namespace and the ConfigMap", n)
		}
		return nil
	})
	if err := c.Get(ctx, types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace("beta"), Name: "app-work"}, &placementv1beta1.Work{}); err == nil {
		t.Fatal("beta (env=dev) got a Work for an env=prod placement")
	}

	// The agent reports the Work applied and available.
	conditions.Set(&work.Status.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, "all applied", work.Generation)
	conditions.Set(&work.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, placementv1beta1.ReasonAvailable, "all available", work.Generation)
	if err := c.Status().Update(ctx, work); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		got := &placementv1beta1.ClusterResourcePlacement{}
		if err := c.Get(ctx, types.NamespacedName{Name: "app"}, got); err != nil {
			return err
		}
		for _, perCluster := range placementv1beta1.PerClusterConditionTypes() {
			typ := placementv1beta1.ClusterResourcePlacementConditionType(perCluster)
			if !conditions.IsCurrentTrue(got.Status.Conditions, typ, got.Generation) {
				return fmt.Errorf("%s: %+v", typ, conditions.Get(got.Status.Conditions, typ))
			}
		}
		if len(got.Status.PlacementStatuses) != 1 || got.Status.PlacementStatuses[0].ClusterName != "alpha" {
			return fmt.Errorf("placement statuses: %+v", got.Status.PlacementStatuses)
		}
		if len(got.Status.SelectedResources) != 2 {
			return fmt.Errorf("selected resources: %+v", got.Status.SelectedResources)
		}
		return nil
	})
	// The placement's way through the pipeline was timed, stage by stage, on
	// its one cluster.
	testenv.Eventually(t, 10*time.Second, func() error {
		after := stageCounts(t)
		for _, st := range []pipeline.Stage{pipeline.StageSnapshot, pipeline.StageScheduled, pipeline.StageBound, pipeline.StageWork,
			pipeline.StageApplied, pipeline.StageAvailable, pipeline.StagePlacement} {
			if after[st] <= stagesBefore[st] {
				return fmt.Errorf("flotilla_placement_stage_seconds{stage=%q} was not observed (count %d before, %d after)", st, stagesBefore[st], after[st])
			}
		}
		return nil
	})

	// An edit of a selected object reaches the Work.
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: "app", Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "v2"
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if err := c.Get(ctx, workKey, work); err != nil {
			return err
		}
		for _, m := range work.Spec.Workload.Manifests {
			if string(m.Raw) != "" && strings.Contains(string(m.Raw), `"v2"`) {
				return nil
			}
		}
		return fmt.Errorf("the Work does not carry the edit yet")
	})
	// Every manifest names the hub, the placement and the new snapshot's index.
	for i, m := range work.Spec.Workload.Manifests {
		var o struct{ Metadata metav1.ObjectMeta }
		if err := json.Unmarshal(m.Raw, &o); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			placementv1beta1.AnnotationHub:           "flotilla-hub",
			placementv1beta1.AnnotationPlacement:     "ClusterResourcePlacement/app",
			placementv1beta1.AnnotationResourceIndex: "1",
		}
		got := map[string]string{}
		for k := range want {
			got[k] = o.Metadata.Annotations[k]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("provenance of manifest %d of the Work (-want +got):\n%s", i, diff)
		}
	}

	// Changing only what the Works carry from the placement (delete strategy, status
	// feedback) reaches the Work, without a new resource snapshot.
	// The controllers write the placement too (status): a conflict is retried
	// on a fresh read, as any client of the API does.
	if err := retry.RetryOnConflict(patientRetry, func() error {
		if err := c.Get(ctx, types.NamespacedName{Name: "app"}, crp); err != nil {
			return err
		}
		crp.Spec.Strategy.DeleteStrategy = &placementv1beta1.DeleteStrategy{PropagationPolicy: placementv1beta1.DeletePropagationPolicyAbandon}
		crp.Spec.StatusFeedback = []placementv1beta1.StatusFeedbackRule{{Version: "v1", Kind: "ConfigMap", JSONPaths: []placementv1beta1.JSONPathRule{{Name: "k", Path: ".data.k"}}}}
		return c.Update(ctx, crp)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if err := c.Get(ctx, workKey, work); err != nil {
			return err
		}
		if ds := work.Spec.DeleteStrategy; ds == nil || ds.PropagationPolicy != placementv1beta1.DeletePropagationPolicyAbandon || len(work.Spec.StatusFeedback) != 1 {
			return fmt.Errorf("the Work has delete strategy %+v and feedback %+v, want Abandon and one rule", ds, work.Spec.StatusFeedback)
		}
		return nil
	})

	// Deleting the placement deletes the Work and, at last, the placement.
	if err := c.Delete(ctx, crp); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if err := c.Get(ctx, workKey, &placementv1beta1.Work{}); err == nil {
			return fmt.Errorf("the Work still exists")
		}
		if err := c.Get(ctx, types.NamespacedName{Name: "app"}, &placementv1beta1.ClusterResourcePlacement{}); err == nil {
			return fmt.Errorf("the placement still exists")
		}
		return nil
	})
}

// Kratix dynamic scheduling: a group of the placement's objects with selectors of
// its own goes where those selectors say, in a Work of its own, with its namespace;
// the rest follows the placement's selectors.
func TestSchedulingGroupGoesWhereItsOwnSelectorsSay(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	testenv.ReadyMember(t, c, "gamma", map[string]string{"suite": "groups", "env": "prod"})
	testenv.ReadyMember(t, c, "delta", map[string]string{"suite": "groups", "env": "dev", "tier": "db"})
	startHub(t)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "grp"}}); err != nil {
		t.Fatal(err)
	}
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "grp", Name: "plain"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "grp", Name: "db-config", Annotations: map[string]string{schedulinggroup.AnnotationGroup: "database"}}},
	} {
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "grp", Annotations: map[string]string{
			schedulinggroup.AnnotationDynamicSelectors: `[{"group":"database","matchLabels":{"suite":"groups","tier":"db"},"source":"ResourceWorkflow"}]`,
		}},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "grp"}},
			Policy: &placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
					{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"suite": "groups", "env": "prod"}}},
				}},
			}}},
		},
	}
	if err := c.Create(ctx, crp); err != nil {
		t.Fatal(err)
	}
	// The database group's Work carries a hash (pipeline.PlacementKey.WorkName).
	dbWork := pipeline.PlacementKey{Name: "grp"}.WorkName("database")
	manifestNames := func(member, work string) func() error {
		return func() error {
			w := &placementv1beta1.Work{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace(member), Name: work}, w); err != nil {
				return err
			}
			var names []string
			for _, m := range w.Spec.Workload.Manifests {
				u := map[string]any{}
				if err := json.Unmarshal(m.Raw, &u); err != nil {
					return err
				}
				names = append(names, u["kind"].(string)+"/"+u["metadata"].(map[string]any)["name"].(string))
			}
			sort.Strings(names)
			want := map[string]string{"grp-work": "ConfigMap/plain,Namespace/grp", dbWork: "ConfigMap/db-config,Namespace/grp"}[work]
			if strings.Join(names, ",") != want {
				return fmt.Errorf("%s on %s holds %v, want %s", work, member, names, want)
			}
			return nil
		}
	}
	testenv.Eventually(t, 30*time.Second, manifestNames("gamma", "grp-work"))
	testenv.Eventually(t, 30*time.Second, manifestNames("delta", dbWork))
	for member, work := range map[string]string{"gamma": dbWork, "delta": "grp-work"} {
		if err := c.Get(ctx, types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace(member), Name: work}, &placementv1beta1.Work{}); err == nil {
			t.Errorf("%s got %s", member, work)
		}
	}
}

// A PickN placement stays where it is when a better cluster appears, until a
// user asks for a rebalance.
func TestRebalanceMovesAPlacementOnlyWhenAsked(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	testenv.ReadyMember(t, c, "r-one", map[string]string{"suite": "rebalance"})
	testenv.ReadyMember(t, c, "r-two", map[string]string{"suite": "rebalance", "fast": "yes"})
	startHub(t)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rb"}}); err != nil {
		t.Fatal(err)
	}
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "rb"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "rb"}},
			Policy: &placementv1beta1.PlacementPolicy{
				PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1),
				Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
						{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"suite": "rebalance"}}},
					}},
					PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PreferredClusterSelector{{
						Weight: 50, Preference: placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fast": "yes"}}},
					}},
				}},
			},
		},
	}
	if err := c.Create(ctx, crp); err != nil {
		t.Fatal(err)
	}
	boundTo := func(want string) func() error {
		return func() error {
			list := &placementv1beta1.ClusterResourceBindingList{}
			if err := c.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: "rb"}); err != nil {
				return err
			}
			var got []string
			for _, b := range list.Items {
				if b.DeletionTimestamp.IsZero() && b.Spec.State != placementv1beta1.BindingStateUnscheduled {
					got = append(got, b.Spec.TargetCluster)
				}
			}
			if len(got) != 1 || got[0] != want {
				return fmt.Errorf("bound to %v, want %s", got, want)
			}
			return nil
		}
	}
	testenv.Eventually(t, 30*time.Second, boundTo("r-two"))

	// r-one becomes the better cluster: the placement stays put.
	relabel := func(name string, mutate func(map[string]string)) {
		mc := &clusterv1beta1.MemberCluster{}
		if err := c.Get(ctx, types.NamespacedName{Name: name}, mc); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(mc.DeepCopy())
		mutate(mc.Labels)
		if err := c.Patch(ctx, mc, patch); err != nil {
			t.Fatal(err)
		}
	}
	relabel("r-one", func(l map[string]string) { l["fast"] = "yes" })
	relabel("r-two", func(l map[string]string) { delete(l, "fast") })
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if err := boundTo("r-two")(); err != nil {
			t.Fatalf("the placement moved on its own: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The user asks for a rebalance: it moves to the better cluster, once.
	if err := c.Get(ctx, types.NamespacedName{Name: "rb"}, crp); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(crp.DeepCopy())
	metav1.SetMetaDataAnnotation(&crp.ObjectMeta, placementv1beta1.AnnotationRebalance, "1")
	if err := c.Patch(ctx, crp, patch); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, boundTo("r-one"))
}

// A member that leaves loses its bindings and Work, then its namespace, and only
// then the MemberCluster goes.
func TestLeavingMemberIsRemovedInOrder(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	testenv.ReadyMember(t, c, "leaver", map[string]string{"suite": "leave"})
	startHub(t)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "lv"}}); err != nil {
		t.Fatal(err)
	}
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "lv"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "lv"}},
			Policy: &placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
					{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"suite": "leave"}}},
				}},
			}}},
		},
	}
	if err := c.Create(ctx, crp); err != nil {
		t.Fatal(err)
	}
	workKey := types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace("leaver"), Name: "lv-work"}
	testenv.Eventually(t, 30*time.Second, func() error { return c.Get(ctx, workKey, &placementv1beta1.Work{}) })
	testenv.Eventually(t, 10*time.Second, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := c.Get(ctx, types.NamespacedName{Name: "leaver"}, mc); err != nil {
			return err
		}
		if len(mc.Finalizers) == 0 {
			return fmt.Errorf("no finalizer on the MemberCluster yet")
		}
		return nil
	})
	if err := c.Delete(ctx, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "leaver"}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, func() error {
		if err := c.Get(ctx, types.NamespacedName{Name: "leaver"}, &clusterv1beta1.MemberCluster{}); err == nil {
			return fmt.Errorf("the MemberCluster still exists")
		}
		if err := c.Get(ctx, workKey, &placementv1beta1.Work{}); err == nil {
			return fmt.Errorf("the Work outlived its member")
		}
		if err := c.Get(ctx, types.NamespacedName{Name: "lv-leaver"}, &placementv1beta1.ClusterResourceBinding{}); err == nil {
			return fmt.Errorf("the binding outlived its member")
		}
		return nil
	})
}

// stageCounts reads how many times each stage of flotilla_placement_stage_seconds
// was observed in this process.
func stageCounts(t *testing.T) map[pipeline.Stage]uint64 {
	t.Helper()
	out := map[pipeline.Stage]uint64{}
	for stage, n := range metricByLabel(t, "flotilla_placement_stage_seconds", "stage", func(m *dto.Metric) float64 {
		return float64(m.GetHistogram().GetSampleCount())
	}) {
		out[pipeline.Stage(stage)] = uint64(n)
	}
	return out
}

// metricByLabel reads the metric family name from the hub's registry: value
// of each of its metrics, by the metric's label.
func metricByLabel(t *testing.T, name, label string, value func(*dto.Metric) float64) map[string]float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					out[l.GetValue()] = value(m)
				}
			}
		}
	}
	return out
}

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
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/analysis"
	"github.com/flotilla-io/flotilla/hub/overrides"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/placement"
	"github.com/flotilla-io/flotilla/hub/resources"
	"github.com/flotilla-io/flotilla/hub/rollout"
	"github.com/flotilla-io/flotilla/hub/scheduler"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
	"github.com/flotilla-io/flotilla/hub/updaterun"
	"github.com/flotilla-io/flotilla/hub/workcleanup"
	"github.com/flotilla-io/flotilla/hub/workgen"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	os.Exit(testenv.Run(m, testenv.Options{}, func(e *testenv.Env) error { env = e; return nil }))
}

// spans times the placements' changes, as in the hub.
var spans = pipeline.NewSpans(logr.Discard())

// runClock is the update-run controller's clock in the hub startHub starts
// (nil: time.Now); a test that sets it resets it when it ends.
var runClock func() time.Time

// startHub runs the placement pipeline (placement, scheduler, rollout, work
// generator, work cleanup) and the update-run controllers against the test API
// server until the test ends, with agent standing in for the members' agents.
func startHub(t *testing.T, agent *memberAgents) {
	t.Helper()
	startHubWithPrometheus(t, agent, nil)
}

// startHubWithPrometheus is startHub with prom running the analyses'
// prometheus checks (nil: none, as a hub without --prometheus-url).
func startHubWithPrometheus(t *testing.T, agent *memberAgents, prom analysis.Prometheus) {
	t.Helper()
	env.StartManager(t, func(mgr ctrl.Manager) error {
		watcher, err := resources.NewWatcher(mgr.GetConfig(), mgr.GetLogger().WithName("resources"), resources.Options{})
		if err != nil {
			return err
		}
		if err := mgr.Add(watcher); err != nil {
			return err
		}
		agent.client = mgr.GetClient()
		controllers := []interface{ SetupWithManager(ctrl.Manager) error }{
			&placement.Reconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder("placement"), Resources: watcher, Spans: spans},
			&scheduler.Reconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Framework: plugins.NewFramework(framework.Options{}), GracefulTimeout: 5 * time.Minute},
			&rollout.Reconciler{Client: mgr.GetClient()},
			&workgen.Reconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()},
			&workcleanup.Reconciler{Client: mgr.GetClient(), Timeout: time.Second},
			&updaterun.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("updaterun"), Prometheus: prom, Now: runClock,
				Spans: spans},
			&updaterun.ExternalReconciler{Client: mgr.GetClient()},
			&overrides.SnapshotReconciler{Client: mgr.GetClient(), Cluster: true},
			&overrides.SnapshotReconciler{Client: mgr.GetClient()},
		}
		for _, c := range controllers {
			if err := c.SetupWithManager(mgr); err != nil {
				return err
			}
		}
		return ctrl.NewControllerManagedBy(mgr).Named("test-member-agents").For(&placementv1beta1.Work{}).Complete(agent)
	})
}

// memberAgents stands in for the agents of the members: it reports every Work
// Applied and, unless its cluster is held, Available, at the Work's generation,
// and, if feedback is set, the manifest conditions it returns for the Work.
type memberAgents struct {
	client   client.Client
	mu       sync.Mutex
	held     map[string]bool
	feedback func(*placementv1beta1.Work) []placementv1beta1.ManifestCondition
}

func newMemberAgents() *memberAgents { return &memberAgents{held: map[string]bool{}} }

// hold makes the cluster's Works not Available (held) or Available again.
func (a *memberAgents) hold(cluster string, held bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.held[cluster] = held
}

func (a *memberAgents) isHeld(cluster string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.held[cluster]
}

func (a *memberAgents) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	w := &placementv1beta1.Work{}
	if err := a.client.Get(ctx, req.NamespacedName, w); err != nil || !w.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster := strings.TrimPrefix(req.Namespace, "flotilla-member-")
	held := a.isHeld(cluster)
	changed := conditions.Set(&w.Status.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, "test agent", w.Generation)
	if held {
		changed = conditions.Set(&w.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionFalse, placementv1beta1.ReasonNotAvailableYet, "held by the test", w.Generation) || changed
	} else {
		changed = conditions.Set(&w.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, placementv1beta1.ReasonAvailable, "test agent", w.Generation) || changed
	}
	if a.feedback != nil {
		if mcs := a.feedback(w); !equality.Semantic.DeepEqual(mcs, w.Status.ManifestConditions) {
			w.Status.ManifestConditions = mcs
			changed = true
		}
	}
	if changed {
		if err := a.client.Status().Update(ctx, w); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	if held {
		// Look again for the release.
		return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
	}
	return ctrl.Result{}, nil
}

// appNamespace creates a namespace with a ConfigMap settings{color}.
func appNamespace(t *testing.T, name, color string) {
	t.Helper()
	testenv.Create(t, env.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	testenv.Create(t, env.Client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "settings"}, Data: map[string]string{"color": color}})
}

func setColor(t *testing.T, namespace, color string) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: namespace, Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["color"] = color
	if err := env.Client.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
}

// externalPlacement creates a PickAll placement of the namespace (clusters
// matched by the label selector) rolled out by staged update runs.
func externalPlacement(t *testing.T, name string, match map[string]string) {
	t.Helper()
	testenv.Create(t, env.Client, &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: name}},
			Policy: &placementv1beta1.PlacementPolicy{
				PlacementType: placementv1beta1.PickAll,
				Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{
						ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: match}}},
					},
				}},
			},
			Strategy: placementv1beta1.RolloutStrategy{Type: placementv1beta1.ExternalRolloutStrategyType},
		},
	})
}

func newRun(name, placement, index, strategy string) *placementv1beta1.ClusterStagedUpdateRun {
	return &placementv1beta1.ClusterStagedUpdateRun{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       placementv1beta1.StagedUpdateRunSpec{PlacementName: placement, ResourceSnapshotIndex: index, StagedUpdateStrategyName: strategy},
	}
}

func getRun(t *testing.T, name string) *placementv1beta1.ClusterStagedUpdateRun {
	t.Helper()
	run := &placementv1beta1.ClusterStagedUpdateRun{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, run); err != nil {
		t.Fatal(err)
	}
	return run
}

// waitForRunCondition waits until the run's condition has the status and reason,
// and returns it.
func waitForRunCondition(t *testing.T, name, typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	testenv.Eventually(t, 30*time.Second, func() error {
		run := &placementv1beta1.ClusterStagedUpdateRun{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, run); err != nil {
			return err
		}
		c := conditions.Get(run.Status.Conditions, typ)
		if c == nil {
			return fmt.Errorf("run %s has no %s condition yet", name, typ)
		}
		if c.Status != status || c.Reason != reason {
			return fmt.Errorf("run %s: %s is %s %s (%s), want %s %s", name, typ, c.Status, c.Reason, c.Message, status, reason)
		}
		if c.ObservedGeneration != run.Generation {
			return fmt.Errorf("run %s: %s observed generation %d, want %d", name, typ, c.ObservedGeneration, run.Generation)
		}
		got = *c
		return nil
	})
	return got
}

// bindingOn returns the placement's binding on the cluster.
func bindingOn(placement, cluster string) (*placementv1beta1.ClusterResourceBinding, error) {
	list := &placementv1beta1.ClusterResourceBindingList{}
	if err := env.Client.List(context.Background(), list, client.MatchingLabels{placementv1beta1.LabelPlacementName: placement}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].Spec.TargetCluster == cluster {
			return &list.Items[i], nil
		}
	}
	return nil, fmt.Errorf("placement %s has no binding on %s", placement, cluster)
}

// colorOn returns the color of the ConfigMap in the placement's Work for the
// cluster, or "" when the cluster has no Work.
func colorOn(placement, cluster string) (string, error) {
	w := &placementv1beta1.Work{}
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace(cluster), Name: workgen.WorkName(placement)}, w)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	for _, m := range w.Spec.Workload.Manifests {
		var obj struct {
			Kind string            `json:"kind"`
			Data map[string]string `json:"data"`
		}
		if err := json.Unmarshal(m.Raw, &obj); err != nil {
			return "", err
		}
		if obj.Kind == "ConfigMap" {
			return obj.Data["color"], nil
		}
	}
	return "", fmt.Errorf("the Work for %s holds no ConfigMap", cluster)
}

// colorsAre returns a check that each cluster's Work holds the color ("" for no
// Work) and its binding is Available at the binding's generation when it has one.
func colorsAre(placement string, want map[string]string) func() error {
	return func() error {
		for cluster, color := range want {
			got, err := colorOn(placement, cluster)
			if err != nil {
				return err
			}
			if got != color {
				return fmt.Errorf("%s has color %q, want %q", cluster, got, color)
			}
			if color == "" {
				continue
			}
			b, err := bindingOn(placement, cluster)
			if err != nil {
				return err
			}
			if !conditions.IsCurrentTrue(b.Status.Conditions, placementv1beta1.ConditionAvailable, b.Generation) {
				return fmt.Errorf("binding on %s is not Available yet", cluster)
			}
		}
		return nil
	}
}

// clusterStatus returns the run's status of the cluster.
func clusterStatus(run *placementv1beta1.ClusterStagedUpdateRun, cluster string) *placementv1beta1.ClusterUpdatingStatus {
	for i := range run.Status.StagesStatus {
		for j := range run.Status.StagesStatus[i].Clusters {
			if c := &run.Status.StagesStatus[i].Clusters[j]; c.ClusterName == cluster {
				return c
			}
		}
	}
	return nil
}

// hasEvent returns an error unless the run has an Event with the reason.
func hasEvent(run, reason string) error {
	list := &eventsv1.EventList{}
	if err := env.Client.List(context.Background(), list); err != nil {
		return err
	}
	for _, e := range list.Items {
		if e.Regarding.Kind == "ClusterStagedUpdateRun" && e.Regarding.Name == run && e.Reason == reason {
			return nil
		}
	}
	return fmt.Errorf("no %s Event on run %s", reason, run)
}

// boundCount is how many times flotilla_placement_stage_seconds observed the
// stage bound.
func boundCount(t *testing.T) uint64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "flotilla_placement_stage_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "stage" && l.GetValue() == string(pipeline.StageBound) {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}

// metricValue returns the value of a counter of the controller-runtime registry,
// with the label result if given.
func metricValue(t *testing.T, name, result string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if result == "" {
				return m.GetCounter().GetValue()
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("metric %s{result=%q} is not registered", name, result)
	return 0
}

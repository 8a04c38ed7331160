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

package eviction_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/eviction"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/placement"
	"github.com/flotilla-io/flotilla/hub/resources"
	"github.com/flotilla-io/flotilla/hub/rollout"
	"github.com/flotilla-io/flotilla/hub/scheduler"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
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

// startControllers runs the eviction controller against the test API server until
// the test ends; with pipeline, the placement pipeline too (placement, scheduler,
// rollout, work generator), so that executed evictions move placements.
func startControllers(t *testing.T, pipeline bool) {
	t.Helper()
	env.StartManager(t, func(mgr ctrl.Manager) error { return setupControllers(mgr, pipeline) })
}

// setupControllers registers the eviction controller and, with pipeline, the
// placement pipeline.
func setupControllers(mgr ctrl.Manager, pipeline bool) error {
	controllers := []interface{ SetupWithManager(ctrl.Manager) error }{
		&eviction.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("eviction"), RetryInterval: time.Second},
	}
	if pipeline {
		watcher, err := resources.NewWatcher(mgr.GetConfig(), mgr.GetLogger().WithName("resources"), resources.Options{})
		if err != nil {
			return err
		}
		if err := mgr.Add(watcher); err != nil {
			return err
		}
		controllers = append(controllers,
			&placement.Reconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder("placement"), Resources: watcher},
			&scheduler.Reconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Framework: plugins.NewFramework(framework.Options{}), GracefulTimeout: 5 * time.Minute},
			&rollout.Reconciler{Client: mgr.GetClient()},
			&workgen.Reconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()},
			// No agent confirms removals here: let deleted Works go at once.
			&workcleanup.Reconciler{Client: mgr.GetClient(), Timeout: time.Second},
		)
	}
	for _, c := range controllers {
		if err := c.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	return nil
}

// newPlacement returns a placement of a namespace with the policy.
func newPlacement(name string, policy *placementv1beta1.PlacementPolicy) *placementv1beta1.ClusterResourcePlacement {
	return &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: name}},
			Policy:            policy,
		},
	}
}

func pickN(n int32) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: &n}
}

func newEviction(name, placement, cluster string) *placementv1beta1.ClusterResourcePlacementEviction {
	return &placementv1beta1.ClusterResourcePlacementEviction{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       placementv1beta1.PlacementEvictionSpec{PlacementName: placement, ClusterName: cluster},
	}
}

// bind creates a Bound binding of placement to cluster, with the Available
// condition True and current when available.
func bind(t *testing.T, placement, cluster string, available bool) {
	t.Helper()
	b := &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{
			Name:   scheduler.BindingName(pipeline.PlacementKey{Name: placement}, "", cluster),
			Labels: map[string]string{placementv1beta1.LabelPlacementName: placement},
		},
		Spec: placementv1beta1.ResourceBindingSpec{
			State:           placementv1beta1.BindingStateBound,
			TargetCluster:   cluster,
			ClusterDecision: placementv1beta1.ClusterDecision{ClusterName: cluster, Selected: true, Reason: "test"},
		},
	}
	testenv.Create(t, env.Client, b)
	if available {
		conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, placementv1beta1.ReasonAvailable, "test", b.Generation)
		if err := env.Client.Status().Update(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
}

// conditionOf returns the eviction's condition of type typ, or an error saying it
// has none yet.
func conditionOf(name, typ string) (*metav1.Condition, error) {
	ev := &placementv1beta1.ClusterResourcePlacementEviction{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, ev); err != nil {
		return nil, err
	}
	c := conditions.Get(ev.Status.Conditions, typ)
	if c == nil {
		return nil, fmt.Errorf("eviction %s has no %s condition yet: %+v", name, typ, ev.Status.Conditions)
	}
	return c, nil
}

// waitForCondition waits until the eviction's condition typ has the status and
// reason, and returns it.
func waitForCondition(t *testing.T, name, typ string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	testenv.Eventually(t, 30*time.Second, func() error {
		c, err := conditionOf(name, typ)
		if err != nil {
			return err
		}
		if c.Status != status || c.Reason != reason {
			return fmt.Errorf("eviction %s: %s is %s %s (%s), want %s %s", name, typ, c.Status, c.Reason, c.Message, status, reason)
		}
		got = c
		return nil
	})
	return got
}

// evictionsCounted returns flotilla_evictions_total{reason="manual"}.
func evictionsCounted(t *testing.T) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "flotilla_evictions_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == eviction.MetricReasonManual {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatal("flotilla_evictions_total{reason=\"manual\"} is not registered")
	return 0
}

// evictedEvent returns an error unless the placement has an Evicted Event.
func evictedEvent(placement string) error {
	list := &eventsv1.EventList{}
	if err := env.Client.List(context.Background(), list); err != nil {
		return err
	}
	for _, e := range list.Items {
		if e.Regarding.Name == placement && e.Reason == placementv1beta1.ReasonEvicted {
			return nil
		}
	}
	return fmt.Errorf("no Evicted Event on placement %s among %d Events", placement, len(list.Items))
}

// bindingName is the name the scheduler gives the binding of a
// ClusterResourcePlacement to a cluster.
func bindingName(placement, cluster string) string {
	return scheduler.BindingName(pipeline.PlacementKey{Name: placement}, "", cluster)
}

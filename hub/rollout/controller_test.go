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
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/rollout"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	os.Exit(testenv.Run(m, testenv.Options{}, func(e *testenv.Env) error { env = e; return nil }))
}

var clusters = []string{"member-1", "member-2", "member-3"}

// startRollout runs the rollout controller alone: the test plays the scheduler
// (it writes the bindings) and the work generator (it reports availability).
func startRollout(t *testing.T) {
	env.StartManager(t, func(mgr ctrl.Manager) error {
		return (&rollout.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})
}

func placementWith(name string, strategy placementv1beta1.RolloutStrategy) *placementv1beta1.ClusterResourcePlacement {
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: name}},
			Strategy:          strategy,
		},
	}
	if err := env.Client.Create(context.Background(), crp); err != nil {
		panic(err)
	}
	return crp
}

func oneAtATime() placementv1beta1.RolloutStrategy {
	return placementv1beta1.RolloutStrategy{Type: placementv1beta1.RollingUpdateRolloutStrategyType, RollingUpdate: &placementv1beta1.RollingUpdateConfig{
		MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxSurge: ptr.To(intstr.FromInt32(0)), UnavailablePeriodSeconds: ptr.To[int32](1)}}
}

// snapshot creates resource snapshot index of the placement as the latest,
// demoting the one before.
func snapshot(t *testing.T, placement string, index int) string {
	t.Helper()
	ctx := context.Background()
	if index > 0 {
		prev := &placementv1beta1.ClusterResourceSnapshot{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: fmt.Sprintf("%s-%d-snapshot", placement, index-1)}, prev); err != nil {
			t.Fatal(err)
		}
		prev.Labels[placementv1beta1.LabelIsLatestSnapshot] = "false"
		if err := env.Client.Update(ctx, prev); err != nil {
			t.Fatal(err)
		}
	}
	s := &placementv1beta1.ClusterResourceSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d-snapshot", placement, index), Labels: map[string]string{
			placementv1beta1.LabelPlacementName: placement, placementv1beta1.LabelIsLatestSnapshot: "true",
			placementv1beta1.LabelResourceIndex: fmt.Sprint(index)},
			Annotations: map[string]string{placementv1beta1.AnnotationNumberOfResourceSnapshots: "1"}},
		Spec: placementv1beta1.ResourceSnapshotSpec{SelectedResources: []placementv1beta1.ResourceContent{{RawExtension: runtime.RawExtension{
			Raw: []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"},"data":{"v":"%d"}}`, index))}}}},
	}
	if err := env.Client.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	return s.Name
}

// scheduled creates a Scheduled binding per cluster, as the scheduler does.
func scheduled(t *testing.T, placement string, clusters ...string) {
	t.Helper()
	for _, c := range clusters {
		b := &placementv1beta1.ClusterResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: placement + "-" + c, Labels: map[string]string{placementv1beta1.LabelPlacementName: placement}},
			Spec:       placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateScheduled, TargetCluster: c},
		}
		if err := env.Client.Create(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
}

func binding(t *testing.T, placement, cluster string) *placementv1beta1.ClusterResourceBinding {
	t.Helper()
	b := &placementv1beta1.ClusterResourceBinding{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: placement + "-" + cluster}, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// report plays the work generator: the binding's resources are applied (or
// not) and available (or not) for its current generation.
func report(t *testing.T, placement, cluster string, applied, available bool, reason string) {
	t.Helper()
	b := binding(t, placement, cluster)
	own := pipeline.OwnConditions(b.Status.Conditions, placementv1beta1.ConditionWorkSynchronized, placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable)
	conditions.Set(&own, placementv1beta1.ConditionWorkSynchronized, metav1.ConditionTrue, placementv1beta1.ReasonWorkSynchronized, "ok", b.Generation)
	st := func(ok bool) metav1.ConditionStatus {
		if ok {
			return metav1.ConditionTrue
		}
		return metav1.ConditionFalse
	}
	conditions.Set(&own, placementv1beta1.ConditionApplied, st(applied), reason, "reported by the test", b.Generation)
	conditions.Set(&own, placementv1beta1.ConditionAvailable, st(available), reason, "reported by the test", b.Generation)
	if err := pipeline.ApplyBindingStatus(context.Background(), env.Client, b, pipeline.ManagerWorkGenerator,
		[]string{placementv1beta1.ConditionWorkSynchronized, placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable},
		pipeline.BindingStatus{Conditions: own}); err != nil {
		t.Fatal(err)
	}
}

// onSnapshot returns a check that exactly the given clusters are bound to snap.
func onSnapshot(t *testing.T, placement, snap string, want ...string) func() error {
	return func() error {
		var got []string
		for _, c := range clusters {
			b := &placementv1beta1.ClusterResourceBinding{}
			if err := env.Client.Get(context.Background(), types.NamespacedName{Name: placement + "-" + c}, b); err != nil {
				continue
			}
			if b.Spec.State == placementv1beta1.BindingStateBound && b.Spec.ResourceSnapshotName == snap {
				got = append(got, c)
			}
		}
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Errorf("bound to %s: [%s], want [%s]", snap, strings.Join(got, ","), strings.Join(want, ","))
		}
		return nil
	}
}

// consistently fails the test if check fails at any time during d.
func consistently(t *testing.T, d time.Duration, check func() error) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if err := check(); err != nil {
			t.Fatal(err)
		}
	}
}

func rolloutStarted(t *testing.T, placement, cluster string) *metav1.Condition {
	b := binding(t, placement, cluster)
	c := conditions.Get(b.Status.Conditions, placementv1beta1.ConditionRolloutStarted)
	if c == nil || c.ObservedGeneration != b.Generation {
		return nil
	}
	return c
}

// availableEverywhere makes a one-at-a-time placement whose index 0 is bound
// and available on every cluster, and returns that snapshot's name.
func availableEverywhere(t *testing.T, p string) string {
	t.Helper()
	placementWith(p, oneAtATime())
	v0 := snapshot(t, p, 0)
	scheduled(t, p, clusters...)
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v0, clusters...))
	for _, c := range clusters {
		report(t, p, c, true, true, placementv1beta1.ReasonAvailable)
	}
	return v0
}

// With maxUnavailable 1 and maxSurge 0, a new snapshot reaches one cluster at a
// time, each after the one before is available; the others say who they wait for.
func TestRollingUpdateMovesOneClusterAtATime(t *testing.T) {
	const p = "waves"
	startRollout(t)
	// A new placement is bound everywhere at once: nothing is on the clusters yet.
	availableEverywhere(t, p)

	v1 := snapshot(t, p, 1)
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v1, "member-1"))
	testenv.Eventually(t, 20*time.Second, func() error {
		for _, c := range []string{"member-2", "member-3"} {
			rs := rolloutStarted(t, p, c)
			if rs == nil || rs.Status != metav1.ConditionFalse || !strings.Contains(rs.Message, "waiting for member-1") {
				return fmt.Errorf("%s RolloutStarted = %+v, want False naming member-1", c, rs)
			}
		}
		return nil
	})
	// Nothing else moves while member-1 is not available.
	consistently(t, 2*time.Second, onSnapshot(t, p, v1, "member-1"))
	report(t, p, "member-1", true, true, "Available")
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v1, "member-1", "member-2"))
	report(t, p, "member-2", true, true, "Available")
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v1, clusters...))
	report(t, p, "member-3", true, true, "Available")
	testenv.Eventually(t, 20*time.Second, func() error {
		for _, c := range clusters {
			if rs := rolloutStarted(t, p, c); rs == nil || rs.Status != metav1.ConditionTrue {
				return fmt.Errorf("%s RolloutStarted = %+v, want True", c, rs)
			}
		}
		return nil
	})
}

// A cluster whose apply fails holds the rollout, and the others say so.
func TestFailedApplyHoldsTheRollout(t *testing.T) {
	const p = "held"
	startRollout(t)
	v0 := availableEverywhere(t, p)
	v1 := snapshot(t, p, 1)
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v1, "member-1"))
	report(t, p, "member-1", false, false, placementv1beta1.ReasonApplyFailed)
	testenv.Eventually(t, 20*time.Second, func() error {
		rs := rolloutStarted(t, p, "member-2")
		if rs == nil || rs.Status != metav1.ConditionFalse || !strings.Contains(rs.Message, "member-1 (WorkSynchronized") && !strings.Contains(rs.Message, "member-1 (Applied=False ApplyFailed") {
			return fmt.Errorf("member-2 RolloutStarted = %+v, want False naming member-1's failed apply", rs)
		}
		return nil
	})
	consistently(t, 2*time.Second, onSnapshot(t, p, v0, "member-2", "member-3"))
}

// Resources the agent cannot track count as available unavailablePeriodSeconds
// after they were applied.
func TestNotTrackableResourcesCountAfterTheUnavailablePeriod(t *testing.T) {
	const p = "untracked"
	startRollout(t)
	availableEverywhere(t, p)
	v1 := snapshot(t, p, 1)
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v1, "member-1"))
	report(t, p, "member-1", true, true, placementv1beta1.ReasonNotTrackable)
	// unavailablePeriodSeconds is 1: member-2 follows without any other event.
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v1, "member-1", "member-2"))
}

// A placement with strategy type External is left alone: no binding moves and
// no RolloutStarted is written (staged update runs do both).
func TestExternalStrategyIsLeftAlone(t *testing.T) {
	const p = "external"
	startRollout(t)
	placementWith(p, placementv1beta1.RolloutStrategy{Type: placementv1beta1.ExternalRolloutStrategyType})
	snapshot(t, p, 0)
	scheduled(t, p, clusters...)
	consistently(t, 2*time.Second, func() error {
		for _, c := range clusters {
			b := binding(t, p, c)
			if b.Spec.State != placementv1beta1.BindingStateScheduled || b.Spec.ResourceSnapshotName != "" {
				return fmt.Errorf("%s was moved: %+v", c, b.Spec)
			}
			if rs := conditions.Get(b.Status.Conditions, placementv1beta1.ConditionRolloutStarted); rs != nil {
				return fmt.Errorf("%s has RolloutStarted %+v", c, rs)
			}
		}
		return nil
	})
}

// An Unscheduled binding is removed within maxUnavailable: at once when it
// never held resources, and only while enough clusters stay available otherwise.
func TestUnscheduledBindingsAreRemovedWithinTheBudget(t *testing.T) {
	const p = "shrink"
	startRollout(t)
	placementWith(p, oneAtATime())
	v0 := snapshot(t, p, 0)
	scheduled(t, p, clusters...)
	testenv.Eventually(t, 20*time.Second, onSnapshot(t, p, v0, clusters...))
	report(t, p, "member-1", true, false, placementv1beta1.ReasonNotAvailableYet)
	report(t, p, "member-2", true, true, placementv1beta1.ReasonAvailable)
	report(t, p, "member-3", true, true, placementv1beta1.ReasonAvailable)
	// The scheduler drops member-3: target 2, maxUnavailable 1, so one must stay
	// available — member-2, while member-1 is not.
	b := binding(t, p, "member-3")
	b.Spec.State = placementv1beta1.BindingStateUnscheduled
	if err := env.Client.Update(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, func() error {
		err := env.Client.Get(context.Background(), types.NamespacedName{Name: p + "-member-3"}, &placementv1beta1.ClusterResourceBinding{})
		if err == nil {
			return fmt.Errorf("the unscheduled binding still exists")
		}
		return nil
	})
}

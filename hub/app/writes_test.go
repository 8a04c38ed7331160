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
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// statusChanges records, per binding, each change of its status the API server
// made, and every condition whose lastTransitionTime moved while its status
// stayed: a write from a stale read.
type statusChanges struct {
	mu      sync.Mutex
	last    map[string]placementv1beta1.ResourceBindingStatus
	changes map[string]int
	moved   []string
}

func (s *statusChanges) observe(b *placementv1beta1.ClusterResourceBinding) {
	s.mu.Lock()
	defer s.mu.Unlock()
	was, seen := s.last[b.Name]
	s.last[b.Name] = *b.Status.DeepCopy()
	if !seen || equality.Semantic.DeepEqual(was, b.Status) {
		if !seen && len(b.Status.Conditions) > 0 {
			s.changes[b.Name]++
		}
		return
	}
	s.changes[b.Name]++
	for _, c := range b.Status.Conditions {
		if old := conditions.Get(was.Conditions, c.Type); old != nil && old.Status == c.Status && !old.LastTransitionTime.Equal(&c.LastTransitionTime) {
			s.moved = append(s.moved, fmt.Sprintf("%s: %s stayed %s but its lastTransitionTime moved from %s to %s (reason %s, observedGeneration %d -> %d)",
				b.Name, c.Type, c.Status, old.LastTransitionTime.Format(time.RFC3339), c.LastTransitionTime.Format(time.RFC3339), c.Reason, old.ObservedGeneration, c.ObservedGeneration))
		}
	}
}

// Each controller a placement passes through writes a binding's status only
// when what it says changes, however far behind the cache is: the rollout once
// (RolloutStarted), the work generator once, for the Work it wrote and the
// agent's report on it together (it holds the write for the report,
// --work-report-wait, long here so that the test's reports always come in
// time). The scheduler, which created the binding for a picked cluster, has
// nothing to add (its Scheduled condition comes only with a misplacement or an
// eviction). A write from a stale read would be a third, and moves a
// transition time without a transition.
func TestEachBindingStatusIsWrittenOnlyWhenItChanges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := env.Client
	members := []string{"writes-1", "writes-2", "writes-3", "writes-4"}
	for _, m := range members {
		testenv.ReadyMember(t, c, m, map[string]string{"writes": "yes"})
	}
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &placementv1beta1.ClusterResourceBindingList{},
		client.MatchingLabels{placementv1beta1.LabelPlacementName: "writes"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	seen := &statusChanges{last: map[string]placementv1beta1.ResourceBindingStatus{}, changes: map[string]int{}}
	go func() {
		for ev := range w.ResultChan() {
			if b, ok := ev.Object.(*placementv1beta1.ClusterResourceBinding); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				seen.observe(b)
			}
		}
	}()
	startHubWith(t, func(o *Options) { o.WorkReportWait = time.Minute })
	heldBefore := reportHolds(t)

	testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "writes"}})
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "writes"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "writes"}},
			Policy: &placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
					{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"writes": "yes"}}},
				}},
			}}},
		},
	}
	testenv.Create(t, c, crp)

	// Every member's Work is written; then its agent reports it applied and
	// available.
	for _, m := range members {
		key := types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace(m), Name: "writes-work"}
		work := &placementv1beta1.Work{}
		testenv.Eventually(t, 30*time.Second, func() error { return c.Get(ctx, key, work) })
		if err := retry.RetryOnConflict(patientRetry, func() error {
			if err := c.Get(ctx, key, work); err != nil {
				return err
			}
			conditions.Set(&work.Status.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, "all applied", work.Generation)
			conditions.Set(&work.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, placementv1beta1.ReasonAvailable, "all available", work.Generation)
			return c.Status().Update(ctx, work)
		}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		got := &placementv1beta1.ClusterResourcePlacement{}
		if err := c.Get(ctx, types.NamespacedName{Name: "writes"}, got); err != nil {
			return err
		}
		typ := placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionAvailable)
		if !conditions.IsCurrentTrue(got.Status.Conditions, typ, got.Generation) || len(got.Status.PlacementStatuses) != len(members) {
			return fmt.Errorf("not Available on %d members yet: %+v", len(members), conditions.Get(got.Status.Conditions, typ))
		}
		return nil
	})

	check := func() error {
		seen.mu.Lock()
		defer seen.mu.Unlock()
		if len(seen.moved) > 0 {
			return fmt.Errorf("a condition's transition time moved without a transition:\n%v", seen.moved)
		}
		if len(seen.changes) != len(members) {
			return fmt.Errorf("saw the status of %d bindings, want %d: %v", len(seen.changes), len(members), seen.changes)
		}
		for name, n := range seen.changes {
			if n != 2 {
				return fmt.Errorf("binding %s's status changed %d times, want 2 (RolloutStarted; the Work written and reported): %v", name, n, seen.changes)
			}
			if c := conditions.Get(seen.last[name].Conditions, placementv1beta1.ConditionScheduled); c != nil {
				return fmt.Errorf("binding %s of a picked cluster has a Scheduled condition: %+v", name, c)
			}
		}
		return nil
	}
	testenv.Eventually(t, 10*time.Second, check)
	// And nothing writes it again once the placement is Available.
	testenv.Consistently(t, 2*time.Second, check)
	if got := reportHolds(t)[holdReported] - heldBefore[holdReported]; got != float64(len(members)) {
		t.Errorf("flotilla_workgen_report_holds_total{outcome=%q} rose by %g, want %d", holdReported, got, len(members))
	}

	// The placement says per cluster that it was scheduled, and why: the
	// binding's cluster decision.
	got := &placementv1beta1.ClusterResourcePlacement{}
	if err := c.Get(ctx, types.NamespacedName{Name: "writes"}, got); err != nil {
		t.Fatal(err)
	}
	for _, pcs := range got.Status.PlacementStatuses {
		if c := conditions.Get(pcs.Conditions, placementv1beta1.ConditionScheduled); c == nil || c.Status != metav1.ConditionTrue || c.Reason != placementv1beta1.ReasonScheduled || c.Message == "" {
			t.Errorf("%s: per-cluster Scheduled %+v, want True with the scheduler's reasons", pcs.ClusterName, c)
		}
	}
}

// The pipeline's client reads what it just wrote: a read from the cache right
// after a status write returns the written version, never the one before (the
// manager's own client often does: its cache learns of the write a moment
// later, from its watch).
func TestThePipelineClientReadsItsOwnWrites(t *testing.T) {
	ctx := context.Background()
	var pc client.Client
	env.StartManager(t, func(mgr ctrl.Manager) error {
		pc = newPipelineClient(mgr)
		return nil
	})
	b := &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "read-your-writes"},
		Spec:       placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateScheduled, TargetCluster: "nowhere"},
	}
	testenv.Create(t, env.Client, b)
	key := client.ObjectKeyFromObject(b)
	testenv.Eventually(t, 10*time.Second, func() error { return pc.Get(ctx, key, &placementv1beta1.ClusterResourceBinding{}) })
	for i := range 20 {
		got := &placementv1beta1.ClusterResourceBinding{}
		if err := pc.Get(ctx, key, got); err != nil {
			t.Fatal(err)
		}
		own := pipeline.OwnConditions(got.Status.Conditions, placementv1beta1.ConditionScheduled)
		conditions.Set(&own, placementv1beta1.ConditionScheduled, metav1.ConditionTrue, placementv1beta1.ReasonScheduled, fmt.Sprintf("write %d", i), got.Generation)
		if err := pipeline.ApplyBindingStatus(ctx, pc, got, pipeline.ManagerScheduler, []string{placementv1beta1.ConditionScheduled},
			pipeline.BindingStatus{Conditions: own}); err != nil {
			t.Fatal(err)
		}
		written := got.ResourceVersion
		read := &placementv1beta1.ClusterResourceBinding{}
		if err := pc.Get(ctx, key, read); err != nil {
			t.Fatal(err)
		}
		if c := conditions.Get(read.Status.Conditions, placementv1beta1.ConditionScheduled); read.ResourceVersion != written || c == nil || c.Message != fmt.Sprintf("write %d", i) {
			t.Fatalf("write %d: read resourceVersion %s with Scheduled %+v right after writing resourceVersion %s", i, read.ResourceVersion, c, written)
		}
	}
}

// The work generator holds a binding's status write for the agent's report on
// a Work it wrote only as long as --work-report-wait says: with no report, the
// binding says the Work is written, and the agent's report is pending, once the
// wait is over, and not before.
func TestAStatusWaitsForTheAgentsReportOnlyAsLongAsAsked(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := env.Client
	const wait = 3 * time.Second
	testenv.ReadyMember(t, c, "hold-1", map[string]string{"hold": "yes"})
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	works, err := wc.Watch(ctx, &placementv1beta1.WorkList{}, client.InNamespace(clusterv1beta1.MemberNamespace("hold-1")))
	if err != nil {
		t.Fatal(err)
	}
	defer works.Stop()
	bindings, err := wc.Watch(ctx, &placementv1beta1.ClusterResourceBindingList{}, client.MatchingLabels{placementv1beta1.LabelPlacementName: "hold"})
	if err != nil {
		t.Fatal(err)
	}
	defer bindings.Stop()
	var mu sync.Mutex
	var workAt, syncedAt time.Time
	var synced *placementv1beta1.ClusterResourceBinding
	go func() {
		for ev := range works.ResultChan() {
			if ev.Type == watch.Added {
				mu.Lock()
				workAt = time.Now()
				mu.Unlock()
			}
		}
	}()
	go func() {
		for ev := range bindings.ResultChan() {
			b, ok := ev.Object.(*placementv1beta1.ClusterResourceBinding)
			if !ok || !conditions.IsCurrentTrue(b.Status.Conditions, placementv1beta1.ConditionWorkSynchronized, b.Generation) {
				continue
			}
			mu.Lock()
			if synced == nil {
				syncedAt, synced = time.Now(), b
			}
			mu.Unlock()
		}
	}()
	startHubWith(t, func(o *Options) { o.WorkReportWait = wait })
	heldBefore := reportHolds(t)

	testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hold"}})
	testenv.Create(t, c, &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "hold"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "hold"}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"hold-1"}},
		},
	})
	testenv.Eventually(t, 30*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		if workAt.IsZero() || synced == nil {
			return fmt.Errorf("the Work seen at %v; WorkSynchronized seen: %v", workAt, synced != nil)
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	// The watches see both writes with the same delay; a second of the wait
	// is allowed for it.
	if held := syncedAt.Sub(workAt); held < wait-time.Second {
		t.Errorf("the binding said WorkSynchronized %s after its Work was written, want no sooner than the wait (%s) less a second", held, wait)
	}
	if c := conditions.Get(synced.Status.Conditions, placementv1beta1.ConditionApplied); c == nil || c.Status != metav1.ConditionUnknown {
		t.Errorf("Applied without the agent's report: %+v, want Unknown", c)
	}
	if got := reportHolds(t)[holdExpired] - heldBefore[holdExpired]; got != 1 {
		t.Errorf("flotilla_workgen_report_holds_total{outcome=%q} rose by %g, want 1", holdExpired, got)
	}
}

// The outcomes of flotilla_workgen_report_holds_total.
const (
	holdReported = "reported"
	holdExpired  = "expired"
)

// reportHolds reads flotilla_workgen_report_holds_total by outcome.
func reportHolds(t *testing.T) map[string]float64 {
	t.Helper()
	return metricByLabel(t, "flotilla_workgen_report_holds_total", "outcome", func(m *dto.Metric) float64 { return m.GetCounter().GetValue() })
}

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

package cli

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/eviction"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// startEvictionController runs the eviction controller alone: evictions execute,
// but nothing moves placements.
func startEvictionController(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)}, // other tests run one too
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &eviction.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), RetryInterval: 200 * time.Millisecond}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// placedOn creates a placement with the policy and an available Bound binding to
// each cluster.
func placedOn(t *testing.T, name string, policy *placementv1beta1.PlacementPolicy, clusters ...string) {
	t.Helper()
	ctx := context.Background()
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: name}},
			Policy:            policy,
			// Not ours to schedule: no scheduler writes bindings for it in other tests.
			SchedulerName: "test",
		},
	}
	if err := env.Client.Create(ctx, crp); err != nil {
		t.Fatal(err)
	}
	for _, c := range clusters {
		b := &placementv1beta1.ClusterResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-" + c, Labels: map[string]string{placementv1beta1.LabelPlacementName: name}},
			Spec: placementv1beta1.ResourceBindingSpec{
				State: placementv1beta1.BindingStateBound, TargetCluster: c,
				ClusterDecision: placementv1beta1.ClusterDecision{ClusterName: c, Selected: true, Reason: "test"},
			},
		}
		if err := env.Client.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
		conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, placementv1beta1.ReasonAvailable, "test", b.Generation)
		if err := env.Client.Status().Update(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
}

func cordonTaints(t *testing.T, cluster string) int {
	t.Helper()
	mc := &clusterv1beta1.MemberCluster{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: cluster}, mc); err != nil {
		t.Fatal(err)
	}
	return len(slices.DeleteFunc(slices.Clone(mc.Spec.Taints), func(tt clusterv1beta1.Taint) bool { return !isCordonTaint(tt) }))
}

func drainEvictions(t *testing.T, cluster string) []string {
	t.Helper()
	list := &placementv1beta1.ClusterResourcePlacementEvictionList{}
	if err := env.Client.List(context.Background(), list, client.MatchingLabels{clusterv1beta1.LabelDrained: cluster}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		if ev.DeletionTimestamp.IsZero() {
			out = append(out, ev.Spec.PlacementName)
		}
	}
	slices.Sort(out)
	return out
}

func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(out, l+"\n") {
			t.Errorf("output lacks %q:\n%s", l, out)
		}
	}
}

func TestCordonDrainUncordon(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"drain-1", "drain-2"} {
		if err := env.Client.Create(ctx, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	pickN := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1)}
	placedOn(t, "drain-n", pickN, "drain-1")
	placedOn(t, "drain-all", nil, "drain-1", "drain-2")
	placedOn(t, "drain-fixed", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"drain-1"}}, "drain-1")
	placedOn(t, "drain-budget", pickN, "drain-1")
	placedOn(t, "drain-elsewhere", nil, "drain-2")
	minOne := intstr.FromInt32(1)
	budget := &placementv1beta1.ClusterResourcePlacementDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "drain-budget"},
		Spec:       placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: &minOne},
	}
	if err := env.Client.Create(ctx, budget); err != nil {
		t.Fatal(err)
	}
	startEvictionController(t)
	var out bytes.Buffer
	d := &drainer{c: env.Client, out: &out, interval: 200 * time.Millisecond}

	t.Run("cordon taints the cluster once", func(t *testing.T) {
		out.Reset()
		for range 2 {
			if err := d.cordon(ctx, "drain-1"); err != nil {
				t.Fatal(err)
			}
		}
		wantLines(t, out.String(), "member cluster drain-1 cordoned: no new placements go there", "member cluster drain-1 is already cordoned")
		if n := cordonTaints(t, "drain-1"); n != 1 {
			t.Errorf("drain-1 has %d cordon taints, want 1", n)
		}
	})

	t.Run("cordon of a cluster that does not exist fails in one line", func(t *testing.T) {
		err := d.cordon(ctx, "no-such-cluster")
		if err == nil || err.Error() != "member cluster no-such-cluster not found" {
			t.Errorf("cordon() = %v", err)
		}
	})

	t.Run("drain evicts every placement but PickFixed and reports the one its budget blocks", func(t *testing.T) {
		out.Reset()
		err := d.drain(ctx, "drain-1", 3*time.Second)
		want := "drain of member cluster drain-1 timed out after 3s: 1 placement still blocked by a disruption budget: drain-budget"
		if err == nil || err.Error() != want {
			t.Fatalf("drain() = %v, want %q", err, want)
		}
		wantLines(t, out.String(),
			"member cluster drain-1 is already cordoned",
			"skipping placement drain-fixed: PickFixed placements are never moved; change its clusterNames instead",
			"evicting placement drain-n from drain-1 (ClusterResourcePlacementEviction drain-drain-1-drain-n)",
			"placement drain-n evicted from drain-1",
			"placement drain-all evicted from drain-1",
			"placement drain-budget blocked by its disruption budget: evicting drain-1 would leave 0 of 1 cluster available; the budget requires minAvailable 1",
		)
		if diff := slices.Compare([]string{"drain-all", "drain-budget", "drain-n"}, drainEvictions(t, "drain-1")); diff != 0 {
			t.Errorf("drain evictions = %v", drainEvictions(t, "drain-1"))
		}
	})

	t.Run("drain again, once the budget allows it, completes", func(t *testing.T) {
		if err := env.Client.Delete(ctx, budget); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		if err := d.drain(ctx, "drain-1", 30*time.Second); err != nil {
			t.Fatalf("drain() = %v\n%s", err, out.String())
		}
		wantLines(t, out.String(), "placement drain-budget evicted from drain-1", "member cluster drain-1 drained: 3 placements evicted")
	})

	t.Run("uncordon removes the taint and the drain's evictions", func(t *testing.T) {
		out.Reset()
		if err := d.uncordon(ctx, "drain-1"); err != nil {
			t.Fatal(err)
		}
		if err := d.uncordon(ctx, "drain-1"); err != nil {
			t.Fatal(err)
		}
		wantLines(t, out.String(),
			"member cluster drain-1 uncordoned; deleted 3 drain evictions: placements may come back",
			"member cluster drain-1 is not cordoned")
		if n := cordonTaints(t, "drain-1"); n != 0 {
			t.Errorf("drain-1 has %d cordon taints, want 0", n)
		}
		testenv.Eventually(t, 10*time.Second, func() error {
			if left := drainEvictions(t, "drain-1"); len(left) > 0 {
				return fmt.Errorf("drain evictions left: %v", left)
			}
			return nil
		})
	})

	t.Run("drain of a cluster without placements is done at once", func(t *testing.T) {
		if err := env.Client.Create(ctx, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "drain-empty"}}); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		if err := d.drain(ctx, "drain-empty", time.Second); err != nil {
			t.Fatal(err)
		}
		wantLines(t, out.String(), "member cluster drain-empty drained: no placement to evict")
	})
}

func TestDrainEvictionName(t *testing.T) {
	if got := DrainEvictionName("member-2", "app"); got != "drain-member-2-app" {
		t.Errorf("DrainEvictionName() = %q", got)
	}
	long := DrainEvictionName("member-2", strings.Repeat("a", 250))
	if len(long) != 253 || !strings.HasPrefix(long, "drain-member-2-aaa") {
		t.Errorf("DrainEvictionName(long) = %q (%d chars), want 253 chars", long, len(long))
	}
	if other := DrainEvictionName("member-2", strings.Repeat("a", 249)+"b"); other == long {
		t.Errorf("two long placement names share the eviction name %q", long)
	}
}

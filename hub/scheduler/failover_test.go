package scheduler

import (
	"context"
	"testing"
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

func boundTo(cluster string, available bool) placementv1beta1.ClusterResourceBinding {
	b := placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "p-" + cluster, Generation: 1},
		Spec:       placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateBound, TargetCluster: cluster},
	}
	if available {
		conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, "Available", "", 1)
	}
	return b
}

func connected(mc clusterv1beta1.MemberCluster, status metav1.ConditionStatus) clusterv1beta1.MemberCluster {
	conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, status, "x", "", 1)
	return mc
}

func pickOne() *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1)}
}

func TestApplyTaints(t *testing.T) {
	now := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	crp := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	lost := connected(clusterWithNoExecute("m1", clusterv1beta1.TaintUnreachable, now.Add(-2*time.Minute)), metav1.ConditionFalse)
	up := func(name string) clusterv1beta1.MemberCluster {
		return connected(clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.ConditionTrue)
	}
	down := func(name string) clusterv1beta1.MemberCluster {
		return connected(clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.ConditionFalse)
	}
	for _, tc := range []struct {
		name         string
		limiter      *rate.Limiter
		clusters     []clusterv1beta1.MemberCluster
		wantExcluded bool
		wantRecheck  time.Duration
	}{
		{"an expired toleration excludes the lost cluster", rate.NewLimiter(1, 1), []clusterv1beta1.MemberCluster{lost, up("m2"), up("m3")}, true, 0},
		{"the rate limit postpones an eviction", rate.NewLimiter(0, 0), []clusterv1beta1.MemberCluster{lost, up("m2"), up("m3")}, false, time.Second},
		{"most of the fleet unreachable pauses evictions", rate.NewLimiter(1, 1), []clusterv1beta1.MemberCluster{lost, down("m2"), down("m3"), up("m4")}, false, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFailover(FailoverOptions{Limiter: tc.limiter})
			in := &framework.CycleInput{Policy: pickOne(), Clusters: tc.clusters, Bindings: []placementv1beta1.ClusterResourceBinding{boundTo("m1", true)}, Now: now}
			_, recheck := f.applyTaints(context.Background(), crp, in)
			if _, got := in.ExcludedClusters["m1"]; got != tc.wantExcluded {
				t.Errorf("excluded = %v (%v), want %v", got, in.ExcludedClusters, tc.wantExcluded)
			}
			if recheck != tc.wantRecheck {
				t.Errorf("recheck after %s, want %s", recheck, tc.wantRecheck)
			}
		})
	}

	// An eviction already counted costs no second token.
	f := NewFailover(FailoverOptions{Limiter: rate.NewLimiter(0, 1)})
	for i := 0; i < 2; i++ {
		in := &framework.CycleInput{Policy: pickOne(), Clusters: []clusterv1beta1.MemberCluster{lost, up("m2"), up("m3")},
			Bindings: []placementv1beta1.ClusterResourceBinding{boundTo("m1", true)}, Now: now}
		f.applyTaints(context.Background(), crp, in)
		if _, ok := in.ExcludedClusters["m1"]; !ok {
			t.Fatalf("cycle %d: the eviction was not kept", i+1)
		}
	}
}

func TestHoldEvictedUntilTheReplacementIsAvailable(t *testing.T) {
	now := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	crp := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	d := NoExecuteDecision{Evict: map[string]TaintEviction{"m1": {Reason: "taint", Since: now.Add(-time.Minute), TaintedAt: now.Add(-2 * time.Minute)}}}
	res := framework.CycleResult{Selected: []string{"m2"}, Unschedule: []string{"m1"}}
	f := NewFailover(FailoverOptions{GracefulTimeout: 5 * time.Minute})
	for _, tc := range []struct {
		name     string
		bindings []placementv1beta1.ClusterResourceBinding
		now      time.Time
		wantHeld bool
	}{
		{"kept while the replacement has no binding yet", []placementv1beta1.ClusterResourceBinding{boundTo("m1", true)}, now, true},
		{"kept while the replacement is not available", []placementv1beta1.ClusterResourceBinding{boundTo("m1", true), boundTo("m2", false)}, now, true},
		{"released once the replacement is available", []placementv1beta1.ClusterResourceBinding{boundTo("m1", true), boundTo("m2", true)}, now, false},
		{"released after the graceful timeout", []placementv1beta1.ClusterResourceBinding{boundTo("m1", true), boundTo("m2", false)}, now.Add(5 * time.Minute), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held := f.holdEvicted(crp, framework.CycleInput{Bindings: tc.bindings, Now: tc.now}, res, d)
			if _, got := held["m1"]; got != tc.wantHeld {
				t.Errorf("held = %v, want %v", held, tc.wantHeld)
			}
		})
	}
}

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

package failover_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/failover"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	os.Exit(testenv.Run(m, testenv.Options{}, func(e *testenv.Env) error { env = e; return nil }))
}

func startFailover(t *testing.T, limiter *rate.Limiter) {
	env.StartManager(t, func(mgr ctrl.Manager) error {
		if err := pipeline.SetupIndexes(mgr); err != nil {
			return err
		}
		return (&failover.Reconciler{Client: mgr.GetClient(), DefaultTolerationSeconds: 5, Limiter: limiter}).SetupWithManager(mgr)
	})
}

// member creates a MemberCluster, connected or not, with a NoExecute taint
// added an hour ago when tainted.
func member(t *testing.T, name string, connected, tainted bool) {
	t.Helper()
	ctx := context.Background()
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if tainted {
		mc.Spec.Taints = []clusterv1beta1.Taint{{Key: "drain", Effect: clusterv1beta1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: time.Now().Add(-time.Hour)}}}
	}
	if err := env.Client.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	status := metav1.ConditionTrue
	if !connected {
		status = metav1.ConditionFalse
	}
	for _, typ := range []string{clusterv1beta1.ConditionJoined, clusterv1beta1.ConditionHealthy} {
		conditions.Set(&mc.Status.Conditions, typ, metav1.ConditionTrue, typ, "test", mc.Generation)
	}
	conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, status, "Test", "test", mc.Generation)
	if err := env.Client.Status().Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
}

// pickOneOn creates a PickN placement of one cluster, bound to cluster.
func pickOneOn(t *testing.T, name, cluster string) {
	t.Helper()
	ctx := context.Background()
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: name}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1)},
		},
	}
	if err := env.Client.Create(ctx, crp); err != nil {
		t.Fatal(err)
	}
	b := &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + cluster, Labels: map[string]string{placementv1beta1.LabelPlacementName: name}},
		Spec:       placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateBound, TargetCluster: cluster},
	}
	if err := env.Client.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
}

func evictionRequested(name string, want metav1.ConditionStatus, reason string) func() error {
	return func() error {
		b := &placementv1beta1.ClusterResourceBinding{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, b); err != nil {
			return err
		}
		c := conditions.Get(b.Status.Conditions, placementv1beta1.ConditionEvictionRequested)
		if c == nil || c.Status != want || c.Reason != reason {
			return fmt.Errorf("EvictionRequested = %+v, want %s %s", c, want, reason)
		}
		return nil
	}
}

// An expired toleration makes the failover controller ask, on the binding,
// for the placement to leave; it writes nothing else.
func TestExpiredTolerationRequestsAnEviction(t *testing.T) {
	member(t, "drained", true, true)
	startFailover(t, rate.NewLimiter(1, 10))
	pickOneOn(t, "evicted", "drained")
	testenv.Eventually(t, 20*time.Second, evictionRequested("evicted-drained", metav1.ConditionTrue, placementv1beta1.ReasonTaintNotTolerated))
	b := &placementv1beta1.ClusterResourceBinding{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: "evicted-drained"}, b); err != nil {
		t.Fatal(err)
	}
	if b.Spec.State != placementv1beta1.BindingStateBound || len(b.Status.Conditions) != 1 {
		t.Errorf("the failover controller changed more than its condition: state %s, conditions %+v", b.Spec.State, b.Status.Conditions)
	}
}

// While most of the fleet is unreachable, evictions are paused and the binding
// says why the placement stays.
func TestEvictionsPauseWhileMostOfTheFleetIsUnreachable(t *testing.T) {
	member(t, "lost-1", false, true)
	member(t, "lost-2", false, false)
	member(t, "lost-3", false, false)
	startFailover(t, rate.NewLimiter(1, 10))
	pickOneOn(t, "paused", "lost-1")
	testenv.Eventually(t, 20*time.Second, evictionRequested("paused-lost-1", metav1.ConditionFalse, placementv1beta1.ReasonKeptDespiteTaint))
}

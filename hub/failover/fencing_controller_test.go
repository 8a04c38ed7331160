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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/failover"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

const testFencingMargin = time.Second

func startFencing(t *testing.T) {
	env.StartManager(t, func(mgr ctrl.Manager) error {
		if err := pipeline.SetupIndexes(mgr); err != nil {
			return err
		}
		return (&failover.FencingReconciler{Client: mgr.GetClient(), Margin: testFencingMargin}).SetupWithManager(mgr)
	})
}

// fencedMember creates a MemberCluster whose agent is connected, or was last
// heard from lastHeard ago.
func fencedMember(t *testing.T, name string, connected bool, lastHeard time.Duration) {
	t.Helper()
	ctx := context.Background()
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	status, reason := metav1.ConditionTrue, clusterv1beta1.ReasonAgentConnected
	if !connected {
		status, reason = metav1.ConditionFalse, clusterv1beta1.ReasonHeartbeatTimeout
	}
	conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, status, reason, "test", mc.Generation)
	mc.Status.LastHeartbeatTime = &metav1.Time{Time: time.Now().Add(-lastHeard)}
	if err := env.Client.Status().Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterv1beta1.MemberNamespace(name)}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
}

// leavingFencedPlacement creates a fenced placement (lease 10s) with an
// Unscheduled binding on cluster whose Work the hub has deleted and that
// waits for the agent's confirmation. It returns the Work's key.
func leavingFencedPlacement(t *testing.T, name, cluster string) types.NamespacedName {
	t.Helper()
	ctx := context.Background()
	fencing := &placementv1beta1.FencingPolicy{LeaseSeconds: ptr.To[int32](10)}
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: name}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1), Fencing: fencing},
		},
	}
	if err := env.Client.Create(ctx, crp); err != nil {
		t.Fatal(err)
	}
	b := &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + cluster, Labels: map[string]string{placementv1beta1.LabelPlacementName: name}},
		Spec:       placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateUnscheduled, TargetCluster: cluster},
	}
	if err := env.Client.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	w := &placementv1beta1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-work", Namespace: clusterv1beta1.MemberNamespace(cluster),
			Labels:     map[string]string{placementv1beta1.LabelPlacementName: name, placementv1beta1.LabelParentBinding: b.Name},
			Finalizers: []string{placementv1beta1.AppliedResourcesCleanupFinalizer}},
		Spec: placementv1beta1.WorkSpec{Fencing: fencing},
	}
	if err := env.Client.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	return client.ObjectKeyFromObject(w)
}

func fencingCondition(name string, want metav1.ConditionStatus, reason, message string) func() error {
	return func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, crp); err != nil {
			return err
		}
		c := conditions.Get(crp.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionFencing))
		if c == nil || c.Status != want || c.Reason != reason || !strings.Contains(c.Message, message) || c.ObservedGeneration != crp.Generation {
			return fmt.Errorf("Fencing = %+v, want %s %s containing %q", c, want, reason, message)
		}
		return nil
	}
}

func workGone(key types.NamespacedName) func() error {
	return func() error {
		err := env.Client.Get(context.Background(), key, &placementv1beta1.Work{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("work %s is still there", key)
	}
}

// A copy on a member cut off just now is waited for until lease and margin
// have passed since the hub last heard from it; then its Work is let go and
// the placement is clear to start elsewhere.
func TestAFencedCopyOnACutOffMemberIsWaitedForUntilTheLeaseRunsOut(t *testing.T) {
	fencedMember(t, "fc-cut", false, 0)
	startFencing(t)
	start := time.Now()
	work := leavingFencedPlacement(t, "fc-wait", "fc-cut")
	testenv.Eventually(t, 20*time.Second, fencingCondition("fc-wait", metav1.ConditionTrue, placementv1beta1.ReasonFencingWaiting,
		"fc-cut: its agent is cut off; the copy counts as stopped at"))
	testenv.Eventually(t, 30*time.Second, workGone(work))
	if waited, least := time.Since(start), 10*time.Second; waited < least {
		t.Errorf("the Work was let go after %s, before the lease of %s ran out", waited, least)
	}
	testenv.Eventually(t, 20*time.Second, fencingCondition("fc-wait", metav1.ConditionFalse, placementv1beta1.ReasonFencingClear, "no copy"))
}

// A copy on a member cut off for longer than lease and margin is let go at
// once.
func TestAFencedCopyOnAMemberCutOffLongAgoIsLetGo(t *testing.T) {
	fencedMember(t, "fc-long", false, time.Hour)
	startFencing(t)
	work := leavingFencedPlacement(t, "fc-gone", "fc-long")
	testenv.Eventually(t, 20*time.Second, workGone(work))
	testenv.Eventually(t, 20*time.Second, fencingCondition("fc-gone", metav1.ConditionFalse, placementv1beta1.ReasonFencingClear, "no copy"))
}

// A copy on a connected member waits for the agent's confirmation, however
// old the last recorded heartbeat is: the Work is not let go.
func TestAFencedCopyOnAConnectedMemberWaitsForTheAgent(t *testing.T) {
	fencedMember(t, "fc-conn", true, time.Hour)
	startFencing(t)
	work := leavingFencedPlacement(t, "fc-confirm", "fc-conn")
	testenv.Eventually(t, 20*time.Second, fencingCondition("fc-confirm", metav1.ConditionTrue, placementv1beta1.ReasonFencingWaiting,
		"fc-conn: its agent is connected and has not confirmed removing the copy yet"))
	testenv.Consistently(t, 3*time.Second, func() error {
		if workGone(work)() == nil {
			return fmt.Errorf("the Work of a connected member was let go")
		}
		return nil
	})
}

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

package enqueue

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// HeldClusters counts, through the manager's cache and the binding index, the
// active bindings of one placement that no eviction asks to leave.
func TestHeldClusters(t *testing.T) {
	ctx := context.Background()
	var cached client.Client
	env.StartManager(t, func(mgr ctrl.Manager) error {
		cached = mgr.GetClient()
		return pipeline.SetupIndexes(mgr)
	})
	binding := func(placement, cluster string, state placementv1beta1.BindingState) *placementv1beta1.ClusterResourceBinding {
		return &placementv1beta1.ClusterResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: placement + "-" + cluster, Labels: map[string]string{placementv1beta1.LabelPlacementName: placement}},
			Spec: placementv1beta1.ResourceBindingSpec{State: state, TargetCluster: cluster,
				ClusterDecision: placementv1beta1.ClusterDecision{ClusterName: cluster, Selected: true}},
		}
	}
	for _, b := range []*placementv1beta1.ClusterResourceBinding{
		binding("held", "a", placementv1beta1.BindingStateBound),
		binding("held", "b", placementv1beta1.BindingStateScheduled),
		binding("held", "c", placementv1beta1.BindingStateUnscheduled),
		binding("held", "d", placementv1beta1.BindingStateBound),
		binding("other", "a", placementv1beta1.BindingStateBound),
	} {
		testenv.Create(t, env.Client, b)
	}
	evicted := &placementv1beta1.ClusterResourceBinding{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "held-d"}, evicted); err != nil {
		t.Fatal(err)
	}
	conditions.Set(&evicted.Status.Conditions, placementv1beta1.ConditionEvictionRequested, metav1.ConditionTrue, placementv1beta1.ReasonTaintNotTolerated, "test", evicted.Generation)
	if err := env.Client.Status().Update(ctx, evicted); err != nil {
		t.Fatal(err)
	}
	// a and b hold "held"; c is unscheduled and d is being evicted.
	testenv.Eventually(t, 30*time.Second, func() error {
		if got := HeldClusters(ctx, cached, pipeline.PlacementKey{Name: "held"}); got != 2 {
			return fmt.Errorf("HeldClusters(held) = %d, want 2", got)
		}
		if got := HeldClusters(ctx, cached, pipeline.PlacementKey{Name: "other"}); got != 1 {
			return fmt.Errorf("HeldClusters(other) = %d, want 1", got)
		}
		return nil
	})
}

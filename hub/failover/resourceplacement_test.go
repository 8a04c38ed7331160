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
	"testing"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// The failover controller treats a ResourcePlacement's bindings like a
// ClusterResourcePlacement's: an expired toleration asks, on the ResourceBinding
// in the placement's namespace, for the placement to leave the cluster.
func TestExpiredTolerationEvictsAResourcePlacement(t *testing.T) {
	ctx := context.Background()
	// Connected members, so that the fleet is not taken for partitioned.
	member(t, "rp-drained", true, true)
	member(t, "rp-fine-1", true, false)
	member(t, "rp-fine-2", true, false)
	startFailover(t, rate.NewLimiter(1, 10))
	testenv.Create(t, env.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-f"}})
	testenv.Create(t, env.Client, &placementv1beta1.ResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-f", Name: "web"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "settings"}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1)},
		},
	})
	testenv.Create(t, env.Client, &placementv1beta1.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-f", Name: "web-rp-drained", Labels: map[string]string{
			placementv1beta1.LabelPlacementName: "web", placementv1beta1.LabelPlacementNamespace: "team-f"}},
		Spec: placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateBound, TargetCluster: "rp-drained"},
	})
	testenv.Eventually(t, 20*time.Second, func() error {
		b := &placementv1beta1.ResourceBinding{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: "team-f", Name: "web-rp-drained"}, b); err != nil {
			return err
		}
		c := conditions.Get(b.Status.Conditions, placementv1beta1.ConditionEvictionRequested)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != placementv1beta1.ReasonTaintNotTolerated {
			return fmt.Errorf("EvictionRequested = %+v, want True %s", c, placementv1beta1.ReasonTaintNotTolerated)
		}
		return nil
	})
}

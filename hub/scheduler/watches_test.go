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

package scheduler

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/fleet"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

// TestTheClusterWatchKeepsTheFleetSnapshot feeds MemberCluster events through
// the scheduler's handler: each is in the snapshot's next view, and a
// heartbeat moves no generation.
func TestTheClusterWatchKeepsTheFleetSnapshot(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clusterv1beta1.AddToScheme, placementv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	r := &Reconciler{Client: fake.NewClientBuilder().WithScheme(scheme).Build(), fleet: fleet.New()}
	h := r.clusterHandler()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	names := func() []string {
		var out []string
		for _, mc := range r.fleet.View().Members() {
			out = append(out, mc.Name+"="+mc.Labels["env"])
		}
		return out
	}

	a, b := ft.Cluster("a", ft.Labels("env", "dev")), ft.Cluster("b", ft.Labels("env", "dev"))
	h.Create(t.Context(), event.CreateEvent{Object: &b}, q)
	h.Create(t.Context(), event.CreateEvent{Object: &a}, q)
	if diff := cmp.Diff([]string{"a=dev", "b=dev"}, names()); diff != "" {
		t.Errorf("after the creates (-want +got):\n%s", diff)
	}

	prod := a.DeepCopy()
	prod.Labels["env"] = "prod"
	h.Update(t.Context(), event.UpdateEvent{ObjectOld: &a, ObjectNew: prod}, q)
	if diff := cmp.Diff([]string{"a=prod", "b=dev"}, names()); diff != "" {
		t.Errorf("after the label change (-want +got):\n%s", diff)
	}

	gen := r.fleet.Generation()
	beat := prod.DeepCopy()
	beat.ResourceVersion = "2"
	beat.Status.AgentVersion = "v2"
	h.Update(t.Context(), event.UpdateEvent{ObjectOld: prod, ObjectNew: beat}, q)
	if got := r.fleet.Generation(); got != gen {
		t.Errorf("a heartbeat moved the generation from %d to %d", gen, got)
	}

	h.Delete(t.Context(), event.DeleteEvent{Object: &b}, q)
	if got := names(); !slices.Equal(got, []string{"a=prod"}) {
		t.Errorf("after the delete: %v, want [a=prod]", got)
	}
}

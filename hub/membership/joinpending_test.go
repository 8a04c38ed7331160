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

package membership_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/membership"
	"github.com/flotilla-io/flotilla/hub/readiness"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// A MemberCluster a join has just created (with membership's finalizer and
// built-in labels, no status) is left to the join's status write, which
// follows at once: membership does not race it with a write of its own. One
// whose join never wrote a status still gets its first conditions, later.
func TestMembershipLeavesAJustJoinedMemberToTheJoin(t *testing.T) {
	ctx := context.Background()
	env.StartManager(t, func(mgr ctrl.Manager) error {
		return (&membership.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("membership")}).SetupWithManager(mgr)
	})
	created := func(name string) *clusterv1beta1.MemberCluster {
		mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{clusterv1beta1.MemberClusterFinalizer}}}
		membership.SetBuiltinLabels(mc)
		testenv.Create(t, env.Client, mc)
		return mc
	}
	joined := created("just-joined")
	orphan := created("join-never-recorded")

	// The join's status write, made with the resourceVersion of the create
	// after a while under load: it conflicts if membership wrote first.
	testenv.Consistently(t, 2*time.Second, func() error {
		got := &clusterv1beta1.MemberCluster{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(joined), got); err != nil {
			return err
		}
		if got.ResourceVersion != joined.ResourceVersion {
			return fmt.Errorf("membership wrote the just-joined member (resourceVersion %s → %s): %+v", joined.ResourceVersion, got.ResourceVersion, got.Status)
		}
		return nil
	})
	conditions.Set(&joined.Status.Conditions, clusterv1beta1.ConditionJoined, metav1.ConditionTrue, clusterv1beta1.ReasonJoined, "joined", joined.Generation)
	membership.SetFirstConditions(joined)
	readiness.SetMemberCluster(joined)
	if err := env.Client.Status().Update(ctx, joined); err != nil {
		t.Fatalf("the join's status write: %v", err)
	}

	// Without a join's status write, membership gives the first conditions.
	testenv.Eventually(t, 30*time.Second, func() error {
		got := &clusterv1beta1.MemberCluster{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(orphan), got); err != nil {
			return err
		}
		if c := conditions.Get(got.Status.Conditions, clusterv1beta1.ConditionAgentConnected); c == nil || c.Reason != clusterv1beta1.ReasonAgentNeverConnected {
			return fmt.Errorf("AgentConnected = %+v, want Unknown (%s)", c, clusterv1beta1.ReasonAgentNeverConnected)
		}
		return nil
	})
}

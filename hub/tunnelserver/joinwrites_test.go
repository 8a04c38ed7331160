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

package tunnelserver

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/membership"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// A join creates the MemberCluster with everything membership would write for
// a new member (its finalizer, built-in labels and first conditions), so that
// membership writes nothing for it: at 1 000 members joining at once each of
// its writes is one the API server need not make.
func TestAJoinedMemberNeedsNoWriteOfMembership(t *testing.T) {
	ctx := context.Background()
	addr := startServer(t)
	const name = "joined-complete"
	joinMember(t, addr, name)

	mc := member(t, name)
	if !slices.Contains(mc.Finalizers, clusterv1beta1.MemberClusterFinalizer) {
		t.Errorf("finalizers = %v, want %s", mc.Finalizers, clusterv1beta1.MemberClusterFinalizer)
	}
	if got := mc.Labels[clusterv1beta1.LabelClusterName]; got != name {
		t.Errorf("label %s = %q, want %q", clusterv1beta1.LabelClusterName, got, name)
	}
	for _, want := range []struct{ typ, reason string }{
		{clusterv1beta1.ConditionAgentConnected, clusterv1beta1.ReasonAgentNeverConnected},
		{clusterv1beta1.ConditionHealthy, clusterv1beta1.ReasonHealthUnknown},
	} {
		c := conditions.Get(mc.Status.Conditions, want.typ)
		if c == nil || c.Status != metav1.ConditionUnknown || c.Reason != want.reason {
			t.Errorf("condition %s = %+v, want Unknown (%s)", want.typ, c, want.reason)
		}
	}
	if !conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionJoined) {
		t.Errorf("Joined is not True: %+v", mc.Status.Conditions)
	}

	// Membership, reconciling the member now, has nothing to write.
	r := &membership.Reconciler{Client: env.Client, NewMemberGrace: time.Minute}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}); err != nil {
		t.Fatal(err)
	}
	after := member(t, name)
	if after.ResourceVersion != mc.ResourceVersion {
		t.Errorf("membership wrote the joined member (resourceVersion %s → %s):\nbefore %+v\nafter  %+v",
			mc.ResourceVersion, after.ResourceVersion, mc, after)
	}
}

// An agent's connection and its first heartbeat (which it sends as soon as
// its session is accepted) are recorded in one status write: the member is
// connected and healthy at once, and a fleet joining costs a write a member
// fewer.
func TestConnectionAndFirstHeartbeatAreOneWrite(t *testing.T) {
	ctx := context.Background()
	addr := startServer(t)
	const name = "one-write"
	cert, pool := joinMember(t, addr, name)
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	joined := member(t, name)
	w, err := wc.Watch(ctx, &clusterv1beta1.MemberClusterList{}, client.MatchingFields{"metadata.name": name},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: joined.ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	connect(t, addr, name, cert, pool)
	writes := 0
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-w.ResultChan():
			mc, ok := ev.Object.(*clusterv1beta1.MemberCluster)
			if !ok {
				t.Fatalf("watch: %+v", ev)
			}
			writes++
			if !conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionHealthy) {
				continue
			}
			if !conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) {
				t.Fatalf("Healthy before AgentConnected: %+v", mc.Status.Conditions)
			}
			if writes != 1 {
				t.Errorf("connected and healthy after %d writes of the MemberCluster, want 1", writes)
			}
			if got := mc.Status.Properties[clusterv1beta1.PropertyNodeCount].Value; got != "2" {
				t.Errorf("node count = %q in the connect's write, want 2", got)
			}
			return
		case <-deadline:
			t.Fatalf("the member was not connected and healthy in 30s (%d writes seen)", writes)
		}
	}
}

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

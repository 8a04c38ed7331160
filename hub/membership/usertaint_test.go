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
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// runMembership runs the membership controller until the test ends, with a
// clock stopped at now.
func runMembership(t *testing.T, now time.Time) {
	env.StartManager(t, func(mgr ctrl.Manager) error {
		return (&membership.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("membership"),
			Now: func() time.Time { return now }}).SetupWithManager(mgr)
	})
}

// timeAddedOf waits until the member's taint key has a timeAdded and returns it.
func timeAddedOf(t *testing.T, name, key string) time.Time {
	t.Helper()
	var at time.Time
	testenv.Eventually(t, 20*time.Second, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, mc); err != nil {
			return err
		}
		for _, taint := range mc.Spec.Taints {
			if taint.Key == key && taint.TimeAdded != nil {
				at = taint.TimeAdded.Time
				return nil
			}
		}
		return fmt.Errorf("taint %s has no timeAdded yet: %+v", key, mc.Spec.Taints)
	})
	return at
}

// The hub records when it first saw a user's NoExecute taint in the
// MemberCluster, so that tolerationSeconds count from then; a hub started
// later (another clock) keeps that time rather than restarting the count.
func TestUserNoExecuteTaintGetsTheTimeTheHubFirstSawIt(t *testing.T) {
	ctx := context.Background()
	first := time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC)
	later := first.Add(time.Hour)
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "drained"},
		Spec: clusterv1beta1.MemberClusterSpec{Taints: []clusterv1beta1.Taint{
			{Key: "example.com/drain", Effect: clusterv1beta1.TaintEffectNoExecute},
			{Key: "example.com/cordon", Effect: clusterv1beta1.TaintEffectNoSchedule},
		}}}
	testenv.Create(t, env.Client, mc)

	t.Run("the first hub records the time it saw the taint", func(t *testing.T) {
		runMembership(t, first)
		if got := timeAddedOf(t, "drained", "example.com/drain"); !got.Equal(first) {
			t.Errorf("timeAdded = %s, want %s", got, first)
		}
	})
	t.Run("a restarted hub keeps the time and records a new taint's", func(t *testing.T) {
		runMembership(t, later)
		testenv.Eventually(t, 20*time.Second, func() error {
			got := &clusterv1beta1.MemberCluster{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(mc), got); err != nil {
				return err
			}
			base := got.DeepCopy()
			got.Spec.Taints = append(got.Spec.Taints, clusterv1beta1.Taint{Key: "example.com/retire", Effect: clusterv1beta1.TaintEffectNoExecute})
			return env.Client.Patch(ctx, got, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		})
		if got := timeAddedOf(t, "drained", "example.com/retire"); !got.Equal(later) {
			t.Errorf("the new taint's timeAdded = %s, want %s", got, later)
		}
		if got := timeAddedOf(t, "drained", "example.com/drain"); !got.Equal(first) {
			t.Errorf("after a restart the first taint's timeAdded = %s, want it kept at %s", got, first)
		}
		got := &clusterv1beta1.MemberCluster{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(mc), got); err != nil {
			t.Fatal(err)
		}
		for _, taint := range got.Spec.Taints {
			if taint.Effect == clusterv1beta1.TaintEffectNoSchedule && taint.TimeAdded != nil {
				t.Errorf("the NoSchedule taint %s got a timeAdded; only NoExecute taints are counted", taint.Key)
			}
		}
	})
}

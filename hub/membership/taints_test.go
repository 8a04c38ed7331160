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

package membership

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

func memberWith(connected, healthy metav1.ConditionStatus, since time.Time, taints ...clusterv1beta1.Taint) *clusterv1beta1.MemberCluster {
	mc := &clusterv1beta1.MemberCluster{}
	mc.Spec.Taints = taints
	mc.Status.Conditions = []metav1.Condition{
		{Type: clusterv1beta1.ConditionAgentConnected, Status: connected, LastTransitionTime: metav1.NewTime(since)},
		{Type: clusterv1beta1.ConditionHealthy, Status: healthy, LastTransitionTime: metav1.NewTime(since)},
	}
	return mc
}

func TestDesiredTaints(t *testing.T) {
	since := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	at := metav1.NewTime(since)
	user := clusterv1beta1.Taint{Key: "maintenance", Value: "true", Effect: clusterv1beta1.TaintEffectNoSchedule}
	drain := clusterv1beta1.Taint{Key: "example.com/drain", Effect: clusterv1beta1.TaintEffectNoExecute}
	seen := metav1.NewTime(since.Add(time.Hour))
	drainSeen := clusterv1beta1.Taint{Key: "example.com/drain", Effect: clusterv1beta1.TaintEffectNoExecute, TimeAdded: &seen}
	drainSince := clusterv1beta1.Taint{Key: "example.com/drain", Effect: clusterv1beta1.TaintEffectNoExecute, TimeAdded: &at}
	unreachable := []clusterv1beta1.Taint{
		{Key: clusterv1beta1.TaintUnreachable, Effect: clusterv1beta1.TaintEffectNoSchedule, TimeAdded: &at},
		{Key: clusterv1beta1.TaintUnreachable, Effect: clusterv1beta1.TaintEffectNoExecute, TimeAdded: &at},
	}
	notReady := []clusterv1beta1.Taint{
		{Key: clusterv1beta1.TaintNotReady, Effect: clusterv1beta1.TaintEffectNoSchedule, TimeAdded: &at},
		{Key: clusterv1beta1.TaintNotReady, Effect: clusterv1beta1.TaintEffectNoExecute, TimeAdded: &at},
	}
	for _, tc := range []struct {
		name string
		mc   *clusterv1beta1.MemberCluster
		want []clusterv1beta1.Taint
	}{
		{"a connected healthy cluster has no automatic taints", memberWith(metav1.ConditionTrue, metav1.ConditionTrue, since), nil},
		{"a disconnected agent taints the cluster unreachable from when it disconnected",
			memberWith(metav1.ConditionFalse, metav1.ConditionUnknown, since), unreachable},
		{"an unhealthy API server taints the cluster not-ready",
			memberWith(metav1.ConditionTrue, metav1.ConditionFalse, since), notReady},
		{"user taints are kept", memberWith(metav1.ConditionFalse, metav1.ConditionTrue, since, user), append([]clusterv1beta1.Taint{user}, unreachable...)},
		{"recovery removes the automatic taints and keeps the user's",
			memberWith(metav1.ConditionTrue, metav1.ConditionTrue, since, append([]clusterv1beta1.Taint{user}, unreachable...)...), []clusterv1beta1.Taint{user}},
		{"existing automatic taints are kept as they are (their time does not move)",
			memberWith(metav1.ConditionFalse, metav1.ConditionUnknown, since.Add(time.Hour), unreachable...), unreachable},
		{"a user's NoExecute taint gets the time the hub first saw it",
			memberWith(metav1.ConditionTrue, metav1.ConditionTrue, since, user, drain), []clusterv1beta1.Taint{user, drainSeen}},
		{"a user's NoExecute taint keeps the time it has",
			memberWith(metav1.ConditionTrue, metav1.ConditionTrue, since, drainSince), []clusterv1beta1.Taint{drainSince}},
		{"a never-connected cluster is not tainted", memberWith(metav1.ConditionUnknown, metav1.ConditionUnknown, since), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DesiredTaints(tc.mc, since.Add(time.Hour), 30*time.Second)); diff != "" {
				t.Errorf("DesiredTaints (-want +got):\n%s", diff)
			}
		})
	}
}

// joinedAt marks the member Joined=True since the given time.
func joinedAt(mc *clusterv1beta1.MemberCluster, at time.Time) *clusterv1beta1.MemberCluster {
	mc.Status.Conditions = append(mc.Status.Conditions, metav1.Condition{
		Type: clusterv1beta1.ConditionJoined, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(at),
	})
	return mc
}

func TestNewMemberIsNotTaintedNotReadyDuringItsGrace(t *testing.T) {
	joined := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	grace := 30 * time.Second
	firstHeartbeat := joined.Add(2 * time.Second)
	at := metav1.NewTime(firstHeartbeat)
	notReady := []clusterv1beta1.Taint{
		{Key: clusterv1beta1.TaintNotReady, Effect: clusterv1beta1.TaintEffectNoSchedule, TimeAdded: &at},
		{Key: clusterv1beta1.TaintNotReady, Effect: clusterv1beta1.TaintEffectNoExecute, TimeAdded: &at},
	}
	for _, tc := range []struct {
		name      string
		mc        *clusterv1beta1.MemberCluster
		now       time.Time
		grace     time.Duration
		want      []clusterv1beta1.Taint
		wantGrace time.Duration
	}{
		{"an unhealthy first heartbeat right after joining adds no taint",
			joinedAt(memberWith(metav1.ConditionTrue, metav1.ConditionFalse, firstHeartbeat), joined), joined.Add(5 * time.Second), grace, nil, 25 * time.Second},
		{"health not reported yet after joining adds no taint",
			joinedAt(memberWith(metav1.ConditionTrue, metav1.ConditionUnknown, firstHeartbeat), joined), joined.Add(5 * time.Second), grace, nil, 25 * time.Second},
		{"still unhealthy when the grace ends taints from the first unhealthy heartbeat",
			joinedAt(memberWith(metav1.ConditionTrue, metav1.ConditionFalse, firstHeartbeat), joined), joined.Add(grace), grace, notReady, 0},
		{"a zero grace taints at once",
			joinedAt(memberWith(metav1.ConditionTrue, metav1.ConditionFalse, firstHeartbeat), joined), joined.Add(5 * time.Second), 0, notReady, 0},
		{"a not-ready taint the member already has is kept during the grace",
			joinedAt(memberWith(metav1.ConditionTrue, metav1.ConditionFalse, firstHeartbeat, notReady...), joined), joined.Add(5 * time.Second), grace, notReady, 25 * time.Second},
		{"a healthy new member needs no grace",
			joinedAt(memberWith(metav1.ConditionTrue, metav1.ConditionTrue, firstHeartbeat), joined), joined.Add(5 * time.Second), grace, nil, 0},
		{"a member that never joined gets no grace",
			memberWith(metav1.ConditionTrue, metav1.ConditionFalse, firstHeartbeat), joined.Add(5 * time.Second), grace, notReady, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DesiredTaints(tc.mc, tc.now, tc.grace)); diff != "" {
				t.Errorf("DesiredTaints (-want +got):\n%s", diff)
			}
			if got := NewMemberGraceLeft(tc.mc, tc.now, tc.grace); got != tc.wantGrace {
				t.Errorf("NewMemberGraceLeft = %s, want %s", got, tc.wantGrace)
			}
		})
	}
}

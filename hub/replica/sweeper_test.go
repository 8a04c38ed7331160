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

package replica

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

func lease(replica string, renewed time.Time, seconds int32) *coordinationv1.Lease {
	t, acquired := metav1.NewMicroTime(renewed), metav1.NewMicroTime(started)
	return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: &replica, RenewTime: &t, AcquireTime: &acquired, LeaseDurationSeconds: &seconds}}
}

// started is when the replicas' current processes took their Leases.
var started = time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC)

func memberOn(name, replica string, connected metav1.ConditionStatus) clusterv1beta1.MemberCluster {
	return memberSince(name, replica, connected, started.Add(time.Minute))
}

func memberSince(name, replica string, connected metav1.ConditionStatus, since time.Time) clusterv1beta1.MemberCluster {
	mc := clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if replica != "" {
		mc.Status.AgentSession = &clusterv1beta1.AgentSession{HubReplica: replica, Generation: since.UnixNano()}
	}
	mc.Status.Conditions = []metav1.Condition{{Type: clusterv1beta1.ConditionAgentConnected, Status: connected}}
	return mc
}

func TestOrphanedMembersAreThoseOfReplicasWithoutALiveLease(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	leases := map[string]*coordinationv1.Lease{
		"hub-0": lease("hub-0", now.Add(-5*time.Second), 15),  // renewed recently
		"hub-1": lease("hub-1", now.Add(-20*time.Second), 15), // expired
	}
	tests := []struct {
		name   string
		member clusterv1beta1.MemberCluster
		want   bool
	}{
		{"a member on a replica whose lease is renewed is kept", memberOn("a", "hub-0", metav1.ConditionTrue), false},
		{"a member on a replica whose lease expired is orphaned", memberOn("b", "hub-1", metav1.ConditionTrue), true},
		{"a member on a replica without a lease is orphaned", memberOn("c", "hub-2", metav1.ConditionTrue), true},
		{"a member already disconnected is left alone", memberOn("d", "hub-1", metav1.ConditionFalse), false},
		{"a member whose session began before the replica restarted is orphaned", memberSince("f", "hub-0", metav1.ConditionTrue, started.Add(-time.Second)), true},
		{"a member without a session is left alone", memberOn("e", "", metav1.ConditionTrue), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Orphaned([]clusterv1beta1.MemberCluster{tt.member}, leases, now)
			if diff := cmp.Diff(tt.want, len(got) == 1); diff != "" {
				t.Errorf("orphaned (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpired(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	if Expired(lease("x", now.Add(-14*time.Second), 15), now) {
		t.Error("a lease renewed 14s ago with a 15s duration counts as expired")
	}
	if !Expired(lease("x", now.Add(-16*time.Second), 15), now) {
		t.Error("a lease renewed 16s ago with a 15s duration counts as live")
	}
	if !Expired(&coordinationv1.Lease{}, now) {
		t.Error("a lease never renewed counts as live")
	}
}

func TestStandingAt(t *testing.T) {
	renewed := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	const duration = 30 * time.Second
	tests := []struct {
		name string
		now  time.Time
		want Standing
	}{
		{"just renewed, it stands for two thirds of the lease", renewed, Standing{Serving: true, Until: renewed.Add(20 * time.Second)}},
		{"one renewal missed, it still stands", renewed.Add(19 * time.Second), Standing{Serving: true, Until: renewed.Add(20 * time.Second)}},
		{"two thirds of the lease without a renewal, it stops", renewed.Add(20 * time.Second), Standing{}},
		{"long without a renewal, it stays stopped", renewed.Add(time.Hour), Standing{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, StandingAt(renewed, tt.now, duration)); diff != "" {
				t.Errorf("StandingAt (-want +got):\n%s", diff)
			}
		})
	}
}

// A replica stops serving a third of its lease before the leader can count
// its Lease expired, whatever the lease's duration.
func TestAReplicaStopsServingBeforeTheLeaderCountsItGone(t *testing.T) {
	renewed := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, seconds := range []int32{3, 15, 30, 60, 300} {
		d := time.Duration(seconds) * time.Second
		l := lease("x", renewed, seconds)
		until := StandingAt(renewed, renewed, d).Until
		if Expired(l, until) {
			t.Errorf("duration %s: the Lease counts as expired at %s, when the replica still serves", d, until)
		}
		if got, want := renewed.Add(d).Sub(until), d/3; got < want {
			t.Errorf("duration %s: the replica stops %s before the Lease expires, want at least %s", d, got, want)
		}
		if r := RetryInterval(d); r >= StaleAfter(d)-d/3 {
			t.Errorf("duration %s: a failed renewal is retried after %s, too late to renew before the replica stops at %s", d, r, StaleAfter(d))
		}
	}
}

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

package cli

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

func TestLastSeen(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	seconds := int32(15)
	lease := func(renewed time.Time) *coordinationv1.Lease {
		r := metav1.NewMicroTime(renewed)
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &r, LeaseDurationSeconds: &seconds}}
	}
	recorded := metav1.NewTime(now.Add(-10 * time.Minute))
	member := func(connected metav1.ConditionStatus, replica string) *clusterv1beta1.MemberCluster {
		mc := &clusterv1beta1.MemberCluster{}
		mc.Status.Conditions = []metav1.Condition{{Type: clusterv1beta1.ConditionAgentConnected, Status: connected}}
		mc.Status.LastHeartbeatTime = &recorded
		if replica != "" {
			mc.Status.AgentSession = &clusterv1beta1.AgentSession{HubReplica: replica}
		}
		return mc
	}
	leases := map[string]*coordinationv1.Lease{"hub-0": lease(now.Add(-5 * time.Second)), "hub-1": lease(now.Add(-time.Minute))}
	for _, tc := range []struct {
		name   string
		mc     *clusterv1beta1.MemberCluster
		leases map[string]*coordinationv1.Lease
		want   string
	}{
		{"connected to a live replica", member(metav1.ConditionTrue, "hub-0"), leases, "live"},
		{"connected to a replica whose Lease expired", member(metav1.ConditionTrue, "hub-1"), leases, "10m ago"},
		{"connected to a replica without a Lease", member(metav1.ConditionTrue, "hub-2"), leases, "10m ago"},
		{"Leases not readable", member(metav1.ConditionTrue, "hub-0"), nil, "10m ago"},
		{"disconnected", member(metav1.ConditionFalse, ""), leases, "10m ago"},
		{"never connected", &clusterv1beta1.MemberCluster{}, leases, "<never>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lastSeen(tc.mc, tc.leases, now); got != tc.want {
				t.Fatalf("lastSeen = %q, want %q", got, tc.want)
			}
		})
	}
}

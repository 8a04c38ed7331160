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

package clustereligibility

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

func healthyCluster() clusterv1beta1.MemberCluster { return ft.Cluster("member-1") }

func clusterWith(opts ...ft.ClusterOption) clusterv1beta1.MemberCluster {
	return ft.Cluster("member-1", opts...)
}

func disconnectedFor(d time.Duration) ft.ClusterOption {
	return ft.Condition(clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse, d)
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name    string
		cluster clusterv1beta1.MemberCluster
		want    string // the reason; "" for eligible
	}{
		{
			name:    "a joined, connected and healthy cluster is eligible",
			cluster: healthyCluster(),
		},
		{
			name:    "a leaving cluster is not eligible",
			cluster: clusterWith(ft.Leaving()),
			want:    "cluster is leaving the fleet",
		},
		{
			name:    "a cluster without a Joined condition is not eligible",
			cluster: clusterWith(ft.WithoutCondition(clusterv1beta1.ConditionJoined)),
			want:    "cluster has not joined the fleet",
		},
		{
			name:    "a cluster whose Joined is Unknown is not eligible",
			cluster: clusterWith(ft.Condition(clusterv1beta1.ConditionJoined, metav1.ConditionUnknown, time.Minute)),
			want:    "cluster has not joined the fleet (Joined is Unknown: Test)",
		},
		{
			name:    "a cluster whose Joined is False is not eligible",
			cluster: clusterWith(ft.Condition(clusterv1beta1.ConditionJoined, metav1.ConditionFalse, time.Minute)),
			want:    "cluster has not joined the fleet (Joined is False: Test)",
		},
		{
			name:    "a cluster whose agent never connected is not eligible",
			cluster: clusterWith(ft.WithoutCondition(clusterv1beta1.ConditionAgentConnected)),
			want:    "cluster's agent has never connected",
		},
		{
			name: "a cluster whose agent never connected since it joined is not eligible, within the grace period too",
			cluster: clusterWith(func(mc *clusterv1beta1.MemberCluster) {
				ft.Condition(clusterv1beta1.ConditionAgentConnected, metav1.ConditionUnknown, time.Second)(mc)
				for i := range mc.Status.Conditions {
					if mc.Status.Conditions[i].Type == clusterv1beta1.ConditionAgentConnected {
						mc.Status.Conditions[i].Reason = clusterv1beta1.ReasonAgentNeverConnected
					}
				}
			}),
			want: "cluster's agent has never connected",
		},
		{
			name:    "a cluster disconnected for less than the grace period is still eligible",
			cluster: clusterWith(disconnectedFor(59 * time.Second)),
		},
		{
			name:    "a cluster disconnected for exactly the grace period is still eligible",
			cluster: clusterWith(disconnectedFor(60 * time.Second)),
		},
		{
			name:    "a cluster disconnected for longer than the grace period is not eligible",
			cluster: clusterWith(disconnectedFor(61 * time.Second)),
			want:    "cluster's agent is disconnected (AgentConnected is False: Test) for longer than the 1m0s grace period",
		},
		{
			name:    "a cluster whose connection is Unknown for longer than the grace period is not eligible",
			cluster: clusterWith(ft.Condition(clusterv1beta1.ConditionAgentConnected, metav1.ConditionUnknown, time.Hour)),
			want:    "cluster's agent is disconnected (AgentConnected is Unknown: Test) for longer than the 1m0s grace period",
		},
		{
			name:    "an unhealthy cluster is not eligible",
			cluster: clusterWith(ft.Condition(clusterv1beta1.ConditionHealthy, metav1.ConditionFalse, time.Minute)),
			want:    "cluster is not healthy (Healthy is False: Test)",
		},
		{
			name:    "a cluster of unknown health is eligible",
			cluster: clusterWith(ft.Condition(clusterv1beta1.ConditionHealthy, metav1.ConditionUnknown, time.Minute)),
		},
		{
			name:    "a cluster without a Healthy condition is eligible",
			cluster: clusterWith(ft.WithoutCondition(clusterv1beta1.ConditionHealthy)),
		},
		{
			name:    "leaving is reported before anything else",
			cluster: clusterWith(ft.Leaving(), ft.Condition(clusterv1beta1.ConditionJoined, metav1.ConditionFalse, time.Minute)),
			want:    "cluster is leaving the fleet",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ft.RunFilter(t, New(0), ft.Input(nil, tt.cluster))["member-1"]
			if tt.want == "" {
				if got != nil {
					t.Fatalf("Filter() = %v, want nil", got)
				}
				return
			}
			if got.Code() != framework.ClusterUnschedulable {
				t.Errorf("Filter() code = %v, want ClusterUnschedulable", got.Code())
			}
			if diff := cmp.Diff(tt.want, got.Message()); diff != "" {
				t.Errorf("Filter() message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterHonoursTheConfiguredGracePeriod(t *testing.T) {
	in := ft.Input(nil, clusterWith(disconnectedFor(5*time.Minute)))
	if st := ft.RunFilter(t, New(10*time.Minute), in)["member-1"]; st != nil {
		t.Errorf("with a 10m grace period, Filter() = %v, want nil", st)
	}
	if st := ft.RunFilter(t, New(time.Minute), in)["member-1"]; st.Code() != framework.ClusterUnschedulable {
		t.Errorf("with a 1m grace period, Filter() = %v, want ClusterUnschedulable", st)
	}
}

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

package clusterprofile

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

func TestDesired(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Hour))
	cond := func(typ string, s metav1.ConditionStatus, reason string, at metav1.Time) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: reason + " message", LastTransitionTime: at}
	}
	member := func(edit func(*clusterv1beta1.MemberCluster)) *clusterv1beta1.MemberCluster {
		m := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "member-1", Labels: map[string]string{"env": "prod"}, CreationTimestamp: t0}}
		m.Status.Conditions = []metav1.Condition{
			cond(clusterv1beta1.ConditionJoined, metav1.ConditionTrue, "Joined", t0),
			cond(clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue, "Connected", t0),
			cond(clusterv1beta1.ConditionHealthy, metav1.ConditionTrue, "Healthy", t1),
		}
		m.Status.KubernetesVersion = "v1.37.1"
		m.Status.AgentVersion = "v0.9.0"
		m.Status.Provider = "kind"
		m.Status.Properties = map[string]clusterv1beta1.PropertyValue{
			"flotilla.io/node-count": {Value: "3", ObservationTime: &t1},
			"a.example.com/zone":     {Value: "eu-1"},
		}
		if edit != nil {
			edit(m)
		}
		return m
	}
	proxy := Access{Server: "https://hub.example.com:6443/", CAData: []byte("ca")}
	healthy := func(s metav1.ConditionStatus, reason, msg string, at metav1.Time) metav1.Condition {
		return metav1.Condition{Type: cpv1alpha1.ClusterConditionControlPlaneHealthy, Status: s, Reason: reason, Message: msg, ObservedGeneration: 4, LastTransitionTime: at}
	}
	mirrored := []metav1.Condition{
		{Type: clusterv1beta1.ConditionJoined, Status: metav1.ConditionTrue, Reason: "Joined", Message: "Joined message", ObservedGeneration: 4, LastTransitionTime: t0},
		{Type: clusterv1beta1.ConditionAgentConnected, Status: metav1.ConditionTrue, Reason: "Connected", Message: "Connected message", ObservedGeneration: 4, LastTransitionTime: t0},
	}
	// Without a time of their own, properties were observed when the agent
	// connected or disconnected (at): this member has no recorded heartbeat.
	propsAt := func(at metav1.Time) []cpv1alpha1.Property {
		return []cpv1alpha1.Property{
			{Name: "a.example.com/zone", Value: "eu-1", LastObservedTime: at},
			{Name: "flotilla.io/node-count", Value: "3", LastObservedTime: t1},
			{Name: PropertyAgentVersion, Value: "v0.9.0", LastObservedTime: at},
			{Name: PropertyProvider, Value: "kind", LastObservedTime: at},
		}
	}
	props := propsAt(t0)
	viaProxy := []cpv1alpha1.AccessProvider{{Name: AccessProviderName, Cluster: clientcmdv1.Cluster{
		Server: "https://hub.example.com:6443/apis/proxy.flotilla.io/v1beta1/memberclusters/member-1/proxy", CertificateAuthorityData: []byte("ca")}}}
	spec := cpv1alpha1.ClusterProfileSpec{DisplayName: "member-1", ClusterManager: cpv1alpha1.ClusterManager{Name: "flotilla"}}
	labels := map[string]string{"env": "prod", cpv1alpha1.LabelClusterManagerKey: "flotilla"}

	tests := []struct {
		name   string
		member *clusterv1beta1.MemberCluster
		access Access
		want   Profile
	}{{
		name:   "a connected, healthy member is published with its properties and the proxy as its access",
		member: member(nil),
		access: proxy,
		want: Profile{Labels: labels, Spec: spec, Status: cpv1alpha1.ClusterProfileStatus{
			Conditions:      append(append([]metav1.Condition{}, mirrored...), healthy(metav1.ConditionTrue, "Healthy", "Healthy message", t1)),
			Version:         cpv1alpha1.ClusterVersion{Kubernetes: "v1.37.1"},
			Properties:      props,
			AccessProviders: viaProxy,
		}},
	}, {
		name:   "without the proxy no access provider is named",
		member: member(nil),
		want: Profile{Labels: labels, Spec: spec, Status: cpv1alpha1.ClusterProfileStatus{
			Conditions: append(append([]metav1.Condition{}, mirrored...), healthy(metav1.ConditionTrue, "Healthy", "Healthy message", t1)),
			Version:    cpv1alpha1.ClusterVersion{Kubernetes: "v1.37.1"},
			Properties: props,
		}},
	}, {
		name: "a disconnected member's health is Unknown, whatever it last reported",
		member: member(func(m *clusterv1beta1.MemberCluster) {
			m.Status.Conditions[1] = cond(clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse, "HeartbeatMissed", t1)
		}),
		access: proxy,
		want: Profile{Labels: labels, Spec: spec, Status: cpv1alpha1.ClusterProfileStatus{
			Conditions: []metav1.Condition{mirrored[0],
				{Type: clusterv1beta1.ConditionAgentConnected, Status: metav1.ConditionFalse, Reason: "HeartbeatMissed", Message: "HeartbeatMissed message", ObservedGeneration: 4, LastTransitionTime: t1},
				healthy(metav1.ConditionUnknown, ReasonAgentNotConnected, "the hub has no connection to the member's agent, so the health of its API server is not known now (AgentConnected: HeartbeatMissed)", t1)},
			Version:         cpv1alpha1.ClusterVersion{Kubernetes: "v1.37.1"},
			Properties:      propsAt(t1),
			AccessProviders: viaProxy,
		}},
	}, {
		name: "a member that has just joined says nothing it does not know",
		member: &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "member-1", CreationTimestamp: t0,
			Labels: map[string]string{cpv1alpha1.LabelClusterManagerKey: "someone-else"}}},
		want: Profile{Labels: map[string]string{cpv1alpha1.LabelClusterManagerKey: "flotilla"}, Spec: spec, Status: cpv1alpha1.ClusterProfileStatus{
			Conditions: []metav1.Condition{healthy(metav1.ConditionUnknown, ReasonAgentNotConnected, "the hub has no connection to the member's agent, so the health of its API server is not known now", t0)},
		}},
	}, {
		name: "a connected member that has not reported health yet",
		member: member(func(m *clusterv1beta1.MemberCluster) {
			m.Status.Conditions = m.Status.Conditions[:2]
			m.Status.Properties, m.Status.AgentVersion, m.Status.Provider = nil, "", ""
		}),
		want: Profile{Labels: labels, Spec: spec, Status: cpv1alpha1.ClusterProfileStatus{
			Conditions: append(append([]metav1.Condition{}, mirrored...), healthy(metav1.ConditionUnknown, ReasonHealthNotReported, "the member's agent has not reported the health of its API server yet", t0)),
			Version:    cpv1alpha1.ClusterVersion{Kubernetes: "v1.37.1"},
		}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Desired(tt.member, tt.access, 4)); diff != "" {
				t.Errorf("Desired (-want +got):\n%s", diff)
			}
		})
	}
}

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

// Package clusterprofile publishes a ClusterProfile (sigs.k8s.io/cluster-
// inventory-api, multicluster.x-k8s.io/v1alpha1) for every member cluster,
// so that tools built on the cluster inventory API (MultiKueue, Argo CD,
// multicluster-runtime) see the fleet and reach each member through the
// hub's API proxy, without member credentials.
//
// The hub publishes only when the ClusterProfile CRD is installed on the hub
// cluster (it installs none itself), into --cluster-profile-namespace. It
// writes only the profiles it created — those labelled
// x-k8s.io/cluster-manager=flotilla — and deletes none: each is owned by its
// MemberCluster, and the garbage collector removes it with the member.
package clusterprofile

import (
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/apiproxy"
)

// ClusterManager is the name Flotilla gives itself in spec.clusterManager
// and in the x-k8s.io/cluster-manager label.
const ClusterManager = "flotilla"

// AccessProviderName names the access provider of the hub's API proxy.
const AccessProviderName = "flotilla-proxy"

// Property names Flotilla adds beside the member's own properties.
const (
	PropertyAgentVersion = "flotilla.io/agent-version"
	PropertyProvider     = "flotilla.io/provider"
)

// Reasons of the ControlPlaneHealthy condition that do not come from the
// member's Healthy condition.
const (
	// ReasonAgentNotConnected (Unknown): the hub has no connection to the
	// member's agent, so it does not know the API server's health now.
	ReasonAgentNotConnected = "AgentNotConnected"
	// ReasonHealthNotReported (Unknown): the agent has not reported health yet.
	ReasonHealthNotReported = "HealthNotReported"
)

// Access says how a profile's consumers reach a member: through the hub's
// API proxy at Server, which presents a certificate CAData signs. Without a
// Server (the proxy is off) profiles list no access provider.
type Access struct {
	Server string
	CAData []byte
}

// Profile is what Flotilla writes of a member's ClusterProfile.
type Profile struct {
	Labels map[string]string
	Spec   cpv1alpha1.ClusterProfileSpec
	Status cpv1alpha1.ClusterProfileStatus
}

// Desired is the profile of member, by these rules:
//
//  1. Labels are the member's, and x-k8s.io/cluster-manager=flotilla (which
//     wins over a member label of that key).
//  2. spec.displayName is the member's name; spec.clusterManager.name is
//     "flotilla".
//  3. Conditions: the member's Joined and AgentConnected as they are, and
//     ControlPlaneHealthy from its Healthy condition — but Unknown
//     (AgentNotConnected) while AgentConnected is not True, since health
//     reported over a lost connection is not known now, and Unknown
//     (HealthNotReported) while the member has no Healthy condition.
//     Each carries observedGeneration, the profile's generation.
//  4. status.version.kubernetes is the member's KubernetesVersion.
//  5. Properties are the member's, by name, each with its observation time,
//     and flotilla.io/agent-version and flotilla.io/provider when known;
//     those without a time of their own carry reportedAt's.
//  6. One access provider, flotilla-proxy, whose cluster server is the hub's
//     proxy path for the member, when access.Server is set; none otherwise.
func Desired(member *clusterv1beta1.MemberCluster, access Access, generation int64) Profile {
	labels := maps.Clone(member.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[cpv1alpha1.LabelClusterManagerKey] = ClusterManager

	p := Profile{
		Labels: labels,
		Spec: cpv1alpha1.ClusterProfileSpec{
			DisplayName:    member.Name,
			ClusterManager: cpv1alpha1.ClusterManager{Name: ClusterManager},
		},
	}
	st := &p.Status
	st.Conditions = []metav1.Condition{}
	for _, t := range []string{clusterv1beta1.ConditionJoined, clusterv1beta1.ConditionAgentConnected} {
		if c := findCondition(member.Status.Conditions, t); c != nil {
			st.Conditions = append(st.Conditions, mirror(*c, t, generation))
		}
	}
	st.Conditions = append(st.Conditions, controlPlaneHealthy(member, generation))
	st.Version.Kubernetes = member.Status.KubernetesVersion

	reported := reportedAt(member)
	for _, name := range slices.Sorted(maps.Keys(member.Status.Properties)) {
		v := member.Status.Properties[name]
		prop := cpv1alpha1.Property{Name: name, Value: v.Value, LastObservedTime: reported}
		if v.ObservationTime != nil {
			prop.LastObservedTime = *v.ObservationTime
		}
		st.Properties = append(st.Properties, prop)
	}
	if v := member.Status.AgentVersion; v != "" {
		st.Properties = append(st.Properties, cpv1alpha1.Property{Name: PropertyAgentVersion, Value: v, LastObservedTime: reported})
	}
	if v := member.Status.Provider; v != "" {
		st.Properties = append(st.Properties, cpv1alpha1.Property{Name: PropertyProvider, Value: v, LastObservedTime: reported})
	}

	if access.Server != "" {
		st.AccessProviders = []cpv1alpha1.AccessProvider{{
			Name: AccessProviderName,
			Cluster: clientcmdv1.Cluster{
				Server:                   strings.TrimSuffix(access.Server, "/") + apiproxy.PathPrefix(member.Name),
				CertificateAuthorityData: access.CAData,
			},
		}}
	}
	return p
}

// reportedAt is when the hub last recorded what the member's agent
// reported: its last recorded heartbeat, else when AgentConnected last
// changed, else when the member was created. A property without an
// observation time of its own, the agent's version and its provider were
// observed then. (A ClusterProfile property's lastObservedTime may not be
// null.)
func reportedAt(member *clusterv1beta1.MemberCluster) metav1.Time {
	if t := member.Status.LastHeartbeatTime; t != nil {
		return *t
	}
	if c := findCondition(member.Status.Conditions, clusterv1beta1.ConditionAgentConnected); c != nil {
		return c.LastTransitionTime
	}
	return member.CreationTimestamp
}

func controlPlaneHealthy(member *clusterv1beta1.MemberCluster, generation int64) metav1.Condition {
	connected := findCondition(member.Status.Conditions, clusterv1beta1.ConditionAgentConnected)
	healthy := findCondition(member.Status.Conditions, clusterv1beta1.ConditionHealthy)
	switch {
	case connected == nil || connected.Status != metav1.ConditionTrue:
		since := member.CreationTimestamp
		msg := "the hub has no connection to the member's agent, so the health of its API server is not known now"
		if connected != nil {
			since = connected.LastTransitionTime
			msg += " (AgentConnected: " + connected.Reason + ")"
		}
		return metav1.Condition{Type: cpv1alpha1.ClusterConditionControlPlaneHealthy, Status: metav1.ConditionUnknown,
			Reason: ReasonAgentNotConnected, Message: msg, ObservedGeneration: generation, LastTransitionTime: since}
	case healthy == nil:
		return metav1.Condition{Type: cpv1alpha1.ClusterConditionControlPlaneHealthy, Status: metav1.ConditionUnknown,
			Reason: ReasonHealthNotReported, Message: "the member's agent has not reported the health of its API server yet",
			ObservedGeneration: generation, LastTransitionTime: connected.LastTransitionTime}
	default:
		return mirror(*healthy, cpv1alpha1.ClusterConditionControlPlaneHealthy, generation)
	}
}

// mirror is c under type t, for a profile of generation.
func mirror(c metav1.Condition, t string, generation int64) metav1.Condition {
	return metav1.Condition{Type: t, Status: c.Status, Reason: c.Reason, Message: c.Message,
		ObservedGeneration: generation, LastTransitionTime: c.LastTransitionTime}
}

func findCondition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

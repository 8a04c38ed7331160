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
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
	"github.com/flotilla-io/flotilla/pkg/version"
)

// Capabilities are the tunnel capabilities this hub announces (pkg/tunnel,
// Capability*). It requires none: an agent of the previous version, which
// announces none, must keep working (VERSIONING.md).
var Capabilities = []string{tunnel.CapabilityVersionSkew, tunnel.CapabilityAPIProxy}

// versionSkewWriteTimeout bounds recording a refusal in the MemberCluster's
// status; the refusal goes to the agent either way.
const versionSkewWriteTimeout = 5 * time.Second

// checkVersionSkew applies the version-skew rule of VERSIONING.md to an
// authorized agent's Hello. It returns the one-line refusal for an agent
// beyond the supported skew, after recording it on the member (condition
// AgentConnected False with reason VersionSkew, and a Warning Event when the
// condition changes); "" for an agent the hub serves (a note is logged when
// the versions could not be checked: a development build, or an agent that
// announces no version).
func (s *Server) checkVersionSkew(ctx context.Context, hello tunnel.Hello) string {
	skew := version.CheckSkew(s.opts.Version, "hub", hello.AgentVersion, "agent")
	if skew.Compatible {
		if skew.Message != "" {
			s.log.Info("Not checking the agent's version", "member", hello.ClusterName, "note", skew.Message)
		}
		return ""
	}
	s.log.Info("Refusing an agent beyond the supported version skew", "member", hello.ClusterName,
		"agentVersion", hello.AgentVersion, "hubVersion", s.opts.Version, "reason", skew.Message)
	wctx, cancel := context.WithTimeout(ctx, versionSkewWriteTimeout)
	defer cancel()
	s.writeVersionSkew(wctx, hello, skew.Message)
	return skew.Message
}

// writeVersionSkew records a refusal for version skew on the member, unless a
// live session is recorded for it (an agent of a supported version still
// connected, to another replica or to this one): then the condition stays
// what that session says.
func (s *Server) writeVersionSkew(ctx context.Context, hello tunnel.Hello, message string) {
	free := func(mc *clusterv1beta1.MemberCluster) bool {
		as := mc.Status.AgentSession
		return as == nil || (as.HubReplica == s.opts.ReplicaName && !s.Connected(mc.Name))
	}
	changed := false
	mc, _, _ := s.updateMember(ctx, hello.ClusterName, "version-skew", free, func(mc *clusterv1beta1.MemberCluster) {
		c := conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected)
		changed = c == nil || c.Reason != clusterv1beta1.ReasonVersionSkew || c.Message != message
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse,
			clusterv1beta1.ReasonVersionSkew, message, mc.Generation)
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionHealthy, metav1.ConditionUnknown, clusterv1beta1.ReasonHealthUnknown,
			"the agent is not connected", mc.Generation)
		mc.Status.AgentSession = nil
		mc.Status.AgentVersion = hello.AgentVersion
	})
	if mc != nil && changed {
		s.recorder.Eventf(mc, nil, corev1.EventTypeWarning, clusterv1beta1.ReasonVersionSkew, "Refuse", "%s", message)
	}
}

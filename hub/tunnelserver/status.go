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
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/readiness"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// updateMember changes a MemberCluster's status with mutate and writes it if
// anything changed, counting the write by cause. guard decides, on the object
// read (and again on every retry after a conflict), whether this replica may
// write at all; optimistic locking makes the check and the write atomic. It
// returns the written object (nil when nothing was written), whether the
// guard held, and the error that kept it from writing (logged here).
func (s *Server) updateMember(ctx context.Context, name, cause string, guard func(mc *clusterv1beta1.MemberCluster) bool, mutate func(mc *clusterv1beta1.MemberCluster)) (*clusterv1beta1.MemberCluster, bool, error) {
	var written *clusterv1beta1.MemberCluster
	held := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		written = nil
		mc := &clusterv1beta1.MemberCluster{}
		if err := s.direct.Get(ctx, types.NamespacedName{Name: name}, mc); err != nil {
			return err
		}
		if held = guard(mc); !held {
			return nil
		}
		before := mc.Status.DeepCopy()
		mutate(mc)
		readiness.SetMemberCluster(mc)
		if equality.Semantic.DeepEqual(*before, mc.Status) {
			return nil
		}
		if err := s.direct.Status().Update(ctx, mc); err != nil {
			return err
		}
		s.metrics.statusWrites.WithLabelValues(cause).Inc()
		written = mc
		return nil
	})
	if err != nil && !apierrors.IsNotFound(err) {
		s.log.Error(err, "failed to update member status", "member", name, "cause", cause)
	}
	return written, held, err
}

// holds is the guard of the writes a session makes while it lasts: the
// member's status names this very session.
func (s *Server) holds(ms *memberSession) func(mc *clusterv1beta1.MemberCluster) bool {
	return func(mc *clusterv1beta1.MemberCluster) bool {
		as := mc.Status.AgentSession
		return as != nil && as.Generation == ms.generation && as.HubReplica == s.opts.ReplicaName
	}
}

// lost ends a session whose member's status names another session.
func (s *Server) lost(ms *memberSession, why string) {
	s.metrics.sessionsLost.Inc()
	ms.log.Info("ending a superseded session", "reason", why)
	ms.end(why)
}

// writeConnected records a new session, unless the member's status already
// names a newer one (then this session is ended). With the agent's first
// heartbeat (hb, nil without one) it records the member's health and
// properties in the same write.
func (s *Server) writeConnected(ctx context.Context, ms *memberSession, hb *tunnel.Heartbeat) {
	since := metav1.NewTime(ms.since)
	newest := func(mc *clusterv1beta1.MemberCluster) bool {
		as := mc.Status.AgentSession
		return as == nil || as.Generation <= ms.generation
	}
	wasConnected := false
	wasHealthy := ""
	cause := "connected"
	if hb != nil {
		cause = "connected-with-heartbeat"
	}
	mc, held, err := s.updateMember(ctx, ms.name, cause, newest, func(mc *clusterv1beta1.MemberCluster) {
		wasConnected = conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected)
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue, clusterv1beta1.ReasonAgentConnected,
			fmt.Sprintf("tunnel to hub replica %s since %s", s.opts.ReplicaName, ms.since.UTC().Format(time.RFC3339)), mc.Generation)
		mc.Status.AgentSession = &clusterv1beta1.AgentSession{HubReplica: s.opts.ReplicaName, ConnectedSince: &since, Generation: ms.generation}
		mc.Status.AgentVersion = ms.sess.Hello().AgentVersion
		mc.Status.LastHeartbeatTime = &since
		// The agent uses its newest certificate: the one a renewal replaced
		// is no longer needed.
		if id := mc.Status.Identity; id != nil && id.CertificateSerial == ms.serial {
			id.PreviousCertificateSerial = ""
		}
		if hb != nil {
			wasHealthy = applyHeartbeat(mc, hb.Properties, since)
		}
	})
	if !held {
		s.lost(ms, "the member already has a newer session")
		return
	}
	// An Event marks the transition only: a member that was connected (its
	// session moved to another replica, or this hub restarted) gets none,
	// so a restart does not cost an Event a member.
	if mc != nil && !wasConnected {
		s.recorder.Eventf(mc, nil, corev1.EventTypeNormal, clusterv1beta1.ReasonAgentConnected, "Connect",
			"agent %s connected to hub replica %s", ms.sess.Hello().AgentVersion, s.opts.ReplicaName)
	}
	if hb != nil {
		s.heartbeatRecorded(ms, mc, hb.Properties, wasHealthy, err)
	}
}

// writeDisconnected records the end of the member's session.
func (s *Server) writeDisconnected(ctx context.Context, ms *memberSession, why string) {
	ms.mu.Lock()
	last := ms.lastHeartbeat
	ms.mu.Unlock()
	reason := clusterv1beta1.ReasonAgentDisconnected
	if strings.HasPrefix(why, heartbeatOverduePrefix) {
		reason = clusterv1beta1.ReasonHeartbeatTimeout
	}
	// A replica that no longer holds the member's session writes nothing: the
	// member may be connected to another replica by now.
	mc, _, _ := s.updateMember(ctx, ms.name, "disconnected", s.holds(ms), func(mc *clusterv1beta1.MemberCluster) {
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse, reason,
			fmt.Sprintf("%s; last heartbeat %s", why, last.UTC().Format(time.RFC3339)), mc.Generation)
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionHealthy, metav1.ConditionUnknown, clusterv1beta1.ReasonHealthUnknown,
			"the agent is not connected", mc.Generation)
		mc.Status.AgentSession = nil
		t := metav1.NewTime(last)
		mc.Status.LastHeartbeatTime = &t
	})
	if mc != nil {
		s.recorder.Eventf(mc, nil, corev1.EventTypeWarning, reason, "Disconnect", "agent disconnected: %s", why)
	}
}

// writeProperties records the latest heartbeat: health, properties, usage.
func (s *Server) writeProperties(ctx context.Context, ms *memberSession, cause string) {
	ms.mu.Lock()
	props := ms.props
	last := ms.lastHeartbeat
	ms.mu.Unlock()
	now := metav1.NewTime(last)
	wasHealthy := ""
	mc, held, err := s.updateMember(ctx, ms.name, cause, s.holds(ms), func(mc *clusterv1beta1.MemberCluster) {
		wasHealthy = applyHeartbeat(mc, props, now)
	})
	if !held {
		s.lost(ms, "the member's status names another session")
		return
	}
	s.heartbeatRecorded(ms, mc, props, wasHealthy, err)
}

// applyHeartbeat sets mc's health, versions and properties from a heartbeat
// received at now, and its lastHeartbeatTime if anything changed; it returns
// the status of Healthy before ("" without one).
func applyHeartbeat(mc *clusterv1beta1.MemberCluster, props tunnel.ClusterProperties, now metav1.Time) (wasHealthy string) {
	before := mc.Status.DeepCopy()
	if c := conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionHealthy); c != nil {
		wasHealthy = string(c.Status)
	}
	if props.APIServerHealthy {
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionHealthy, metav1.ConditionTrue, clusterv1beta1.ReasonHealthy,
			"the member API server is ready", mc.Generation)
	} else {
		msg := props.APIServerMessage
		if msg == "" {
			msg = "the member API server is not ready"
		}
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionHealthy, metav1.ConditionFalse, clusterv1beta1.ReasonUnhealthy, msg, mc.Generation)
	}
	mc.Status.KubernetesVersion = props.KubernetesVersion
	mc.Status.Provider = props.Provider
	setProperties(mc, props, now)
	// A status that already holds these values (a member reconnecting)
	// is not written again.
	if !equality.Semantic.DeepEqual(*before, mc.Status) {
		mc.Status.LastHeartbeatTime = &now
	}
	return wasHealthy
}

// heartbeatRecorded follows a status write of heartbeat properties (err is
// the write's): later heartbeats are compared with what was written, and a
// change of health gets an Event.
func (s *Server) heartbeatRecorded(ms *memberSession, mc *clusterv1beta1.MemberCluster, props tunnel.ClusterProperties, wasHealthy string, err error) {
	if err == nil {
		// Written, or the status already held these values: later heartbeats
		// are compared with them. After a failure the next heartbeat tries
		// again.
		ms.mu.Lock()
		ms.written, ms.haveWritten = props, true
		ms.mu.Unlock()
	}
	if c := conditionOf(mc, clusterv1beta1.ConditionHealthy); c != nil && string(c.Status) != wasHealthy {
		eventType := corev1.EventTypeNormal
		if c.Status != metav1.ConditionTrue {
			eventType = corev1.EventTypeWarning
		}
		s.recorder.Eventf(mc, nil, eventType, c.Reason, "Probe", "member API server health: %s", c.Message)
	}
}

func conditionOf(mc *clusterv1beta1.MemberCluster, t string) *metav1.Condition {
	if mc == nil {
		return nil
	}
	return conditions.Get(mc.Status.Conditions, t)
}

// setProperties writes the reported properties. Their observation times are
// when they were written: later heartbeats within the thresholds of
// propertiesChanged leave them (and the status) alone, and a value the status
// already holds keeps its time.
func setProperties(mc *clusterv1beta1.MemberCluster, props tunnel.ClusterProperties, now metav1.Time) {
	values := map[string]string{clusterv1beta1.PropertyNodeCount: strconv.Itoa(props.NodeCount)}
	if props.KubernetesVersion != "" {
		values[clusterv1beta1.PropertyKubernetesVersion] = props.KubernetesVersion
	}
	usage := clusterv1beta1.ResourceUsage{
		Capacity:        resourceList(props.Capacity),
		Allocatable:     resourceList(props.Allocatable),
		Available:       resourceList(props.Available),
		ObservationTime: &now,
	}
	for _, r := range []struct {
		list     corev1.ResourceList
		cpu, mem string
	}{
		{usage.Capacity, clusterv1beta1.PropertyTotalCPU, clusterv1beta1.PropertyTotalMemory},
		{usage.Allocatable, clusterv1beta1.PropertyAllocatableCPU, clusterv1beta1.PropertyAllocatableMemory},
		{usage.Available, clusterv1beta1.PropertyAvailableCPU, clusterv1beta1.PropertyAvailableMemory},
	} {
		if q, ok := r.list[corev1.ResourceCPU]; ok {
			values[r.cpu] = q.String()
		}
		if q, ok := r.list[corev1.ResourceMemory]; ok {
			values[r.mem] = q.String()
		}
	}
	out := make(map[string]clusterv1beta1.PropertyValue, len(values))
	for k, v := range values {
		if old, ok := mc.Status.Properties[k]; ok && old.Value == v && old.ObservationTime != nil {
			out[k] = old
			continue
		}
		out[k] = clusterv1beta1.PropertyValue{Value: v, ObservationTime: &now}
	}
	mc.Status.Properties = out
	if old := mc.Status.ResourceUsage; old.ObservationTime != nil && equality.Semantic.DeepEqual(old.Capacity, usage.Capacity) &&
		equality.Semantic.DeepEqual(old.Allocatable, usage.Allocatable) && equality.Semantic.DeepEqual(old.Available, usage.Available) {
		usage.ObservationTime = old.ObservationTime
	}
	mc.Status.ResourceUsage = usage
}

func resourceList(in map[string]string) corev1.ResourceList {
	if len(in) == 0 {
		return nil
	}
	out := corev1.ResourceList{}
	for k, v := range in {
		if q, err := resource.ParseQuantity(v); err == nil {
			out[corev1.ResourceName(k)] = q
		}
	}
	return out
}

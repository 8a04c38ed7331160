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
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/readiness"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Sweeper runs in the leader: every third of the Lease duration it looks for
// members whose session a replica with an expired (or missing) Lease holds,
// and records them disconnected. A member whose agent reconnected to another
// replica meanwhile is left alone: the write is guarded by the session's
// generation.
type Sweeper struct {
	// Client writes MemberCluster status and lists MemberClusters (the
	// manager's client: reads come from its cache); Direct reads the replica
	// Leases (there are few) and the member before a write, without a cache.
	Client   client.Client
	Direct   client.Reader
	Recorder events.EventRecorder
	// Namespace holds the replica Leases.
	Namespace string
	// Interval is how often it looks. Required.
	Interval time.Duration
	Log      logr.Logger
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// NeedLeaderElection is true.
func (s *Sweeper) NeedLeaderElection() bool { return true }

// Start sweeps every Interval until ctx ends.
func (s *Sweeper) Start(ctx context.Context) error {
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.Log.Error(err, "failed to look for members of lost hub replicas")
		}
	}
}

func (s *Sweeper) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Orphaned returns, among members, those recorded connected through a replica
// whose Lease (in leases, by replica) is missing or expired at now, or was
// taken by a later process of the replica than the one the session began on.
func Orphaned(members []clusterv1beta1.MemberCluster, leases map[string]*coordinationv1.Lease, now time.Time) []*clusterv1beta1.MemberCluster {
	var out []*clusterv1beta1.MemberCluster
	for i := range members {
		mc := &members[i]
		as := mc.Status.AgentSession
		if as == nil || as.HubReplica == "" || !conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) {
			continue
		}
		l := leases[as.HubReplica]
		// A live Lease taken after the session began belongs to a later
		// process of the replica (restarted under the same name), which does
		// not hold the session.
		restarted := l != nil && l.Spec.AcquireTime != nil && as.Generation < l.Spec.AcquireTime.UnixNano()
		if l != nil && !Expired(l, now) && !restarted {
			continue
		}
		out = append(out, mc)
	}
	return out
}

// Sweep looks once.
func (s *Sweeper) Sweep(ctx context.Context) error {
	leaseList := &coordinationv1.LeaseList{}
	if err := s.Direct.List(ctx, leaseList, client.InNamespace(s.Namespace), client.MatchingLabels{LabelHubReplica: "true"}); err != nil {
		return fmt.Errorf("failed to list replica Leases: %w", err)
	}
	leases := map[string]*coordinationv1.Lease{}
	for i := range leaseList.Items {
		l := &leaseList.Items[i]
		if l.Spec.HolderIdentity != nil {
			leases[*l.Spec.HolderIdentity] = l
		}
	}
	members := &clusterv1beta1.MemberClusterList{}
	// Read only (disconnect reads the member again): the cache's objects, not
	// copies of the whole fleet every Interval.
	if err := s.Client.List(ctx, members, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("failed to list MemberClusters: %w", err)
	}
	for _, mc := range Orphaned(members.Items, leases, s.now()) {
		if err := s.disconnect(ctx, mc.Name, *mc.Status.AgentSession); err != nil {
			return err
		}
	}
	return nil
}

// disconnect records a member disconnected if the session lost still is its
// latest one.
func (s *Sweeper) disconnect(ctx context.Context, name string, lost clusterv1beta1.AgentSession) error {
	var written *clusterv1beta1.MemberCluster
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		written = nil
		mc := &clusterv1beta1.MemberCluster{}
		if err := s.Direct.Get(ctx, types.NamespacedName{Name: name}, mc); err != nil {
			return err
		}
		as := mc.Status.AgentSession
		if as == nil || as.Generation != lost.Generation || as.HubReplica != lost.HubReplica {
			return nil // the agent connected again meanwhile
		}
		msg := fmt.Sprintf("hub replica %s, which held the agent's session, stopped renewing its Lease", lost.HubReplica)
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse, clusterv1beta1.ReasonHubReplicaLost, msg, mc.Generation)
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionHealthy, metav1.ConditionUnknown, clusterv1beta1.ReasonHealthUnknown,
			"the agent is not connected", mc.Generation)
		mc.Status.AgentSession = nil
		readiness.SetMemberCluster(mc)
		if err := s.Client.Status().Update(ctx, mc); err != nil {
			return err
		}
		written = mc
		return nil
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to record member %s disconnected: %w", name, err)
	}
	if written != nil {
		replicaLostMembers.Inc()
		s.Log.Info("recorded a member of a lost hub replica as disconnected", "member", name, "replica", lost.HubReplica)
		if s.Recorder != nil {
			s.Recorder.Eventf(written, nil, corev1.EventTypeWarning, clusterv1beta1.ReasonHubReplicaLost, "Disconnect",
				"hub replica %s, which held the agent's session, is gone", lost.HubReplica)
		}
	}
	return nil
}

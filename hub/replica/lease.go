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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LabelHubReplica marks the Leases of hub replicas (value "true").
const LabelHubReplica = "flotilla.io/hub-replica"

// AnnotationProxyAddress, on a replica's Lease, is the host:port at which the
// replica serves the API proxy to its peers (hub/proxy forwards a request
// for a member whose session another replica holds there). Absent when the
// replica serves no proxy.
const AnnotationProxyAddress = "flotilla.io/proxy-address"

// leasePrefix starts the name of every replica Lease.
const leasePrefix = "flotilla-hub-replica-"

// LeaseName is the name of a replica's Lease.
func LeaseName(replica string) string { return leasePrefix + replica }

// Expired reports whether a replica Lease has not been renewed within its
// duration at now.
func Expired(l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return now.After(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}

// Lease keeps one replica's Lease renewed, and says when the replica must
// stop serving because it could not renew it in time (Standing).
type Lease struct {
	Client    client.Client
	Namespace string
	Replica   string
	// Duration is how long the Lease lasts; it is renewed every third of it.
	Duration time.Duration
	Log      logr.Logger
	// Annotations are set on the Lease at every renewal (the replica's
	// AnnotationProxyAddress). Default: none.
	Annotations map[string]string
	// OnLost is called when the replica loses its standing (see Standing),
	// OnRegained when a renewal succeeds again; both may be nil. They are
	// called from the renewing goroutine, one at a time.
	OnLost, OnRegained func()

	cancel context.CancelFunc
	done   chan struct{}
}

// Standing is what a replica may do given when it last renewed its Lease.
//
// The leader counts a replica gone at RenewTime + Duration on its own clock
// (Expired), and then records the replica's members disconnected, which
// starts their fencing leases and their placements' failover. A replica that
// cannot reach its API server keeps acknowledging its agents' heartbeats
// unless it stops, so that its agents would never fence while the leader
// moves their placements: two copies. The rules:
//
//   - A renewal is counted from the moment its request was sent (before the
//     API server stamped RenewTime), so the replica's own count is never late.
//   - The replica stands while less than StaleAfter (two thirds of Duration)
//     has passed since its last successful renewal. After that it ends every
//     session and refuses new ones (and its readiness check fails) until a
//     renewal succeeds again: its agents redial another replica, or, with
//     none, their own fencing lease runs from before the leader's count
//     starts. The third of Duration between the two covers clock rate skew
//     between the replica and the leader and the time to close the sessions.
//   - Renewals happen every third of Duration and, after a failure, every
//     RetryInterval, so that a blip of the API server shorter than StaleAfter
//     less one retry never ends a session.
type Standing struct {
	// Serving: the replica may serve sessions now.
	Serving bool
	// Until is when it stops serving unless it renews first (zero when not
	// serving).
	Until time.Time
}

// StaleAfter is how long after its last successful renewal a replica stops
// serving: two thirds of the Lease's duration.
func StaleAfter(duration time.Duration) time.Duration { return duration * 2 / 3 }

// RetryInterval is how soon a failed renewal is tried again: a fifteenth of the
// Lease's duration (2s for the default 30s), at least 100ms.
func RetryInterval(duration time.Duration) time.Duration {
	return max(duration/15, 100*time.Millisecond)
}

// StandingAt returns a replica's Standing at now, given when its last
// successful renewal was sent.
func StandingAt(lastRenewed, now time.Time, duration time.Duration) Standing {
	until := lastRenewed.Add(StaleAfter(duration))
	if !now.Before(until) {
		return Standing{}
	}
	return Standing{Serving: true, Until: until}
}

// Start creates or takes the Lease at once (so that the replica holds it
// before it serves a session) and then renews it in the background until
// Release.
func (l *Lease) Start(ctx context.Context) error {
	sent := time.Now()
	if err := l.renew(ctx, true, sent); err != nil {
		return err
	}
	ctx, l.cancel = context.WithCancel(ctx)
	l.done = make(chan struct{})
	go func() {
		defer close(l.done)
		l.keepRenewed(ctx, sent)
	}()
	return nil
}

// keepRenewed renews the Lease until ctx ends, and calls OnLost and OnRegained
// as the replica's Standing changes.
func (l *Lease) keepRenewed(ctx context.Context, lastRenewed time.Time) {
	serving := true
	next := time.NewTimer(l.Duration / 3)
	defer next.Stop()
	stale := time.NewTimer(time.Until(StandingAt(lastRenewed, time.Now(), l.Duration).Until))
	defer stale.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-stale.C:
			if st := StandingAt(lastRenewed, time.Now(), l.Duration); st.Serving {
				stale.Reset(time.Until(st.Until))
			} else if serving {
				serving = false
				l.Log.Error(nil, "this replica could not renew its Lease in time: it stops serving agents until it can",
					"lease", LeaseName(l.Replica), "lastRenewed", lastRenewed, "staleAfter", StaleAfter(l.Duration))
				if l.OnLost != nil {
					l.OnLost()
				}
			}
			continue
		case <-next.C:
		}
		sent := time.Now()
		attempt, cancel := context.WithTimeout(ctx, l.Duration/3)
		err := l.renew(attempt, false, sent)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			l.Log.Error(err, "failed to renew this replica's Lease", "lease", LeaseName(l.Replica))
			next.Reset(RetryInterval(l.Duration))
			continue
		}
		lastRenewed = sent
		next.Reset(l.Duration / 3)
		st := StandingAt(lastRenewed, time.Now(), l.Duration)
		if !st.Serving {
			continue // the renewal took longer than the whole standing
		}
		stale.Stop()
		stale.Reset(time.Until(st.Until))
		if !serving {
			serving = true
			l.Log.Info("this replica renewed its Lease again: it serves agents", "lease", LeaseName(l.Replica))
			if l.OnRegained != nil {
				l.OnRegained()
			}
		}
	}
}

// Release stops renewing and deletes the Lease, so that the leader at once
// treats the replica as gone (its sessions have ended by then).
func (l *Lease) Release(ctx context.Context) {
	if l.cancel != nil {
		l.cancel()
		<-l.done
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: LeaseName(l.Replica)}}
	if err := client.IgnoreNotFound(l.Client.Delete(ctx, lease)); err != nil {
		l.Log.Error(err, "failed to delete this replica's Lease", "lease", lease.Name)
	}
}

// renew renews the Lease; acquire (at start) also sets its acquire time to
// now: sessions older than that belonged to an earlier process of the replica.
func (l *Lease) renew(ctx context.Context, acquire bool, at time.Time) error {
	now := metav1.NewMicroTime(at)
	seconds := int32(l.Duration / time.Second)
	key := types.NamespacedName{Namespace: l.Namespace, Name: LeaseName(l.Replica)}
	lease := &coordinationv1.Lease{}
	err := l.Client.Get(ctx, key, lease)
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: key.Name, Annotations: l.Annotations,
				Labels: map[string]string{LabelHubReplica: "true", "app.kubernetes.io/part-of": "flotilla"}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &l.Replica, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now},
		}
		if err := l.Client.Create(ctx, lease); err != nil {
			return fmt.Errorf("failed to create Lease %s: %w", key, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to read Lease %s: %w", key, err)
	}
	for k, v := range l.Annotations {
		if lease.Annotations == nil {
			lease.Annotations = map[string]string{}
		}
		lease.Annotations[k] = v
	}
	lease.Spec.HolderIdentity = &l.Replica
	lease.Spec.LeaseDurationSeconds = &seconds
	lease.Spec.RenewTime = &now
	if acquire || lease.Spec.AcquireTime == nil {
		lease.Spec.AcquireTime = &now
	}
	if err := l.Client.Update(ctx, lease); err != nil {
		return fmt.Errorf("failed to renew Lease %s: %w", key, err)
	}
	return nil
}

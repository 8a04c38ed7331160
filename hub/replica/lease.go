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

// Lease keeps one replica's Lease renewed.
type Lease struct {
	Client    client.Client
	Namespace string
	Replica   string
	// Duration is how long the Lease lasts; it is renewed every third of it.
	Duration time.Duration
	Log      logr.Logger

	cancel context.CancelFunc
	done   chan struct{}
}

// Start creates or takes the Lease at once (so that the replica holds it
// before it serves a session) and then renews it in the background until
// Release.
func (l *Lease) Start(ctx context.Context) error {
	if err := l.renew(ctx, true); err != nil {
		return err
	}
	ctx, l.cancel = context.WithCancel(ctx)
	l.done = make(chan struct{})
	go func() {
		defer close(l.done)
		t := time.NewTicker(l.Duration / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := l.renew(ctx, false); err != nil && ctx.Err() == nil {
				l.Log.Error(err, "failed to renew this replica's Lease", "lease", LeaseName(l.Replica))
			}
		}
	}()
	return nil
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
func (l *Lease) renew(ctx context.Context, acquire bool) error {
	now := metav1.NewMicroTime(time.Now())
	seconds := int32(l.Duration / time.Second)
	key := types.NamespacedName{Namespace: l.Namespace, Name: LeaseName(l.Replica)}
	lease := &coordinationv1.Lease{}
	err := l.Client.Get(ctx, key, lease)
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: key.Name,
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

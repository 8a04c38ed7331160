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

// Package workcleanup bounds ordered removal. A deleted Work stays until its
// member confirms it removed the Work's objects (kcp: downstream before upstream);
// a member that never answers — its agent gone for good — must not hold up a
// placement's or a cluster's deletion forever, so after a timeout the hub lets
// the Work go. The agent still removes the objects if it ever reconnects: it
// states what it holds and the hub tells it what no longer exists.
//
// A Work of a fenced placement (spec.fencing) is not let go on this timeout:
// its copy must be known stopped first, which the fencing controller
// (hub/failover, DecideFencing) decides from the member's last heartbeat and
// the fencing lease.
package workcleanup

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// Reconciler releases deleted Works whose member did not confirm in time.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Timeout is how long a deleted Work waits for its member; 0 waits not at
	// all. The hub sets it from --work-cleanup-timeout (hub/app/options.go
	// holds the default).
	Timeout time.Duration
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// Reconcile handles one Work.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	w := &placementv1beta1.Work{}
	if err := r.Client.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if w.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(w, placementv1beta1.AppliedResourcesCleanupFinalizer) || w.Spec.Fencing != nil {
		return ctrl.Result{}, nil
	}
	wait := Remaining(w.DeletionTimestamp.Time, r.now(), r.timeout())
	if wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if err := pipeline.RemoveFinalizer(ctx, r.Client, w, placementv1beta1.AppliedResourcesCleanupFinalizer, pipeline.ManagerWorkCleanup); err != nil {
		return ctrl.Result{}, err
	}
	if r.Recorder != nil {
		r.Recorder.Eventf(w, nil, corev1.EventTypeWarning, "CleanupTimedOut", "Release",
			"the member did not confirm removing this Work's objects within %s; its agent removes them when it reconnects", r.timeout())
	}
	return ctrl.Result{}, nil
}

// Remaining is how long a Work deleted at deletedAt still waits for its member.
func Remaining(deletedAt, now time.Time, timeout time.Duration) time.Duration {
	if left := deletedAt.Add(timeout).Sub(now); left > 0 {
		return left
	}
	return 0
}

func (r *Reconciler) timeout() time.Duration { return max(r.Timeout, 0) }

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// SetupWithManager registers the controller for deleted Works only.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	deleting := predicate.NewPredicateFuncs(func(o client.Object) bool { return !o.GetDeletionTimestamp().IsZero() })
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("workcleanup").
		For(&placementv1beta1.Work{}, builder.WithPredicates(deleting)).
		Complete(r); err != nil {
		return fmt.Errorf("failed to set up the work cleanup controller: %w", err)
	}
	return nil
}

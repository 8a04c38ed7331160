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

// Package scheduler runs the scheduling stage of the placement pipeline: for each
// placement's latest scheduling-policy snapshot it runs one framework cycle over
// the member clusters and makes the bindings match the decision — one binding per
// chosen cluster — and records on the snapshot its decisions about the chosen
// clusters and the best ranked others (decisions.go).
//
// Reconcile is a short driver over phases (phases.go) that share a scope. The
// scheduler reads the member clusters from its fleet snapshot (hub/scheduler/fleet,
// fed by its MemberCluster watch) and everything else from the manager's informer
// cache, through the indexes of hub/pipeline, and is woken only by events that can
// change a placement's decision (watches.go). Taint and availability evictions are decided
// outside the cycle by hub/failover; the scheduler honours them (graceful.go).
package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/scheduler/fleet"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// Name is the built-in scheduler's name; a placement whose schedulerName is empty
// or this is ours, any other name belongs to an external scheduler.
const Name = "flotilla-scheduler"

// IsOurs reports whether the built-in scheduler schedules the placement.
func IsOurs(p placementv1beta1.PlacementObj) bool {
	name := p.GetPlacementSpec().SchedulerName
	return name == "" || name == Name
}

// Reconciler schedules placements.
type Reconciler struct {
	Client    client.Client
	Scheme    *runtime.Scheme
	Framework *framework.Framework
	// Rand picks among equals (Kratix: one random matching cluster, then sticky).
	Rand *rand.Rand
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// GracefulTimeout bounds how long a binding the failover controller evicts
	// is kept while its replacement is not available yet; 0 keeps none (an
	// evicted binding goes at once). The hub sets it from
	// --eviction-graceful-timeout (hub/app/options.go holds the default).
	GracefulTimeout time.Duration
	// Recorder reports evictions and misplacements as Events on the placement.
	Recorder events.EventRecorder
	// Workers is how many placements are scheduled at once. Default: 1.
	Workers int
	// Spans times each change of a placement through the pipeline: this
	// controller marks each binding it creates (pipeline.StageScheduled).
	// Nil: not timed.
	Spans *pipeline.Spans

	// fleet holds the member clusters for the cycles, fed by the MemberCluster
	// watch (set by SetupWithManager).
	fleet *fleet.Snapshot
}

// scope carries what the phases of one reconcile learn.
type scope struct {
	// key and placement are the placement being reconciled, of either kind (set
	// by Reconcile).
	key       pipeline.PlacementKey
	placement placementv1beta1.PlacementObj
	// snapshot is the latest policy snapshot (set by loadPolicySnapshot).
	snapshot placementv1beta1.PolicySnapshotObj
	// dynamic are the Kratix dynamic selectors and groups the scheduling groups
	// with selectors of their own, "" first (set by loadSelectors).
	dynamic []framework.DynamicSelector
	groups  []string
	// fleet and locations are what the cycles choose among (set by loadWorld).
	fleet     *framework.Fleet
	locations []clusterv1beta1.Location
	// bindings are the placement's bindings in every group (set by loadWorld).
	bindings []placementv1beta1.BindingObj
	// peers are the other placements and their clusters, read only when the
	// policy has placement (anti-)affinity (set by loadWorld).
	peers []framework.PlacementPeer
	// excluded are the clusters the placement must leave: manual evictions and
	// the failover controller's requests (set by loadExclusions).
	excluded map[string]string
	// scheduled is the outcome for the snapshot's Scheduled condition (set by the
	// phase that decides it).
	scheduled *framework.CycleResult
	// recheck is when time alone may change the decision (set by the phases).
	recheck time.Duration
	// done stops the phases after the current one.
	done bool
}

// stopped reports whether a phase decided that nothing is left to do.
func (s *scope) stopped() bool { return s.done }

// Reconcile schedules one placement: a ClusterResourcePlacement for a request
// without namespace, a ResourcePlacement otherwise.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (_ ctrl.Result, reterr error) {
	key := pipeline.KeyFromRequest(req)
	p, err := pipeline.GetPlacement(ctx, r.Client, key)
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !p.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	s := &scope{key: key, placement: p}
	defer func() {
		if reterr == nil && s.snapshot != nil && s.scheduled != nil {
			reterr = r.setScheduled(ctx, s.snapshot, s.scheduled)
		}
	}()
	if err := pipeline.RunPhases(ctx, s, (*scope).stopped,
		pipeline.Phase[scope]{Name: "load the policy snapshot", Run: r.loadPolicySnapshot},
		pipeline.Phase[scope]{Name: "check the scheduler name", Run: r.checkSchedulerName},
		pipeline.Phase[scope]{Name: "load the dynamic selectors", Run: r.loadSelectors},
		pipeline.Phase[scope]{Name: "load the clusters and bindings", Run: r.loadWorld},
		pipeline.Phase[scope]{Name: "load the evictions", Run: r.loadExclusions},
		pipeline.Phase[scope]{Name: "schedule", Run: r.schedule},
		pipeline.Phase[scope]{Name: "unschedule removed groups", Run: r.unscheduleStaleGroups},
		pipeline.Phase[scope]{Name: "record the rebalance", Run: r.recordRebalance},
	); err != nil {
		return ctrl.Result{}, err
	}
	// Only time-bound decisions (a disconnected cluster's grace period, an
	// evicted binding's graceful timeout) wake the scheduler by time.
	return ctrl.Result{RequeueAfter: s.recheck}, nil
}

// setScheduled records the cycle's outcome on the policy snapshot (the
// scheduler is the only writer of the snapshot's status).
func (r *Reconciler) setScheduled(ctx context.Context, snap placementv1beta1.PolicySnapshotObj, res *framework.CycleResult) error {
	patch := client.MergeFrom(snap.DeepCopyObject().(client.Object))
	st := snap.GetPolicySnapshotStatus()
	before := st.DeepCopy()
	setCondition(&st.Conditions, placementv1beta1.ConditionScheduled, res.Status, res.Reason, res.Message, snap.GetGeneration())
	st.TargetClusters = recordedDecisions(res.Decisions)
	if statusEqual(before, st) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, snap, patch, client.FieldOwner(scheduledManager)); err != nil {
		return fmt.Errorf("failed to update policy snapshot status: %w", err)
	}
	return nil
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) gracefulTimeout() time.Duration { return max(r.GracefulTimeout, 0) }

func (r *Reconciler) event(crp placementv1beta1.PlacementObj, eventType, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(crp, nil, eventType, reason, "Schedule", format, args...)
	}
}

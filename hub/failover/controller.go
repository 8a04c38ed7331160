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

package failover

import (
	"context"
	"fmt"
	"sort"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/enqueue"
	"github.com/flotilla-io/flotilla/hub/eviction"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Reconciler requests taint and availability evictions on bindings.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// DefaultTolerationSeconds is how long a placement stays on a cluster with a
	// NoExecute taint it does not tolerate; 0 evicts at once (the hub's flag
	// --default-toleration defaults to 60s).
	DefaultTolerationSeconds int64
	// Limiter paces new eviction requests across the fleet. Default: 1 per
	// second, burst 10.
	Limiter *rate.Limiter
	// PartitionThreshold pauses new requests while more than this fraction of
	// the clusters is unreachable. Default: 0.55.
	PartitionThreshold float64
	// Workers is how many placements are handled at once. Default: 1.
	Workers int
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// IsOurs reports whether the built-in scheduler schedules the placement
	// (others are left to their own scheduler). Default: every placement.
	IsOurs func(placementv1beta1.PlacementObj) bool
}

// Reconcile decides the evictions of one placement.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	key := pipeline.KeyFromRequest(req)
	crp, err := pipeline.GetPlacement(ctx, r.Client, key)
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !crp.GetDeletionTimestamp().IsZero() || (r.IsOurs != nil && !r.IsOurs(crp)) {
		return ctrl.Result{}, nil
	}
	all, err := pipeline.ListBindings(ctx, r.Client, key)
	if err != nil {
		return ctrl.Result{}, err
	}
	active := pipeline.ActiveBindings(all)
	if len(active) == 0 {
		return ctrl.Result{}, nil
	}
	now := r.now()
	var clusters []clusterv1beta1.MemberCluster
	bound := map[string]bool{}
	for _, b := range active {
		cluster := b.GetBindingSpec().TargetCluster
		bound[cluster] = true
		mc := &clusterv1beta1.MemberCluster{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: cluster}, mc); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return ctrl.Result{}, fmt.Errorf("failed to get member cluster %s: %w", cluster, err)
		}
		clusters = append(clusters, *mc)
	}
	policy := crp.GetPlacementSpec().Policy
	d := NoExecuteEvictions(policy, clusters, bound, now, r.DefaultTolerationSeconds)
	recheck := d.RecheckAfter
	unavailable, rc := UnavailableEvictions(policy, clusters, active, now)
	recheck = pipeline.Sooner(recheck, rc)
	for c, ev := range unavailable {
		if _, ok := d.Evict[c]; !ok {
			d.Evict[c] = ev
		}
	}
	sort.Slice(active, func(i, j int) bool {
		return active[i].GetBindingSpec().TargetCluster < active[j].GetBindingSpec().TargetCluster
	})
	var partition *string
	for _, b := range active {
		cluster := b.GetBindingSpec().TargetCluster
		gen := b.GetGeneration()
		own := pipeline.OwnConditions(b.GetBindingStatus().Conditions, placementv1beta1.ConditionEvictionRequested)
		ev, evict := d.Evict[cluster]
		switch {
		case evict && pipeline.EvictionRequested(b) != nil:
			// Requested already: keep it as it is.
		case evict:
			if partition == nil {
				why, err := r.partitioned(ctx)
				if err != nil {
					return ctrl.Result{}, err
				}
				partition = &why
			}
			if *partition != "" {
				log.FromContext(ctx).Info("not evicting", "cluster", cluster, "reason", *partition)
				conditions.Set(&own, placementv1beta1.ConditionEvictionRequested, metav1.ConditionFalse, placementv1beta1.ReasonKeptDespiteTaint, *partition, gen)
				// The clusters coming back do not wake this placement: look again.
				recheck = pipeline.Sooner(recheck, 10*time.Second)
				break
			}
			if !r.limiter().Allow() {
				recheck = pipeline.Sooner(recheck, time.Second)
				continue
			}
			reason := placementv1beta1.ReasonTaintNotTolerated
			if ev.Cause == "unavailable" {
				reason = placementv1beta1.ReasonUnavailableTooLong
			}
			conditions.Set(&own, placementv1beta1.ConditionEvictionRequested, metav1.ConditionTrue, reason, ev.Reason, gen)
			cause := ev.Cause
			if cause == "" {
				cause = "taint"
			}
			eviction.CountEviction(cause)
			r.event(crp, corev1.EventTypeWarning, placementv1beta1.ReasonEvicting, "evicting from %s: %s", cluster, ev.Reason)
		case d.Kept[cluster] != "":
			conditions.Set(&own, placementv1beta1.ConditionEvictionRequested, metav1.ConditionFalse, placementv1beta1.ReasonKeptDespiteTaint, d.Kept[cluster], gen)
		default:
			own = nil
		}
		if err := pipeline.ApplyBindingStatus(ctx, r.Client, b, pipeline.ManagerFailover, []string{placementv1beta1.ConditionEvictionRequested}, pipeline.BindingStatus{Conditions: own}); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: recheck}, nil
}

// partitioned says why evictions are paused ("" when they are not): so many
// clusters are unreachable at once that the hub, not the clusters, is the
// likely failure.
func (r *Reconciler) partitioned(ctx context.Context) (string, error) {
	list := &clusterv1beta1.MemberClusterList{}
	if err := r.Client.List(ctx, list); err != nil {
		return "", fmt.Errorf("failed to list member clusters: %w", err)
	}
	if len(list.Items) < 3 {
		return "", nil
	}
	down := 0
	for i := range list.Items {
		if conditions.IsFalse(list.Items[i].Status.Conditions, clusterv1beta1.ConditionAgentConnected) {
			down++
		}
	}
	threshold := r.PartitionThreshold
	if threshold == 0 {
		threshold = 0.55
	}
	if float64(down) > threshold*float64(len(list.Items)) {
		return fmt.Sprintf("%d of %d clusters are unreachable: taint evictions are paused until most return", down, len(list.Items)), nil
	}
	return "", nil
}

func (r *Reconciler) limiter() *rate.Limiter {
	if r.Limiter == nil {
		r.Limiter = rate.NewLimiter(rate.Limit(1), 10)
	}
	return r.Limiter
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) event(crp placementv1beta1.PlacementObj, eventType, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(crp, nil, eventType, reason, "Evict", format, args...)
	}
}

// SetupWithManager registers the controller: placements whose spec changed,
// binding changes of state or availability, and member-cluster changes of
// taints or connection/health — the latter only for the placements on that
// cluster (pipeline.IndexBindingCluster).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("failover").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		For(&placementv1beta1.ClusterResourcePlacement{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&placementv1beta1.ResourcePlacement{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&placementv1beta1.ClusterResourceBinding{}, enqueue.ByPlacementLabel(), builder.WithPredicates(bindingChanged())).
		Watches(&placementv1beta1.ResourceBinding{}, enqueue.ByPlacementLabel(), builder.WithPredicates(bindingChanged())).
		Watches(&clusterv1beta1.MemberCluster{}, r.clusterHandler()).
		Complete(r)
}

func bindingChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(placementv1beta1.BindingObj)
		n, ok2 := e.ObjectNew.(placementv1beta1.BindingObj)
		if !ok1 || !ok2 {
			return true
		}
		return o.GetBindingSpec().State != n.GetBindingSpec().State || !o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) ||
			pipeline.ConditionChanged(o.GetBindingStatus().Conditions, n.GetBindingStatus().Conditions, placementv1beta1.ConditionAvailable)
	}}
}

// clusterHandler wakes the placements on a cluster whose taints or
// connection/health changed; heartbeat refreshes wake nothing.
func (r *Reconciler) clusterHandler() handler.EventHandler {
	enqueueOn := func(ctx context.Context, cluster string, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		for _, req := range enqueue.PlacementsOnCluster(ctx, r.Client, cluster) {
			q.Add(req)
		}
	}
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			o, ok1 := e.ObjectOld.(*clusterv1beta1.MemberCluster)
			n, ok2 := e.ObjectNew.(*clusterv1beta1.MemberCluster)
			if !ok1 || !ok2 {
				return
			}
			if enqueue.TaintsChanged(o, n) || enqueue.HealthChanged(o, n) {
				enqueueOn(ctx, n.Name, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueueOn(ctx, e.Object.GetName(), q)
		},
	}
}

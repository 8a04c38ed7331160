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
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/enqueue"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// FencingReconciler carries out DecideFencing for placements with
// policy.fencing. It reads the placement, its bindings that are no longer
// active (Unscheduled or deleted: the copies it leaves), their Works and the
// member clusters' AgentConnected condition and last heartbeat. It writes,
// as field manager flotilla-fencing:
//   - the placement's Fencing condition, with an Event when it turns True
//     (FencingWaiting) or back to False (FencingClear);
//   - the cleanup finalizer of a deleted Work whose copy counts as stopped
//     because the lease ran out, so that the Work and then its binding go and
//     the scheduler may start the placement elsewhere (hub/scheduler
//     fencedCreates).
//
// It keeps no state: a restarted hub decides again from the same objects.
type FencingReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Margin is added to the fencing lease before a cut-off copy counts as
	// stopped (hub --fencing-margin). Default: DefaultFencingMargin.
	Margin time.Duration
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// Reconcile decides and carries out the fencing of one placement.
func (r *FencingReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	key := pipeline.KeyFromRequest(req)
	p, err := pipeline.GetPlacement(ctx, r.Client, key)
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	policy := p.GetPlacementSpec().Policy
	if policy == nil || policy.Fencing == nil {
		return ctrl.Result{}, r.setCondition(ctx, key, p, nil)
	}
	all, err := pipeline.ListBindings(ctx, r.Client, key)
	if err != nil {
		return ctrl.Result{}, err
	}
	in := FencingInput{Now: r.now(), Lease: policy.Fencing.Lease(), Margin: r.margin()}
	works := map[string][]placementv1beta1.Work{}
	for _, b := range all {
		if pipeline.IsActive(b) {
			continue
		}
		c, ws, err := r.leavingCopy(ctx, b)
		if err != nil {
			return ctrl.Result{}, err
		}
		in.Leaving = append(in.Leaving, c)
		works[c.Cluster] = append(works[c.Cluster], ws...)
	}
	plan := DecideFencing(in)
	for cluster, names := range plan.Release {
		for i := range works[cluster] {
			w := &works[cluster][i]
			if !slices.Contains(names, w.Name) {
				continue
			}
			if err := pipeline.RemoveFinalizer(ctx, r.Client, w, placementv1beta1.AppliedResourcesCleanupFinalizer, pipeline.ManagerFencing); err != nil {
				return ctrl.Result{}, err
			}
			log.FromContext(ctx).Info("fencing lease ran out: counting the copy as stopped", "cluster", cluster, "work", klogKey(w))
			r.event(p, corev1.EventTypeNormal, placementv1beta1.ReasonFencingClear, "Release",
				"the copy on %s counts as stopped: its agent was cut off for the fencing lease of %s plus the margin of %s", cluster, in.Lease, in.Margin)
		}
	}
	if err := r.setCondition(ctx, key, p, &plan.Condition); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: plan.RecheckAfter}, nil
}

// leavingCopy loads the copy a binding that is no longer active stands for:
// its Works and what the hub knows of its cluster's agent.
func (r *FencingReconciler) leavingCopy(ctx context.Context, b placementv1beta1.BindingObj) (LeavingCopy, []placementv1beta1.Work, error) {
	cluster := b.GetBindingSpec().TargetCluster
	c := LeavingCopy{Cluster: cluster}
	list := &placementv1beta1.WorkList{}
	if err := r.Client.List(ctx, list, client.InNamespace(clusterv1beta1.MemberNamespace(cluster)),
		client.MatchingLabels{placementv1beta1.LabelParentBinding: b.GetName()}); err != nil {
		return c, nil, fmt.Errorf("failed to list the Works of binding %s: %w", b.GetName(), err)
	}
	var ws []placementv1beta1.Work
	for _, w := range list.Items {
		if w.Labels[placementv1beta1.LabelPlacementNamespace] != b.GetNamespace() {
			continue
		}
		if !w.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(&w, placementv1beta1.AppliedResourcesCleanupFinalizer) {
			continue // going: nothing holds it
		}
		ws = append(ws, w)
		c.Works = append(c.Works, LeavingWork{Name: w.Name, Deleting: !w.DeletionTimestamp.IsZero()})
	}
	mc := &clusterv1beta1.MemberCluster{}
	err := r.Client.Get(ctx, types.NamespacedName{Name: cluster}, mc)
	switch {
	case apierrors.IsNotFound(err):
		return c, ws, nil
	case err != nil:
		return c, nil, fmt.Errorf("failed to get member cluster %s: %w", cluster, err)
	}
	c.Connected, c.LastHeard = LastHeard(mc)
	return c, ws, nil
}

// LastHeard says whether a member's agent is connected and, when it is not,
// when the hub last heard from it: the last heartbeat the hub received
// (status.lastHeartbeatTime, which the hub records when the session ends).
// When the hub replica that held the session was lost (HubReplicaLost), that
// record may predate the agent's last heartbeats, so the time the leader
// recorded the member disconnected counts instead, if later. Zero when the
// hub never heard from it.
func LastHeard(mc *clusterv1beta1.MemberCluster) (connected bool, last time.Time) {
	c := conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected)
	if c != nil && c.Status == metav1.ConditionTrue {
		return true, time.Time{}
	}
	if mc.Status.LastHeartbeatTime != nil {
		last = mc.Status.LastHeartbeatTime.Time
	}
	if c != nil && c.Reason == clusterv1beta1.ReasonHubReplicaLost && c.LastTransitionTime.After(last) {
		last = c.LastTransitionTime.Time
	}
	return false, last
}

// setCondition writes the placement's Fencing condition (nil removes it) with
// server-side apply, owning that condition only; nothing is written when it
// is as wanted. A change of status is announced with an Event.
func (r *FencingReconciler) setCondition(ctx context.Context, key pipeline.PlacementKey, p placementv1beta1.PlacementObj, want *metav1.Condition) error {
	typ := p.PlacementConditionType(placementv1beta1.ConditionFencing)
	existing := conditions.Get(p.GetPlacementStatus().Conditions, typ).DeepCopy()
	wrote, err := pipeline.ApplyPlacementCondition(ctx, r.Client, key, p, pipeline.ManagerFencing, typ, want)
	if err != nil || !wrote {
		return err
	}
	if want != nil && (existing == nil || existing.Status != want.Status) && (existing != nil || want.Status == metav1.ConditionTrue) {
		eventType := corev1.EventTypeNormal
		if want.Status == metav1.ConditionTrue {
			eventType = corev1.EventTypeWarning
		}
		r.event(p, eventType, want.Reason, "Fence", "%s", want.Message)
	}
	return nil
}

func (r *FencingReconciler) event(p placementv1beta1.PlacementObj, eventType, reason, action, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(p, nil, eventType, reason, action, format, args...)
	}
}

func (r *FencingReconciler) margin() time.Duration {
	if r.Margin > 0 {
		return r.Margin
	}
	return DefaultFencingMargin
}

func (r *FencingReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func klogKey(w *placementv1beta1.Work) string { return w.Namespace + "/" + w.Name }

// SetupWithManager registers the controller: placements whose spec changed,
// their bindings' changes of state or deletion, their Works' deletion and
// finalizers, and member clusters' changes of connection — for the
// placements on that cluster.
func (r *FencingReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("fencing").
		For(&placementv1beta1.ClusterResourcePlacement{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&placementv1beta1.ResourcePlacement{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&placementv1beta1.ClusterResourceBinding{}, enqueue.ByPlacementLabel(), builder.WithPredicates(fencingBindingChanged())).
		Watches(&placementv1beta1.ResourceBinding{}, enqueue.ByPlacementLabel(), builder.WithPredicates(fencingBindingChanged())).
		Watches(&placementv1beta1.Work{}, handler.EnqueueRequestsFromMapFunc(placementOfWork), builder.WithPredicates(workDeletionChanged())).
		Watches(&clusterv1beta1.MemberCluster{}, r.clusterHandler()).
		Complete(r)
}

func fencingBindingChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(placementv1beta1.BindingObj)
		n, ok2 := e.ObjectNew.(placementv1beta1.BindingObj)
		if !ok1 || !ok2 {
			return true
		}
		return o.GetBindingSpec().State != n.GetBindingSpec().State || !o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
	}}
}

func workDeletionChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !e.ObjectOld.GetDeletionTimestamp().Equal(e.ObjectNew.GetDeletionTimestamp()) ||
				len(e.ObjectOld.GetFinalizers()) != len(e.ObjectNew.GetFinalizers())
		},
	}
}

// placementOfWork maps a fenced Work to its placement, by its labels.
func placementOfWork(_ context.Context, o client.Object) []reconcile.Request {
	w, ok := o.(*placementv1beta1.Work)
	if !ok || w.Spec.Fencing == nil {
		return nil
	}
	name := w.Labels[placementv1beta1.LabelPlacementName]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: w.Labels[placementv1beta1.LabelPlacementNamespace], Name: name}}}
}

// clusterHandler wakes the placements on a cluster whose agent connected or
// disconnected (heartbeats wake nothing).
func (r *FencingReconciler) clusterHandler() handler.EventHandler {
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			o, ok1 := e.ObjectOld.(*clusterv1beta1.MemberCluster)
			n, ok2 := e.ObjectNew.(*clusterv1beta1.MemberCluster)
			if !ok1 || !ok2 {
				return
			}
			if pipeline.ConditionChanged(o.Status.Conditions, n.Status.Conditions, clusterv1beta1.ConditionAgentConnected) {
				for _, req := range enqueue.PlacementsOnCluster(ctx, r.Client, n.Name) {
					q.Add(req)
				}
			}
		},
	}
}

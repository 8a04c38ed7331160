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
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	"github.com/flotilla-io/flotilla/pkg/taints"
)

// startedMemory is how long a failback this hub started counts as in flight
// even when the cache does not show its request yet.
const startedMemory = 30 * time.Second

// FailbackReconciler carries out DecideFailback for the placements with
// policy.failback. It loads the input from the cache (the placement's bindings,
// the member clusters, the placement's failure record, the failbacks under way
// across the fleet), and writes, under pipeline.ManagerFailback, only:
//
//   - the FailbackRequested condition of the binding on the cluster the
//     placement leaves (the scheduler then binds the target and removes the old
//     copy once the new one is Available: hub/scheduler failbackHolds);
//   - the placement's Failback condition;
//   - the placement's failure record (AnnotationFailbackFailures), so that the
//     back-off survives a hub restart.
//
// Everything else it needs survives a restart too: a move under way is the
// FailbackRequested condition, and a cluster's eligibility is in its status.
type FailbackReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// IsOurs reports whether the built-in scheduler schedules the placement.
	// Default: every placement.
	IsOurs func(placementv1beta1.PlacementObj) bool

	mu sync.Mutex
	// started are the failbacks this hub started in the last startedMemory, by
	// placement: the cache may not show their requests to the next decision yet.
	started map[pipeline.PlacementKey]time.Time
}

// Reconcile decides and carries out the failback of one placement.
func (r *FailbackReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	key := pipeline.KeyFromRequest(req)
	p, err := pipeline.GetPlacement(ctx, r.Client, key)
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !p.GetDeletionTimestamp().IsZero() || (r.IsOurs != nil && !r.IsOurs(p)) {
		return ctrl.Result{}, nil
	}
	policy := p.GetPlacementSpec().Policy
	if policy == nil || policy.Failback == nil {
		return ctrl.Result{}, r.setCondition(ctx, key, p, nil)
	}
	now := r.now()
	all, err := pipeline.ListBindings(ctx, r.Client, key)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, b := range all {
		// A binding given up is no longer active: its request is done, and must
		// not move the placement again should the scheduler reuse the binding.
		if !pipeline.IsActive(b) && b.GetDeletionTimestamp().IsZero() && pipeline.FailbackRequested(b) != nil {
			if err := pipeline.ApplyBindingStatus(ctx, r.Client, b, pipeline.ManagerFailback, []string{placementv1beta1.ConditionFailbackRequested}, pipeline.BindingStatus{}); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	active := pipeline.ActiveBindings(all)
	failures, changed := recordFailures(parseFailures(p.GetAnnotations()[placementv1beta1.AnnotationFailbackFailures]), active, now)
	if changed {
		if err := r.writeFailures(ctx, p, failures); err != nil {
			return ctrl.Result{}, err
		}
	}
	members := &clusterv1beta1.MemberClusterList{}
	if err := r.Client.List(ctx, members); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to list member clusters: %w", err)
	}
	ranks := newRanker(policy)
	in := FailbackInput{Now: now, Policy: policy.Failback}
	placed := map[string]bool{}
	var from placementv1beta1.BindingObj
	evicting := false
	for _, b := range active {
		cluster := b.GetBindingSpec().TargetCluster
		placed[cluster] = true
		if pipeline.FailbackRequested(b) != nil {
			from = b
		} else if pipeline.EvictionRequested(b) != nil {
			evicting = true
		}
	}
	for i := range members.Items {
		mc := &members.Items[i]
		rank := ranks.rank(mc.Labels)
		if placed[mc.Name] {
			in.Placed = append(in.Placed, PlacedCluster{Name: mc.Name, Rank: rank})
			continue
		}
		if since, ok := eligibleSince(mc, policy.Tolerations); ok && rank > 0 {
			in.Candidates = append(in.Candidates, CandidateCluster{Name: mc.Name, Rank: rank, EligibleSince: since, Failures: failures[mc.Name]})
		}
	}
	if from != nil && evicting {
		// The placement fails over while it moves back (the target, or another
		// of its clusters, is lost): the failback gives way, and the scheduler
		// keeps the old copy.
		log.FromContext(ctx).Info("cancelling the failback: the placement is being evicted", "from", from.GetBindingSpec().TargetCluster)
		if err := pipeline.ApplyBindingStatus(ctx, r.Client, from, pipeline.ManagerFailback, []string{placementv1beta1.ConditionFailbackRequested}, pipeline.BindingStatus{}); err != nil {
			return ctrl.Result{}, err
		}
		from = nil
	}
	in.Moving = from != nil
	inFlight, err := r.inFlight(ctx, key, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	in.InFlight = inFlight
	d := DecideFailback(in)
	log.FromContext(ctx).V(1).Info("failback decided", "action", d.Action, "from", d.From, "to", d.To, "why", d.Why)

	var cond *metav1.Condition
	switch {
	case d.Action == FailbackMove:
		var b placementv1beta1.BindingObj
		for _, a := range active {
			if a.GetBindingSpec().TargetCluster == d.From {
				b = a
			}
		}
		own := pipeline.OwnConditions(b.GetBindingStatus().Conditions, placementv1beta1.ConditionFailbackRequested)
		conditions.Set(&own, placementv1beta1.ConditionFailbackRequested, metav1.ConditionTrue, placementv1beta1.ReasonFailingBack,
			pipeline.FailbackMessage(d.To, d.Why), b.GetGeneration())
		if err := pipeline.ApplyBindingStatus(ctx, r.Client, b, pipeline.ManagerFailback, []string{placementv1beta1.ConditionFailbackRequested}, pipeline.BindingStatus{Conditions: own}); err != nil {
			return ctrl.Result{}, err
		}
		r.remember(key, now)
		countFailback()
		if r.Recorder != nil {
			r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, placementv1beta1.ReasonFailingBack, "Failback", "moving back from %s to %s: %s", d.From, d.To, d.Why)
		}
		cond = &metav1.Condition{Status: metav1.ConditionTrue, Reason: placementv1beta1.ReasonFailbackInProgress,
			Message: fmt.Sprintf("moving back from %s to %s: the copy on %s stays until the one on %s is Available", d.From, d.To, d.From, d.To)}
	case in.Moving:
		to := pipeline.FailbackTarget(from)
		cond = &metav1.Condition{Status: metav1.ConditionTrue, Reason: placementv1beta1.ReasonFailbackInProgress,
			Message: fmt.Sprintf("moving back from %s to %s: the copy on %s stays until the one on %s is Available", from.GetBindingSpec().TargetCluster, to, from.GetBindingSpec().TargetCluster, to)}
	case d.Action == FailbackWait && d.BackingOff:
		cond = &metav1.Condition{Status: metav1.ConditionFalse, Reason: placementv1beta1.ReasonFailbackHeldBack,
			Message: fmt.Sprintf("%s; held back until %s", d.Why, now.Add(d.RecheckAfter).UTC().Format(time.RFC3339))}
	case d.Action == FailbackWait:
		cond = &metav1.Condition{Status: metav1.ConditionFalse, Reason: placementv1beta1.ReasonFailbackWaiting,
			Message: fmt.Sprintf("%s; waiting until %s", d.Why, now.Add(d.RecheckAfter).UTC().Format(time.RFC3339))}
	default:
		cond = &metav1.Condition{Status: metav1.ConditionFalse, Reason: placementv1beta1.ReasonFailbackNotNeeded, Message: d.Why}
	}
	if err := r.setCondition(ctx, key, p, cond); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: d.RecheckAfter}, nil
}

// inFlight counts the other placements failing back across the fleet: those
// with a binding whose FailbackRequested is True, and those this hub started a
// failback of in the last startedMemory (not in the cache yet).
func (r *FailbackReconciler) inFlight(ctx context.Context, self pipeline.PlacementKey, now time.Time) (int, error) {
	moving := map[pipeline.PlacementKey]bool{}
	crbs := &placementv1beta1.ClusterResourceBindingList{}
	if err := r.Client.List(ctx, crbs); err != nil {
		return 0, fmt.Errorf("failed to list bindings: %w", err)
	}
	for i := range crbs.Items {
		if b := &crbs.Items[i]; pipeline.IsActive(b) && pipeline.FailbackRequested(b) != nil {
			if k, ok := pipeline.OwnerKey(b); ok {
				moving[k] = true
			}
		}
	}
	rbs := &placementv1beta1.ResourceBindingList{}
	if err := r.Client.List(ctx, rbs); err != nil {
		return 0, fmt.Errorf("failed to list bindings: %w", err)
	}
	for i := range rbs.Items {
		if b := &rbs.Items[i]; pipeline.IsActive(b) && pipeline.FailbackRequested(b) != nil {
			if k, ok := pipeline.OwnerKey(b); ok {
				moving[k] = true
			}
		}
	}
	r.mu.Lock()
	for k, at := range r.started {
		if now.Sub(at) > startedMemory {
			delete(r.started, k)
			continue
		}
		moving[k] = true
	}
	r.mu.Unlock()
	delete(moving, self)
	return len(moving), nil
}

func (r *FailbackReconciler) remember(key pipeline.PlacementKey, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started == nil {
		r.started = map[pipeline.PlacementKey]time.Time{}
	}
	r.started[key] = now
}

// setCondition writes the placement's Failback condition (nil removes it) with
// server-side apply, owning that condition and nothing else; it writes nothing
// when the condition is as wanted.
func (r *FailbackReconciler) setCondition(ctx context.Context, key pipeline.PlacementKey, p placementv1beta1.PlacementObj, want *metav1.Condition) error {
	_, err := pipeline.ApplyPlacementCondition(ctx, r.Client, key, p, pipeline.ManagerFailback, p.PlacementConditionType(placementv1beta1.ConditionFailback), want)
	return err
}

// writeFailures records the placement's failures in its annotation, with the
// resourceVersion read, so that nothing another writer changed is lost.
func (r *FailbackReconciler) writeFailures(ctx context.Context, p placementv1beta1.PlacementObj, failures map[string][]time.Time) error {
	before := p.DeepCopyObject().(client.Object)
	annotations := maps.Clone(p.GetAnnotations())
	if annotations == nil {
		annotations = map[string]string{}
	}
	if len(failures) == 0 {
		delete(annotations, placementv1beta1.AnnotationFailbackFailures)
	} else {
		annotations[placementv1beta1.AnnotationFailbackFailures] = formatFailures(failures)
	}
	p.SetAnnotations(annotations)
	if err := r.Client.Patch(ctx, p, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(pipeline.ManagerFailback)); err != nil {
		return fmt.Errorf("failed to record the failures of the placement: %w", err)
	}
	return nil
}

// parseFailures reads AnnotationFailbackFailures; what does not parse is
// dropped (the record only lengthens back-offs).
func parseFailures(s string) map[string][]time.Time {
	out := map[string][]time.Time{}
	if s == "" {
		return out
	}
	raw := map[string][]string{}
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return out
	}
	for cluster, times := range raw {
		for _, v := range times {
			if t, err := time.Parse(time.RFC3339, v); err == nil {
				out[cluster] = append(out[cluster], t)
			}
		}
	}
	return out
}

func formatFailures(failures map[string][]time.Time) string {
	raw := map[string][]string{}
	for cluster, times := range failures {
		for _, t := range times {
			raw[cluster] = append(raw[cluster], t.UTC().Format(time.RFC3339))
		}
	}
	data, _ := json.Marshal(raw) // a map of string slices always encodes
	return string(data)
}

// recordFailures adds to failures each eviction of an active binding
// (EvictionRequested True: the cluster was lost, or the resources stayed
// unavailable) at the time it was requested, and forgets failures older than
// FailureWindow. It reports whether the record changed.
func recordFailures(failures map[string][]time.Time, active []placementv1beta1.BindingObj, now time.Time) (map[string][]time.Time, bool) {
	changed := false
	for _, b := range active {
		c := pipeline.EvictionRequested(b)
		if c == nil {
			continue
		}
		cluster, at := b.GetBindingSpec().TargetCluster, c.LastTransitionTime.Time.Truncate(time.Second)
		known := false
		for _, t := range failures[cluster] {
			known = known || t.Equal(at)
		}
		if !known {
			failures[cluster] = append(failures[cluster], at)
			changed = true
		}
	}
	for cluster, times := range failures {
		kept := times[:0]
		for _, t := range times {
			if now.Sub(t) <= FailureWindow {
				kept = append(kept, t)
			}
		}
		sort.Slice(kept, func(i, j int) bool { return kept[i].Before(kept[j]) })
		if len(kept) != len(times) {
			changed = true
		}
		if len(kept) == 0 {
			delete(failures, cluster)
		} else {
			failures[cluster] = kept
		}
	}
	return failures, changed
}

// ranker gives a cluster its clusterPreferences rank: k-i for the first of k
// groups (from 0) whose selector it matches, 0 for none (as the scheduler's
// ClusterPreferences plugin scores it).
type ranker []labels.Selector

func newRanker(policy *placementv1beta1.PlacementPolicy) ranker {
	var out ranker
	for _, pref := range policy.ClusterPreferences {
		sel, err := metav1.LabelSelectorAsSelector(&pref.LabelSelector)
		if err != nil {
			sel = labels.Nothing()
		}
		out = append(out, sel)
	}
	return out
}

func (r ranker) rank(l map[string]string) int32 {
	for i, sel := range r {
		if sel.Matches(labels.Set(l)) {
			return int32(len(r) - i)
		}
	}
	return 0
}

// eligibleSince reports whether a cluster is eligible for the placement now —
// joined, connected, healthy, not being deleted, every NoSchedule and
// NoExecute taint tolerated — and since when without a break: the latest
// transition of those conditions.
func eligibleSince(mc *clusterv1beta1.MemberCluster, tolerations []placementv1beta1.Toleration) (time.Time, bool) {
	if !mc.DeletionTimestamp.IsZero() {
		return time.Time{}, false
	}
	for i := range mc.Spec.Taints {
		t := &mc.Spec.Taints[i]
		if (t.Effect == clusterv1beta1.TaintEffectNoSchedule || t.Effect == clusterv1beta1.TaintEffectNoExecute) && taints.Matching(t, tolerations) == nil {
			return time.Time{}, false
		}
	}
	var since time.Time
	for _, typ := range []string{clusterv1beta1.ConditionJoined, clusterv1beta1.ConditionAgentConnected, clusterv1beta1.ConditionHealthy} {
		c := conditions.Get(mc.Status.Conditions, typ)
		if c == nil || c.Status != metav1.ConditionTrue {
			return time.Time{}, false
		}
		if c.LastTransitionTime.After(since) {
			since = c.LastTransitionTime.Time
		}
	}
	return since, true
}

func (r *FailbackReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// SetupWithManager registers the controller: placements whose spec changed,
// their bindings' changes of state, availability and eviction or failback
// requests, and member clusters' changes of health, taints or labels — which
// wake every placement with policy.failback.
func (r *FailbackReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("failback").
		For(&placementv1beta1.ClusterResourcePlacement{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&placementv1beta1.ResourcePlacement{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&placementv1beta1.ClusterResourceBinding{}, enqueue.ByPlacementLabel(), builder.WithPredicates(failbackBindingChanged())).
		Watches(&placementv1beta1.ResourceBinding{}, enqueue.ByPlacementLabel(), builder.WithPredicates(failbackBindingChanged())).
		Watches(&clusterv1beta1.MemberCluster{}, r.clusterHandler()).
		Complete(r)
}

func failbackBindingChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(placementv1beta1.BindingObj)
		n, ok2 := e.ObjectNew.(placementv1beta1.BindingObj)
		if !ok1 || !ok2 {
			return true
		}
		oc, nc := o.GetBindingStatus().Conditions, n.GetBindingStatus().Conditions
		return o.GetBindingSpec().State != n.GetBindingSpec().State || !o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) ||
			pipeline.ConditionChanged(oc, nc, placementv1beta1.ConditionAvailable) ||
			pipeline.ConditionChanged(oc, nc, placementv1beta1.ConditionEvictionRequested) ||
			pipeline.ConditionChanged(oc, nc, placementv1beta1.ConditionFailbackRequested)
	}}
}

// clusterHandler wakes the placements with policy.failback when a cluster's
// health, taints or labels change (heartbeats wake nothing).
func (r *FailbackReconciler) clusterHandler() handler.EventHandler {
	enqueueAll := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		all, err := pipeline.ListPlacements(ctx, r.Client)
		if err != nil {
			log.FromContext(ctx).Error(err, "failed to list placements for failback")
			return
		}
		for _, p := range all {
			if pol := p.GetPlacementSpec().Policy; pol != nil && pol.Failback != nil {
				q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)})
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, _ event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueueAll(ctx, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			o, ok1 := e.ObjectOld.(*clusterv1beta1.MemberCluster)
			n, ok2 := e.ObjectNew.(*clusterv1beta1.MemberCluster)
			if !ok1 || !ok2 {
				return
			}
			if enqueue.TaintsChanged(o, n) || enqueue.HealthChanged(o, n) || !maps.Equal(o.Labels, n.Labels) {
				enqueueAll(ctx, q)
			}
		},
		DeleteFunc: func(ctx context.Context, _ event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueueAll(ctx, q)
		},
	}
}

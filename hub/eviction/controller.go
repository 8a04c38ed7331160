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

package eviction

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// DefaultRetryInterval is how often an eviction blocked by its placement's
// disruption budget is tried again, unless a change of the placement's bindings or
// budget tries it sooner.
const DefaultRetryInterval = 10 * time.Second

// Reconciler carries out ClusterResourcePlacementEvictions.
type Reconciler struct {
	// Client reads the evictions and writes their status. Required.
	Client client.Client

	// Reader reads what an eviction is decided on: the placement, its bindings, its
	// other evictions and its budget. It should read from the API server rather
	// than a cache, so that evictions decided one after another always see each
	// other (two evictions must not both spend the same budget). Default: Client.
	Reader client.Reader

	// Recorder records an Event on the placement when an eviction executes.
	// Default: no Events.
	Recorder events.EventRecorder

	// RetryInterval is how often a blocked eviction is tried again.
	// Default: DefaultRetryInterval.
	RetryInterval time.Duration
}

// scope carries what the phases of one reconcile learn.
type scope struct {
	// eviction is the object being reconciled (set by Reconcile).
	eviction *placementv1beta1.ClusterResourcePlacementEviction
	// placement is the placement to evict, nil if it does not exist (set by
	// loadPlacement).
	placement *placementv1beta1.ClusterResourcePlacement
	// active are the placement's active bindings (set by loadBindings).
	active []placementv1beta1.ClusterResourceBinding
	// onCluster is whether one of them is on the eviction's cluster (set by
	// loadBindings).
	onCluster bool
	// evicting are the clusters other executed evictions are taking the placement
	// off (set by loadBindings).
	evicting map[string]bool
	// budget is the placement's disruption budget, nil if it has none (set by
	// loadBudget).
	budget *placementv1beta1.ClusterResourcePlacementDisruptionBudget
	// executed is whether this reconcile executed the eviction (set by decide).
	executed bool
	// done is whether the eviction was found invalid, so that the phases after
	// validate do not run (set by validate).
	done bool
	// requeue is when to decide again: a budget refused the eviction (set by
	// decide).
	requeue time.Duration
}

// stopped reports whether a phase decided that nothing is left to do.
func (s *scope) stopped() bool { return s.done || s.requeue > 0 }

// Reconcile decides one eviction, unless it was decided already.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (_ ctrl.Result, reterr error) {
	ev := &placementv1beta1.ClusterResourcePlacementEviction{}
	if err := r.Client.Get(ctx, req.NamespacedName, ev); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if isFinal(ev) || !ev.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	s := &scope{eviction: ev}
	before := ev.DeepCopy()
	defer func() {
		if err := r.patchStatus(ctx, before, ev); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
			return
		}
		if s.executed {
			r.announce(ctx, s)
		}
	}()
	err := pipeline.RunPhases(ctx, s, (*scope).stopped,
		pipeline.Phase[scope]{Name: "load the placement", Run: r.loadPlacement},
		pipeline.Phase[scope]{Name: "load the bindings", Run: r.loadBindings},
		pipeline.Phase[scope]{Name: "validate", Run: r.validate},
		pipeline.Phase[scope]{Name: "load the disruption budget", Run: r.loadBudget},
		pipeline.Phase[scope]{Name: "decide", Run: r.decide},
	)
	return ctrl.Result{RequeueAfter: s.requeue}, err
}

func (r *Reconciler) reader() client.Reader {
	if r.Reader != nil {
		return r.Reader
	}
	return r.Client
}

// loadPlacement reads the placement.
func (r *Reconciler) loadPlacement(ctx context.Context, s *scope) error {
	crp := &placementv1beta1.ClusterResourcePlacement{}
	err := r.reader().Get(ctx, types.NamespacedName{Name: s.eviction.Spec.PlacementName}, crp)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	s.placement = crp
	return nil
}

// loadBindings reads the placement's active bindings and its other executed
// evictions.
func (r *Reconciler) loadBindings(ctx context.Context, s *scope) error {
	if s.placement == nil {
		return nil
	}
	bindings := &placementv1beta1.ClusterResourceBindingList{}
	if err := r.reader().List(ctx, bindings, client.MatchingLabels{placementv1beta1.LabelPlacementName: s.placement.Name}); err != nil {
		return err
	}
	for i := range bindings.Items {
		b := &bindings.Items[i]
		if !pipeline.IsActive(b) {
			continue
		}
		s.active = append(s.active, *b)
		if b.Spec.TargetCluster == s.eviction.Spec.ClusterName {
			s.onCluster = true
		}
	}
	evictions := &placementv1beta1.ClusterResourcePlacementEvictionList{}
	if err := r.reader().List(ctx, evictions); err != nil {
		return err
	}
	s.evicting = map[string]bool{}
	for i := range evictions.Items {
		other := &evictions.Items[i]
		if other.Name != s.eviction.Name && other.Spec.PlacementName == s.placement.Name && conditions.IsTrue(other.Status.Conditions, placementv1beta1.ConditionEvictionExecuted) {
			s.evicting[other.Spec.ClusterName] = true
		}
	}
	return nil
}

// validate sets the Valid condition; an invalid eviction is done.
func (r *Reconciler) validate(_ context.Context, s *scope) error {
	c := validCondition(s.eviction.Spec.PlacementName, s.eviction.Spec.ClusterName, s.placement, s.onCluster)
	set(s.eviction, placementv1beta1.ConditionEvictionValid, c)
	s.done = c.status != metav1.ConditionTrue
	return nil
}

// loadBudget reads the disruption budget of the placement's name.
func (r *Reconciler) loadBudget(ctx context.Context, s *scope) error {
	budget := &placementv1beta1.ClusterResourcePlacementDisruptionBudget{}
	err := r.reader().Get(ctx, types.NamespacedName{Name: s.placement.Name}, budget)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	s.budget = budget
	return nil
}

// decide sets the Executed condition: True when the budget (if any) allows the
// eviction, else False, to be tried again.
func (r *Reconciler) decide(_ context.Context, s *scope) error {
	placement, cluster := s.placement.Name, s.eviction.Spec.ClusterName
	d, budgetName := Decision{Allowed: true}, ""
	var err error
	if s.budget != nil {
		budgetName = s.budget.Name
		d, err = CheckBudget(s.budget.Spec, cluster, standingOf(s.placement.Spec.Policy, s.active, cluster, s.evicting))
	}
	c := executedCondition(placement, cluster, budgetName, d, err)
	set(s.eviction, placementv1beta1.ConditionEvictionExecuted, c)
	if c.status != metav1.ConditionTrue {
		interval := r.RetryInterval
		if interval <= 0 {
			interval = DefaultRetryInterval
		}
		s.requeue = interval
		return nil
	}
	s.executed = true
	return nil
}

// standingOf returns where the placement, with its active bindings, stands for an
// eviction from cluster; evicting are the clusters other executed evictions are
// taking it off, which count as unavailable.
func standingOf(policy *placementv1beta1.PlacementPolicy, active []placementv1beta1.ClusterResourceBinding, cluster string, evicting map[string]bool) Standing {
	st := Standing{Target: TargetCount(policy, len(active))}
	for i := range active {
		b := &active[i]
		if evicting[b.Spec.TargetCluster] || !IsAvailable(b) {
			continue
		}
		st.Available++
		if b.Spec.TargetCluster == cluster {
			st.EvicteeAvailable = true
		}
	}
	return st
}

// patchStatus writes the eviction's status if it changed. The optimistic lock
// makes a reconcile that read a stale eviction fail with a conflict instead of
// deciding it twice.
func (r *Reconciler) patchStatus(ctx context.Context, before, ev *placementv1beta1.ClusterResourcePlacementEviction) error {
	if equality.Semantic.DeepEqual(before.Status, ev.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, ev, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("failed to update the eviction's status: %w", err)
	}
	return nil
}

// announce records an executed eviction: a log line, an Event on the placement
// and the metric.
func (r *Reconciler) announce(ctx context.Context, s *scope) {
	ev, cluster := s.eviction, s.eviction.Spec.ClusterName
	log.FromContext(ctx).Info("evicted placement from cluster", "placement", klog.KObj(s.placement), "cluster", cluster)
	CountEviction(MetricReasonManual)
	if r.Recorder != nil {
		r.Recorder.Eventf(s.placement, ev, corev1.EventTypeNormal, placementv1beta1.ReasonEvicted, "Evict",
			"evicted from member cluster %s by ClusterResourcePlacementEviction %s", cluster, ev.Name)
	}
}

// SetupWithManager registers the controller: evictions, and the bindings and
// budgets of their placements, whose changes may unblock them.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	c := mgr.GetClient()
	byPlacementLabel := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		if o.GetLabels()[placementv1beta1.LabelPlacementNamespace] != "" {
			return nil
		}
		return pendingEvictions(ctx, c, o.GetLabels()[placementv1beta1.LabelPlacementName])
	})
	byName := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		return pendingEvictions(ctx, c, o.GetName())
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("eviction").
		For(&placementv1beta1.ClusterResourcePlacementEviction{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&placementv1beta1.ClusterResourceBinding{}, byPlacementLabel).
		Watches(&placementv1beta1.ClusterResourcePlacementDisruptionBudget{}, byName).
		Complete(r)
}

// pendingEvictions returns the placement's evictions that are not decided yet.
func pendingEvictions(ctx context.Context, c client.Reader, placement string) []reconcile.Request {
	if placement == "" {
		return nil
	}
	list := &placementv1beta1.ClusterResourcePlacementEvictionList{}
	if err := c.List(ctx, list); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		ev := &list.Items[i]
		if ev.Spec.PlacementName == placement && !isFinal(ev) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: ev.Name}})
		}
	}
	return reqs
}

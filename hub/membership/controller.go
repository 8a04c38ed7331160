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

// Package membership keeps each MemberCluster's hub-side bookkeeping: the built-in
// labels every selector may use (name, Kubernetes minor version, provider) and the
// conditions a cluster has before its agent ever connects. Connection and health
// are written by the tunnel server that holds the agent's session.
package membership

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/readiness"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Reconciler maintains MemberCluster labels, automatic taints and initial conditions.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// NewMemberGrace is how long after joining a member that has not been healthy
	// yet is spared the not-ready taint (NewMemberGraceLeft). 0 spares none.
	NewMemberGrace time.Duration
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Workers is how many members are reconciled at once. Default: 1.
	Workers int
}

var taintChanges = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "flotilla_cluster_taint_changes_total",
	Help: "Automatic taints added to or removed from member clusters.",
}, []string{"taint", "op"})

func init() { metrics.Registry.MustRegister(taintChanges) }

// conflictRetry is how soon a MemberCluster another writer changed while it was
// reconciled is read again.
const conflictRetry = 200 * time.Millisecond

// Reconcile handles one MemberCluster. A write that loses to another writer's
// (the tunnel server's status, a user's edit: the usual case while a fleet joins)
// is not an error: the member is read again shortly, without an error's log.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	result, err := r.reconcile(ctx, req)
	if apierrors.IsConflict(err) {
		log.FromContext(ctx).V(1).Info("The MemberCluster changed while it was reconciled; reading it again", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return result, err
}

func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	mc := &clusterv1beta1.MemberCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return r.reconcileLeave(ctx, mc)
	}
	// The finalizer, the built-in labels and the automatic taints in one
	// write: a fleet joining at once is this controller's backlog.
	oldTaints := mc.DeepCopy().Spec.Taints
	taints := DesiredTaints(mc, r.now(), r.NewMemberGrace)
	taintsChanged := !equality.Semantic.DeepEqual(taints, mc.Spec.Taints) && !(len(taints) == 0 && len(mc.Spec.Taints) == 0)
	written, err := pipeline.AddFinalizerWith(ctx, r.Client, mc, clusterv1beta1.MemberClusterFinalizer, pipeline.ManagerMembership, func() bool {
		changed := SetBuiltinLabels(mc)
		if taintsChanged {
			mc.Spec.Taints = taints
			changed = true
		}
		return changed
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to update the finalizer, built-in labels and taints: %w", err)
	}
	if written && taintsChanged {
		r.taintEvents(mc, oldTaints, taints)
	}
	// Look again when a new member's grace ends.
	result := ctrl.Result{RequeueAfter: NewMemberGraceLeft(mc, r.now(), r.NewMemberGrace)}
	// The status's other writers keep Ready, Reconciling, Stalled and
	// observedGeneration in step with what they write; a change of the spec
	// (taints, above or by a user) moves observedGeneration here.
	statusBefore := mc.Status.DeepCopy()
	SetFirstConditions(mc)
	readiness.SetMemberCluster(mc)
	if !equality.Semantic.DeepEqual(*statusBefore, mc.Status) {
		if err := r.Client.Status().Update(ctx, mc); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	return result, nil
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// reconcileLeave removes a leaving member's records in order: its bindings of
// both scopes (whose Work the member removes first, or which the work-cleanup
// timeout releases when the agent is gone), then its Work namespace, then the
// MemberCluster itself.
func (r *Reconciler) reconcileLeave(ctx context.Context, mc *clusterv1beta1.MemberCluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(mc, clusterv1beta1.MemberClusterFinalizer) {
		return ctrl.Result{}, nil
	}
	if !conditions.IsFalse(mc.Status.Conditions, clusterv1beta1.ConditionJoined) {
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionJoined, metav1.ConditionFalse, clusterv1beta1.ReasonLeaving,
			"the member is leaving: removing what the fleet placed on it", mc.Generation)
		readiness.SetMemberCluster(mc)
		if err := r.Client.Status().Update(ctx, mc); err != nil {
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(mc, nil, corev1.EventTypeNormal, clusterv1beta1.ReasonLeaving, "Leave", "removing the placements of member %s", mc.Name)
	}
	bindings, err := pipeline.ListBindingsOnCluster(ctx, r.Client, mc.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	remaining := len(bindings)
	for _, b := range bindings {
		if b.GetDeletionTimestamp().IsZero() {
			if err := client.IgnoreNotFound(r.Client.Delete(ctx, b)); err != nil {
				return ctrl.Result{}, fmt.Errorf("failed to delete binding %s: %w", client.ObjectKeyFromObject(b), err)
			}
		}
	}
	ns := clusterv1beta1.MemberNamespace(mc.Name)
	if mc.Annotations[clusterv1beta1.AnnotationLeftCleanly] == "true" {
		// `agent leave` already removed everything: nothing will confirm.
		if err := r.releaseWorks(ctx, ns); err != nil {
			return ctrl.Result{}, err
		}
	}
	if remaining > 0 {
		return ctrl.Result{RequeueAfter: 2 * time.Second}, nil
	}
	if err := client.IgnoreNotFound(r.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to delete namespace %s: %w", ns, err)
	}
	if err := pipeline.RemoveFinalizer(ctx, r.Client, mc, clusterv1beta1.MemberClusterFinalizer, pipeline.ManagerMembership); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// releaseWorks drops the cleanup finalizer of the deleted Works in a namespace.
func (r *Reconciler) releaseWorks(ctx context.Context, ns string) error {
	works := &placementv1beta1.WorkList{}
	if err := r.Client.List(ctx, works, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("failed to list Work in %s: %w", ns, err)
	}
	for i := range works.Items {
		w := &works.Items[i]
		if w.DeletionTimestamp.IsZero() {
			continue
		}
		if err := pipeline.RemoveFinalizer(ctx, r.Client, w, placementv1beta1.AppliedResourcesCleanupFinalizer, pipeline.ManagerMembership); err != nil {
			return err
		}
	}
	return nil
}

// taintEvents counts and reports the automatic taints a write added and removed.
func (r *Reconciler) taintEvents(mc *clusterv1beta1.MemberCluster, old, new []clusterv1beta1.Taint) {
	before := taintSet(old)
	after := taintSet(new)
	for key := range after {
		if !before[key] {
			taintChanges.WithLabelValues(key, "added").Inc()
			r.Recorder.Eventf(mc, nil, corev1.EventTypeWarning, "TaintAdded", "Taint", "added taint %s: %s", key, taintReason(key))
		}
	}
	for key := range before {
		if !after[key] && automaticTaintKeys[strings.SplitN(key, ":", 2)[0]] {
			taintChanges.WithLabelValues(key, "removed").Inc()
			r.Recorder.Eventf(mc, nil, corev1.EventTypeNormal, "TaintRemoved", "Taint", "removed taint %s: the cluster recovered", key)
		}
	}
}

func taintSet(taints []clusterv1beta1.Taint) map[string]bool {
	out := map[string]bool{}
	for _, t := range taints {
		out[t.Key+":"+string(t.Effect)] = true
	}
	return out
}

func taintReason(key string) string {
	switch strings.SplitN(key, ":", 2)[0] {
	case clusterv1beta1.TaintUnreachable:
		return "no heartbeat from the agent"
	case clusterv1beta1.TaintNotReady:
		return "the member API server is not ready"
	}
	return "set by a user"
}

// BuiltinLabels are the labels the hub maintains on a MemberCluster; an empty
// value means the label is removed (e.g. no provider known).
func BuiltinLabels(mc *clusterv1beta1.MemberCluster) map[string]string {
	return map[string]string{
		clusterv1beta1.LabelClusterName:       mc.Name,
		clusterv1beta1.LabelKubernetesVersion: minorVersion(mc.Status.KubernetesVersion),
		clusterv1beta1.LabelProvider:          mc.Status.Provider,
	}
}

// SetBuiltinLabels makes mc's labels hold BuiltinLabels (removing those with
// an empty value) and keeps every other label; it reports whether it changed
// them. The join server calls it on the MemberCluster it creates, so that a
// new member needs no write of membership's for them.
func SetBuiltinLabels(mc *clusterv1beta1.MemberCluster) bool {
	labels := map[string]string{}
	for k, v := range mc.Labels {
		labels[k] = v
	}
	for k, v := range BuiltinLabels(mc) {
		if v == "" {
			delete(labels, k)
		} else {
			labels[k] = v
		}
	}
	if equality.Semantic.DeepEqual(labels, mc.Labels) || (len(labels) == 0 && len(mc.Labels) == 0) {
		return false
	}
	mc.Labels = labels
	return true
}

// SetFirstConditions gives a member no agent has connected for yet (it has no
// AgentConnected condition) AgentConnected and Healthy Unknown, saying so; it
// reports whether it set them. The join server calls it with Joined, so a
// joined member needs no status write of membership's for them.
func SetFirstConditions(mc *clusterv1beta1.MemberCluster) bool {
	if conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) != nil {
		return false
	}
	conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, metav1.ConditionUnknown,
		clusterv1beta1.ReasonAgentNeverConnected, "no agent has connected for this cluster yet", mc.Generation)
	conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionHealthy, metav1.ConditionUnknown,
		clusterv1beta1.ReasonHealthUnknown, "the agent has not reported yet", mc.Generation)
	return true
}

// minorVersion turns "v1.37.1" (or "v1.37.1-gke.5") into "1.37".
func minorVersion(v string) string {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return ""
	}
	return parts[0] + "." + parts[1]
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := pipeline.SetupIndexes(mgr); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("membership").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		For(&clusterv1beta1.MemberCluster{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(e event.CreateEvent) bool { return !joinPending(e.Object) },
		})).
		Watches(&clusterv1beta1.MemberCluster{}, handler.Funcs{
			CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				if joinPending(e.Object) {
					q.AddAfter(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)}, joinPendingDelay)
				}
			},
		}).
		Complete(r)
}

// joinPendingDelay is how long after a join created a MemberCluster membership
// first looks at it, unless the join's status write (which follows the create
// at once) wakes it sooner.
const joinPendingDelay = 10 * time.Second

// joinPending reports whether obj is a MemberCluster a join has just created:
// with membership's finalizer already (only a join creates it so) and no
// status yet. The join writes its first status right after: reconciled before
// that, membership would write the same first conditions itself and make the
// join's write conflict, two writes the API server need not make for every
// member that joins.
func joinPending(obj client.Object) bool {
	mc, ok := obj.(*clusterv1beta1.MemberCluster)
	return ok && len(mc.Status.Conditions) == 0 && controllerutil.ContainsFinalizer(mc, clusterv1beta1.MemberClusterFinalizer)
}

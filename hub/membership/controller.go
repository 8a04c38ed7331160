// Package membership keeps each MemberCluster's hub-side bookkeeping: the built-in
// labels every selector may use (name, Kubernetes minor version, provider) and the
// conditions a cluster has before its agent ever connects. Connection and health
// are written by the tunnel server that holds the agent's session.
package membership

import (
	"context"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/conflict"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Reconciler maintains MemberCluster labels, automatic taints and initial conditions.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

var taintChanges = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "flotilla_cluster_taint_changes_total",
	Help: "Automatic taints added to or removed from member clusters.",
}, []string{"taint", "op"})

func init() { metrics.Registry.MustRegister(taintChanges) }

// Reconcile handles one MemberCluster.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	mc := &clusterv1beta1.MemberCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	want := BuiltinLabels(mc)
	labels := map[string]string{}
	for k, v := range mc.Labels {
		labels[k] = v
	}
	for k, v := range want {
		if v == "" {
			delete(labels, k)
		} else {
			labels[k] = v
		}
	}
	if !equality.Semantic.DeepEqual(labels, mc.Labels) && !(len(labels) == 0 && len(mc.Labels) == 0) {
		patch := client.MergeFrom(mc.DeepCopy())
		mc.Labels = labels
		if err := r.Client.Patch(ctx, mc, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to set built-in labels: %w", err)
		}
	}
	if err := r.reconcileTaints(ctx, mc); err != nil {
		return ctrl.Result{}, err
	}
	if conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) == nil {
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, metav1.ConditionUnknown,
			clusterv1beta1.ReasonAgentNeverConnected, "no agent has connected for this cluster yet", mc.Generation)
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionHealthy, metav1.ConditionUnknown,
			clusterv1beta1.ReasonHealthUnknown, "the agent has not reported yet", mc.Generation)
		if err := r.Client.Status().Update(ctx, mc); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	return ctrl.Result{}, nil
}

// reconcileTaints makes the automatic taints match the cluster's conditions and
// reports each change as an Event.
func (r *Reconciler) reconcileTaints(ctx context.Context, mc *clusterv1beta1.MemberCluster) error {
	want := DesiredTaints(mc)
	if equality.Semantic.DeepEqual(want, mc.Spec.Taints) || (len(want) == 0 && len(mc.Spec.Taints) == 0) {
		return nil
	}
	before := taintSet(mc.Spec.Taints)
	after := taintSet(want)
	patch := client.MergeFrom(mc.DeepCopy())
	mc.Spec.Taints = want
	if err := r.Client.Patch(ctx, mc, patch); err != nil {
		return fmt.Errorf("failed to update taints: %w", err)
	}
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
	return nil
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
	return ctrl.NewControllerManagedBy(mgr).
		Named("membership").
		For(&clusterv1beta1.MemberCluster{}).
		Complete(conflict.RequeueOnConflict(r))
}

// Package scheduler runs the scheduling stage of the placement pipeline: for each
// placement's latest scheduling-policy snapshot it runs one framework cycle over
// the member clusters and makes the bindings match the decision — one binding per
// chosen cluster — and records every cluster's decision on the snapshot.
package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/conflict"
	"github.com/flotilla-io/flotilla/hub/enqueue"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/hub/schedulinggroup"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Name is the built-in scheduler's name; a placement whose schedulerName is empty
// or this is ours, any other name belongs to an external scheduler.
const Name = "flotilla-scheduler"

// Reconciler schedules placements.
type Reconciler struct {
	Client    client.Client
	Scheme    *runtime.Scheme
	Framework *framework.Framework
	// Rand picks among equals (Kratix: one random matching cluster, then sticky).
	Rand *rand.Rand
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Failover moves placements off clusters with NoExecute taints (NewFailover).
	Failover *Failover
}

// Reconcile schedules one ClusterResourcePlacement.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := r.Client.Get(ctx, req.NamespacedName, crp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !crp.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	snap, err := r.latestPolicySnapshot(ctx, crp.Name)
	if err != nil || snap == nil {
		return ctrl.Result{}, err
	}
	if name := crp.Spec.SchedulerName; name != "" && name != Name {
		// Left untouched for an external scheduler, which writes the bindings.
		return ctrl.Result{}, r.setScheduled(ctx, snap, metav1.ConditionUnknown, placementv1beta1.ReasonWaitingForExternalScheduler,
			fmt.Sprintf("schedulerName is %q: waiting for that scheduler to write bindings", name), nil)
	}
	dyn, err := schedulinggroup.Selectors(crp)
	if err != nil {
		return ctrl.Result{}, r.setScheduled(ctx, snap, metav1.ConditionFalse, placementv1beta1.ReasonScheduleFailed, err.Error(), nil)
	}
	if r.Failover == nil {
		r.Failover = NewFailover(FailoverOptions{})
	}
	// One cycle for the placement's resources, and one per Kratix scheduling group
	// that has selectors of its own (hub/schedulinggroup).
	groups := append([]string{""}, schedulinggroup.OwnGroups(dyn)...)
	var overall framework.CycleResult
	recheck := time.Duration(0)
	for _, group := range groups {
		res, rc, err := r.scheduleGroup(ctx, crp, snap, dyn, group)
		if err != nil {
			return ctrl.Result{}, err
		}
		recheck = minPositive(recheck, rc)
		if group == "" {
			overall = res
			continue
		}
		overall.Message += fmt.Sprintf("; group %s: %s", group, res.Message)
		if res.Status != metav1.ConditionTrue && overall.Status == metav1.ConditionTrue {
			overall.Status, overall.Reason = res.Status, res.Reason
		}
	}
	if err := r.unscheduleStaleGroups(ctx, crp.Name, groups); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.recordRebalance(ctx, crp, snap); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.setScheduled(ctx, snap, overall.Status, overall.Reason, overall.Message, overall.Decisions); err != nil {
		return ctrl.Result{}, err
	}
	// Eligibility and tolerations depend on time, so look again.
	return ctrl.Result{RequeueAfter: minPositive(recheck, time.Minute)}, nil
}

// scheduleGroup runs one cycle for a scheduling group ("" for the placement's own
// resources) and makes that group's bindings match it.
func (r *Reconciler) scheduleGroup(ctx context.Context, crp *placementv1beta1.ClusterResourcePlacement, snap *placementv1beta1.ClusterSchedulingPolicySnapshot,
	dyn []framework.DynamicSelector, group string) (framework.CycleResult, time.Duration, error) {
	in, err := r.cycleInput(ctx, crp, snap, dyn, group)
	if err != nil {
		return framework.CycleResult{}, 0, err
	}
	taints, recheck := r.Failover.applyTaints(ctx, crp, &in) // NoExecute taints: failover.go
	rebalancing := rebalanceRequested(crp, snap)
	if rebalancing {
		// Choose afresh: the cycle does not see where the placement is now, and
		// whatever it does not choose again is unscheduled below.
		in.Bindings = nil
	}
	start := time.Now()
	res, err := r.Framework.RunCycle(ctx, in)
	if d := time.Since(start); d > time.Second {
		log.FromContext(ctx).Info("scheduling cycle was slow", "took", d.String(), "clusters", len(in.Clusters))
	}
	if err != nil {
		// A policy that cannot be evaluated (e.g. a property value that is not a
		// quantity) is the user's to fix: say so instead of retrying in a loop.
		res.Status, res.Reason, res.Message = metav1.ConditionFalse, placementv1beta1.ReasonScheduleFailed, fmt.Sprintf("the policy cannot be evaluated: %v", err)
		return res, 0, nil
	}
	for i := range res.Decisions {
		if why, ok := taints.Kept[res.Decisions[i].ClusterName]; ok {
			res.Decisions[i].Reason = why
		}
	}
	existing := in.Bindings
	if rebalancing {
		existing, err = r.groupBindings(ctx, crp.Name, group)
		if err != nil {
			return res, 0, err
		}
		res.Unschedule = notSelected(existing, res.Selected)
	}
	held := r.Failover.holdEvicted(crp, in, res, taints)
	if err := r.applyBindings(ctx, crp, snap, group, existing, res, held); err != nil {
		return res, 0, err
	}
	log.FromContext(ctx).V(1).Info("scheduled", "group", group, "selected", res.Selected, "unscheduled", res.Unschedule)
	return res, recheck, nil
}

// unscheduleStaleGroups unschedules the bindings of groups that no longer have
// selectors of their own (their objects now go with the placement's).
func (r *Reconciler) unscheduleStaleGroups(ctx context.Context, placement string, groups []string) error {
	current := map[string]bool{}
	for _, g := range groups {
		current[g] = true
	}
	list := &placementv1beta1.ClusterResourceBindingList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: placement}); err != nil {
		return fmt.Errorf("failed to list bindings: %w", err)
	}
	for i := range list.Items {
		b := &list.Items[i]
		if current[schedulinggroup.Of(b.Labels)] || b.Spec.State == placementv1beta1.BindingStateUnscheduled || !b.DeletionTimestamp.IsZero() {
			continue
		}
		b.Spec.State = placementv1beta1.BindingStateUnscheduled
		if err := r.Client.Update(ctx, b); err != nil {
			return fmt.Errorf("failed to unschedule binding %s of a removed group: %w", b.Name, err)
		}
	}
	return nil
}

func (r *Reconciler) latestPolicySnapshot(ctx context.Context, placement string) (*placementv1beta1.ClusterSchedulingPolicySnapshot, error) {
	list := &placementv1beta1.ClusterSchedulingPolicySnapshotList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{
		placementv1beta1.LabelPlacementName:    placement,
		placementv1beta1.LabelIsLatestSnapshot: "true",
	}); err != nil {
		return nil, fmt.Errorf("failed to list policy snapshots: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	return &list.Items[0], nil
}

// cycleInput loads the world one cycle looks at.
func (r *Reconciler) cycleInput(ctx context.Context, crp *placementv1beta1.ClusterResourcePlacement, snap *placementv1beta1.ClusterSchedulingPolicySnapshot,
	dyn []framework.DynamicSelector, group string) (framework.CycleInput, error) {
	clusters := &clusterv1beta1.MemberClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return framework.CycleInput{}, fmt.Errorf("failed to list member clusters: %w", err)
	}
	locations := &clusterv1beta1.LocationList{}
	if err := r.Client.List(ctx, locations); err != nil {
		return framework.CycleInput{}, fmt.Errorf("failed to list locations: %w", err)
	}
	all := &placementv1beta1.ClusterResourceBindingList{}
	if err := r.Client.List(ctx, all); err != nil {
		return framework.CycleInput{}, fmt.Errorf("failed to list bindings: %w", err)
	}
	placements := &placementv1beta1.ClusterResourcePlacementList{}
	if err := r.Client.List(ctx, placements); err != nil {
		return framework.CycleInput{}, fmt.Errorf("failed to list placements: %w", err)
	}
	var own []placementv1beta1.ClusterResourceBinding
	peerClusters := map[string][]string{}
	for _, b := range all.Items {
		name := b.Labels[placementv1beta1.LabelPlacementName]
		if name == crp.Name {
			if schedulinggroup.Of(b.Labels) == group {
				own = append(own, b)
			}
			continue
		}
		if b.DeletionTimestamp.IsZero() && b.Spec.State != placementv1beta1.BindingStateUnscheduled {
			peerClusters[name] = append(peerClusters[name], b.Spec.TargetCluster)
		}
	}
	var peers []framework.PlacementPeer
	for _, p := range placements.Items {
		if p.Name == crp.Name {
			continue
		}
		sort.Strings(peerClusters[p.Name])
		peers = append(peers, framework.PlacementPeer{Name: p.Name, Labels: p.Labels, Clusters: peerClusters[p.Name]})
	}
	excluded, err := r.excludedClusters(ctx, crp.Name) // manual evictions: evictions.go
	if err != nil {
		return framework.CycleInput{}, err
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	return framework.CycleInput{
		PlacementName:    crp.Name,
		PlacementLabels:  crp.Labels,
		Policy:           snap.Spec.Policy,
		Clusters:         clusters.Items,
		Locations:        locations.Items,
		Bindings:         own,
		OtherPlacements:  peers,
		DynamicSelectors: dyn,
		Group:            group,
		ExcludedClusters: excluded,
		Now:              now(),
		Rand:             r.Rand,
	}, nil
}

// BindingName is the name of a placement's binding to a cluster, for a
// scheduling group ("" for the placement's own resources).
func BindingName(placement, group, cluster string) string {
	if group == "" {
		return placement + "-" + cluster
	}
	return placement + "-" + group + "-" + cluster
}

// applyBindings makes the placement's bindings match the cycle's result: a
// binding per selected cluster (new ones Scheduled, for the rollout to bind),
// the decision recorded on each, and Unscheduled for the clusters to leave.
func (r *Reconciler) applyBindings(ctx context.Context, crp *placementv1beta1.ClusterResourcePlacement, snap *placementv1beta1.ClusterSchedulingPolicySnapshot, group string,
	existing []placementv1beta1.ClusterResourceBinding, res framework.CycleResult, held map[string]string) error {
	byCluster := map[string]*placementv1beta1.ClusterResourceBinding{}
	for i := range existing {
		b := &existing[i]
		if b.DeletionTimestamp.IsZero() {
			byCluster[b.Spec.TargetCluster] = b
		}
	}
	decisions := map[string]placementv1beta1.ClusterDecision{}
	for _, d := range res.Decisions {
		decisions[d.ClusterName] = d
	}
	for _, cluster := range res.Selected {
		b, ok := byCluster[cluster]
		if !ok {
			b = &placementv1beta1.ClusterResourceBinding{
				ObjectMeta: metav1.ObjectMeta{
					Name:   BindingName(crp.Name, group, cluster),
					Labels: map[string]string{placementv1beta1.LabelPlacementName: crp.Name},
				},
				Spec: placementv1beta1.ResourceBindingSpec{
					State:                        placementv1beta1.BindingStateScheduled,
					TargetCluster:                cluster,
					SchedulingPolicySnapshotName: snap.Name,
					ClusterDecision:              decisions[cluster],
				},
			}
			if group != "" {
				b.Labels[schedulinggroup.LabelGroup] = group
			}
			if err := controllerutil.SetControllerReference(crp, b, r.Scheme); err != nil {
				return err
			}
			if err := r.Client.Create(ctx, b); err != nil {
				if apierrors.IsAlreadyExists(err) {
					// The previous binding to this cluster is still being removed.
					continue
				}
				return fmt.Errorf("failed to create binding for %s: %w", cluster, err)
			}
		} else {
			want := b.Spec.DeepCopy()
			want.SchedulingPolicySnapshotName = snap.Name
			want.ClusterDecision = decisions[cluster]
			if want.State == placementv1beta1.BindingStateUnscheduled {
				want.State = placementv1beta1.BindingStateScheduled
			}
			if !equality.Semantic.DeepEqual(*want, b.Spec) {
				b.Spec = *want
				if err := r.Client.Update(ctx, b); err != nil {
					return fmt.Errorf("failed to update binding %s: %w", b.Name, err)
				}
			}
		}
		if err := r.setMisplaced(ctx, crp, b, res.Misplaced[cluster]); err != nil {
			return err
		}
	}
	for _, cluster := range res.Unschedule {
		b, ok := byCluster[cluster]
		if !ok || b.Spec.State == placementv1beta1.BindingStateUnscheduled {
			continue
		}
		if msg, ok := held[cluster]; ok {
			// Graceful eviction: the binding stays until its replacement is available.
			before := b.Status.DeepCopy()
			setEvicting(b, msg)
			if !equality.Semantic.DeepEqual(*before, b.Status) {
				if err := r.Client.Status().Update(ctx, b); err != nil {
					return fmt.Errorf("failed to mark binding %s evicting: %w", b.Name, err)
				}
			}
			continue
		}
		b.Spec.State = placementv1beta1.BindingStateUnscheduled
		b.Spec.ClusterDecision = decisions[cluster]
		if err := r.Client.Update(ctx, b); err != nil {
			return fmt.Errorf("failed to unschedule binding %s: %w", b.Name, err)
		}
	}
	return nil
}

// setMisplaced records on the binding whether its cluster still matches (Kratix:
// a misplaced workload is flagged, not moved).
func (r *Reconciler) setMisplaced(ctx context.Context, crp *placementv1beta1.ClusterResourcePlacement, b *placementv1beta1.ClusterResourceBinding, reason string) error {
	before := b.Status.DeepCopy()
	wasMisplaced := conditions.Get(b.Status.Conditions, placementv1beta1.ConditionScheduled) != nil &&
		conditions.Get(b.Status.Conditions, placementv1beta1.ConditionScheduled).Reason == placementv1beta1.ReasonMisplaced
	if reason != "" {
		conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionScheduled, metav1.ConditionFalse, placementv1beta1.ReasonMisplaced, reason, b.Generation)
	} else {
		msg := b.Spec.ClusterDecision.Reason
		if msg == "" {
			msg = "picked by the scheduler"
		}
		conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionScheduled, metav1.ConditionTrue, placementv1beta1.ReasonScheduled, msg, b.Generation)
	}
	if equality.Semantic.DeepEqual(*before, b.Status) {
		return nil
	}
	if err := r.Client.Status().Update(ctx, b); err != nil {
		return fmt.Errorf("failed to update binding status %s: %w", b.Name, err)
	}
	switch {
	case reason != "" && !wasMisplaced:
		r.Failover.event(crp, corev1.EventTypeWarning, placementv1beta1.ReasonMisplaced,
			"misplaced on %s (kept, not moved): %s", b.Spec.TargetCluster, reason)
	case reason == "" && wasMisplaced:
		r.Failover.event(crp, corev1.EventTypeNormal, placementv1beta1.ReasonScheduled,
			"%s matches the placement again", b.Spec.TargetCluster)
	}
	return nil
}

// setScheduled records the cycle's outcome on the policy snapshot.
func (r *Reconciler) setScheduled(ctx context.Context, snap *placementv1beta1.ClusterSchedulingPolicySnapshot, status metav1.ConditionStatus, reason, message string, decisions []placementv1beta1.ClusterDecision) error {
	before := snap.Status.DeepCopy()
	conditions.Set(&snap.Status.Conditions, placementv1beta1.ConditionScheduled, status, reason, message, snap.Generation)
	snap.Status.TargetClusters = decisions
	if len(snap.Status.TargetClusters) > 1000 {
		snap.Status.TargetClusters = snap.Status.TargetClusters[:1000]
	}
	if equality.Semantic.DeepEqual(*before, snap.Status) {
		return nil
	}
	if err := r.Client.Status().Update(ctx, snap); err != nil {
		return fmt.Errorf("failed to update policy snapshot status: %w", err)
	}
	return nil
}

// SetupWithManager registers the controller: placements, their snapshots and
// bindings, and every MemberCluster and Location change (which may change where
// anything fits).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("scheduler").
		For(&placementv1beta1.ClusterResourcePlacement{}).
		Watches(&placementv1beta1.ClusterSchedulingPolicySnapshot{}, enqueue.ByPlacementLabel()).
		Watches(&placementv1beta1.ClusterResourceBinding{}, enqueue.AllPlacements(mgr.GetClient())).
		Watches(&clusterv1beta1.MemberCluster{}, enqueue.AllPlacements(mgr.GetClient())).
		Watches(&clusterv1beta1.Location{}, enqueue.AllPlacements(mgr.GetClient())).
		Watches(&placementv1beta1.ClusterResourcePlacementEviction{}, handler.EnqueueRequestsFromMapFunc(placementOfEviction)).
		Complete(conflict.RequeueOnConflict(r))
}

// rebalanceRequested reports whether the placement asks for a rebalance the
// scheduler has not acted on yet.
func rebalanceRequested(crp *placementv1beta1.ClusterResourcePlacement, snap *placementv1beta1.ClusterSchedulingPolicySnapshot) bool {
	want := crp.Annotations[placementv1beta1.AnnotationRebalance]
	return want != "" && want != snap.Annotations[placementv1beta1.AnnotationRebalanced]
}

// recordRebalance notes on the snapshot that the placement's rebalance request
// was acted on, so it happens once per request.
func (r *Reconciler) recordRebalance(ctx context.Context, crp *placementv1beta1.ClusterResourcePlacement, snap *placementv1beta1.ClusterSchedulingPolicySnapshot) error {
	if !rebalanceRequested(crp, snap) {
		return nil
	}
	patch := client.MergeFrom(snap.DeepCopy())
	metav1.SetMetaDataAnnotation(&snap.ObjectMeta, placementv1beta1.AnnotationRebalanced, crp.Annotations[placementv1beta1.AnnotationRebalance])
	if err := r.Client.Patch(ctx, snap, patch); err != nil {
		return fmt.Errorf("failed to record the rebalance: %w", err)
	}
	return nil
}

// groupBindings lists a placement's bindings of one scheduling group.
func (r *Reconciler) groupBindings(ctx context.Context, placement, group string) ([]placementv1beta1.ClusterResourceBinding, error) {
	list := &placementv1beta1.ClusterResourceBindingList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: placement}); err != nil {
		return nil, fmt.Errorf("failed to list bindings: %w", err)
	}
	var out []placementv1beta1.ClusterResourceBinding
	for _, b := range list.Items {
		if schedulinggroup.Of(b.Labels) == group {
			out = append(out, b)
		}
	}
	return out, nil
}

// notSelected lists the clusters of live bindings that are not in selected.
func notSelected(bindings []placementv1beta1.ClusterResourceBinding, selected []string) []string {
	keep := map[string]bool{}
	for _, c := range selected {
		keep[c] = true
	}
	var out []string
	for c := range activeClusters(bindings) {
		if !keep[c] {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

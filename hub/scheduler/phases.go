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

package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/handoff"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/scheduler/fleet"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/hub/schedulinggroup"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

const scheduledManager = pipeline.ManagerScheduler

func (r *Reconciler) loadPolicySnapshot(ctx context.Context, s *scope) error {
	snap, err := pipeline.LatestPolicySnapshot(ctx, r.Client, s.key)
	if err != nil {
		return err
	}
	s.snapshot = snap
	s.done = snap == nil
	return nil
}

// checkSchedulerName leaves a placement of another scheduler to it, which writes
// the bindings: Scheduled is Unknown (WaitingForExternalScheduler) until it has
// written some, then True, naming the clusters.
func (r *Reconciler) checkSchedulerName(ctx context.Context, s *scope) error {
	if IsOurs(s.placement) {
		return nil
	}
	s.done = true
	bindings, err := pipeline.ListBindingsCached(ctx, r.Client, s.key)
	if err != nil {
		return err
	}
	s.scheduled = externalScheduled(s.placement.GetPlacementSpec().SchedulerName, bindings)
	return nil
}

// externalScheduled is the Scheduled outcome of a placement that scheduler
// (not ours) schedules, from the bindings it wrote.
func externalScheduled(scheduler string, bindings []placementv1beta1.BindingObj) *framework.CycleResult {
	var clusters []string
	for _, b := range pipeline.ActiveBindings(bindings) {
		if b.GetBindingSpec().State != placementv1beta1.BindingStateUnscheduled {
			clusters = append(clusters, b.GetBindingSpec().TargetCluster)
		}
	}
	if len(clusters) == 0 {
		return &framework.CycleResult{Status: metav1.ConditionUnknown, Reason: placementv1beta1.ReasonWaitingForExternalScheduler,
			Message: fmt.Sprintf("schedulerName is %q: waiting for that scheduler to write bindings", scheduler)}
	}
	sort.Strings(clusters)
	return &framework.CycleResult{Status: metav1.ConditionTrue, Reason: placementv1beta1.ReasonScheduled,
		Message: fmt.Sprintf("scheduler %q bound %d cluster%s: %s", scheduler, len(clusters), plural(len(clusters)), strings.Join(clusters, ", "))}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// loadSelectors reads the Kratix dynamic selectors: one cycle runs for the
// placement's resources and one per scheduling group with selectors of its own.
func (r *Reconciler) loadSelectors(_ context.Context, s *scope) error {
	dyn, err := schedulinggroup.Selectors(s.placement)
	if err != nil {
		s.scheduled = &framework.CycleResult{Status: metav1.ConditionFalse, Reason: placementv1beta1.ReasonScheduleFailed, Message: err.Error()}
		s.done = true
		return nil
	}
	s.dynamic = dyn
	s.groups = append([]string{""}, schedulinggroup.OwnGroups(dyn)...)
	return nil
}

// loadWorld takes the fleet snapshot's current view of the clusters and reads,
// from the cache, the placement's bindings and — only when the policy needs
// them — Locations and the other placements.
func (r *Reconciler) loadWorld(ctx context.Context, s *scope) error {
	view, err := r.fleetView(ctx)
	if err != nil {
		return err
	}
	s.fleet = view.Fleet
	s.recheck = pipeline.Sooner(s.recheck, r.graceDeadline(view.Disconnected))
	policy := s.snapshot.GetPolicySnapshotSpec().Policy
	if policy != nil && len(policy.LocationSelectors) > 0 {
		locations := &clusterv1beta1.LocationList{}
		if err := r.Client.List(ctx, locations); err != nil {
			return fmt.Errorf("failed to list locations: %w", err)
		}
		s.locations = locations.Items
	}
	own, err := pipeline.ListBindingsCached(ctx, r.Client, s.key)
	if err != nil {
		return err
	}
	s.bindings = own
	if usesPlacementAffinity(policy) {
		peers, err := r.loadPeers(ctx, s.key)
		if err != nil {
			return err
		}
		s.peers = peers
	}
	return nil
}

// fleetView returns the fleet snapshot's current view: the whole fleet without
// listing, copying or sorting it. A Reconciler set up without SetupWithManager
// (which feeds the snapshot) builds a view from the cache instead.
func (r *Reconciler) fleetView(ctx context.Context) (*fleet.View, error) {
	if r.fleet != nil {
		return r.fleet.View(), nil
	}
	list := &clusterv1beta1.MemberClusterList{}
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("failed to list member clusters: %w", err)
	}
	s := fleet.New()
	for i := range list.Items {
		s.Upsert(&list.Items[i])
	}
	return s.View(), nil
}

// graceDeadline is when the first of the disconnected clusters still within its
// grace period stops being eligible (0: none).
func (r *Reconciler) graceDeadline(disconnected []*clusterv1beta1.MemberCluster) time.Duration {
	grace := framework.DefaultDisconnectedGracePeriod
	if r.Framework != nil {
		grace = r.Framework.Options().WithDefaults().DisconnectedGracePeriod
	}
	now := r.now()
	var next time.Duration
	for _, mc := range disconnected {
		c := conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected)
		if c == nil || c.Status == metav1.ConditionTrue {
			continue
		}
		if left := c.LastTransitionTime.Add(grace).Sub(now); left > 0 {
			next = pipeline.Sooner(next, left+time.Second)
		}
	}
	return next
}

func usesPlacementAffinity(p *placementv1beta1.PlacementPolicy) bool {
	return p != nil && p.Affinity != nil && (p.Affinity.PlacementAffinity != nil || p.Affinity.PlacementAntiAffinity != nil)
}

// loadPeers lists the other placements of the same kind (for a
// ResourcePlacement, in its namespace) and the clusters they are on.
func (r *Reconciler) loadPeers(ctx context.Context, self pipeline.PlacementKey) ([]framework.PlacementPeer, error) {
	all, err := pipeline.ListPlacements(ctx, r.Client)
	if err != nil {
		return nil, err
	}
	var peers []framework.PlacementPeer
	for _, p := range all {
		key := pipeline.KeyOf(p)
		if key == self || key.Namespace != self.Namespace {
			continue
		}
		list, err := pipeline.ListBindingsCached(ctx, r.Client, key)
		if err != nil {
			return nil, err
		}
		var on []string
		for _, b := range pipeline.ActiveBindings(list) {
			on = append(on, b.GetBindingSpec().TargetCluster)
		}
		peers = append(peers, framework.PlacementPeer{Name: key.String(), Labels: p.GetLabels(), Clusters: on})
	}
	return peers, nil
}

// loadExclusions collects the clusters the placement must leave: its executed
// ClusterResourcePlacementEvictions (ClusterResourcePlacements only) and the
// failover controller's requests.
func (r *Reconciler) loadExclusions(ctx context.Context, s *scope) error {
	if !s.key.Namespaced() {
		list := &placementv1beta1.ClusterResourcePlacementEvictionList{}
		if err := r.Client.List(ctx, list, client.MatchingFields{pipeline.IndexEvictionPlacement: s.key.Name}); err != nil {
			return fmt.Errorf("failed to list evictions: %w", err)
		}
		s.excluded = ExcludedClusters(s.key.Name, list.Items)
	}
	for _, b := range pipeline.ActiveBindings(s.bindings) {
		c := pipeline.EvictionRequested(b)
		if c == nil {
			continue
		}
		cluster := b.GetBindingSpec().TargetCluster
		if _, manual := s.excluded[cluster]; manual {
			continue
		}
		if s.excluded == nil {
			s.excluded = map[string]string{}
		}
		s.excluded[cluster] = "evicted: " + c.Message
	}
	r.loadFailback(s)
	return nil
}

// loadFailback honours the failback controller's request (hub/failover): the
// cluster a placement moves back from is excluded, and so is every cluster the
// placement is not on but the target, so that the cycle picks the target the
// failback controller chose (a more preferred cluster still in its
// stabilization window must not be picked instead).
func (r *Reconciler) loadFailback(s *scope) {
	bound := map[string]bool{}
	from := map[string]string{}
	target := ""
	for _, b := range pipeline.ActiveBindings(s.bindings) {
		cluster := b.GetBindingSpec().TargetCluster
		bound[cluster] = true
		if c := pipeline.FailbackRequested(b); c != nil {
			from[cluster] = "failing back: " + c.Message
			target = pipeline.FailbackTarget(b)
		}
	}
	if len(from) == 0 {
		return
	}
	if s.excluded == nil {
		s.excluded = map[string]string{}
	}
	for cluster, why := range from {
		if _, ok := s.excluded[cluster]; !ok {
			s.excluded[cluster] = why
		}
	}
	for _, mc := range s.fleet.Members() {
		if _, ok := s.excluded[mc.Name]; !ok && !bound[mc.Name] && mc.Name != target {
			s.excluded[mc.Name] = "the placement is failing back to " + target
		}
	}
}

// wantClusters is how many clusters a PickN policy asks for (0 otherwise).
func wantClusters(p *placementv1beta1.PlacementPolicy) int {
	if p == nil || p.PlacementType != placementv1beta1.PickN || p.NumberOfClusters == nil {
		return 0
	}
	return int(*p.NumberOfClusters)
}

// schedule runs a cycle per group and makes each group's bindings match it.
func (r *Reconciler) schedule(ctx context.Context, s *scope) error {
	var overall framework.CycleResult
	for _, group := range s.groups {
		res, err := r.scheduleGroup(ctx, s, group)
		if err != nil {
			return err
		}
		if group == "" {
			overall = res
			continue
		}
		overall.Message += fmt.Sprintf("; group %s: %s", group, res.Message)
		if res.Status != metav1.ConditionTrue && overall.Status == metav1.ConditionTrue {
			overall.Status, overall.Reason = res.Status, res.Reason
		}
	}
	s.scheduled = &overall
	return nil
}

// groupBindings are the placement's bindings of one scheduling group.
func (s *scope) groupBindings(group string) []placementv1beta1.BindingObj {
	var out []placementv1beta1.BindingObj
	for _, b := range s.bindings {
		if schedulinggroup.Of(b.GetLabels()) == group {
			out = append(out, b)
		}
	}
	return out
}

// scheduleGroup runs one cycle for a scheduling group ("" for the placement's own
// resources) and makes that group's bindings match it.
func (r *Reconciler) scheduleGroup(ctx context.Context, s *scope, group string) (framework.CycleResult, error) {
	crp := s.placement
	existing := s.groupBindings(group)
	in := framework.CycleInput{
		PlacementName:    s.key.String(),
		PlacementLabels:  crp.GetLabels(),
		Policy:           s.snapshot.GetPolicySnapshotSpec().Policy,
		Fleet:            s.fleet,
		Locations:        s.locations,
		Bindings:         existing,
		OtherPlacements:  s.peers,
		DynamicSelectors: s.dynamic,
		Group:            group,
		ExcludedClusters: s.excluded,
		Now:              r.now(),
		Rand:             r.Rand,
		// The snapshot records no more (recordedDecisions), the bindings only
		// the selected and unscheduled clusters' decisions: the cycle need not
		// build one for every member.
		MaxUnselectedDecisions: MaxUnselectedDecisions,
	}
	rebalancing := rebalanceRequested(crp, s.snapshot)
	if rebalancing {
		// Choose afresh: the cycle does not see where the placement is now, and
		// whatever it does not choose again is unscheduled below.
		in.Bindings = nil
	}
	start := time.Now()
	res, err := r.Framework.RunCycle(ctx, in)
	if d := time.Since(start); d > time.Second {
		log.FromContext(ctx).Info("scheduling cycle was slow", "took", d.String(), "clusters", in.Fleet.Len())
	}
	if err != nil {
		// A policy that cannot be evaluated (e.g. a property value that is not a
		// quantity) is the user's to fix: say so instead of retrying in a loop.
		res.Status, res.Reason, res.Message = metav1.ConditionFalse, placementv1beta1.ReasonScheduleFailed, fmt.Sprintf("the policy cannot be evaluated: %v", err)
		return res, nil
	}
	active := map[string]placementv1beta1.BindingObj{}
	for _, b := range pipeline.ActiveBindings(existing) {
		active[b.GetBindingSpec().TargetCluster] = b
	}
	for i := range res.Decisions {
		if b, ok := active[res.Decisions[i].ClusterName]; ok {
			if why := pipeline.EvictionKept(b); why != "" {
				res.Decisions[i].Reason = why
			}
		}
	}
	if rebalancing {
		res.Unschedule = notSelected(existing, res.Selected)
	}
	held, released, recheck := gracefulHolds(r.now(), r.gracefulTimeout(), active, res)
	for c, why := range failbackHolds(active, res, wantClusters(in.Policy)) {
		held[c] = why
	}
	if in.Policy != nil && in.Policy.Fencing != nil {
		// A fenced placement never keeps the copy it leaves until the new one
		// is available: the new one starts only once the old one is stopped.
		held, released = map[string]string{}, nil
	}
	s.recheck = pipeline.Sooner(s.recheck, recheck)
	for _, rel := range released {
		observeFailover(r.now().Sub(taintedAt(s.fleet, rel.cluster, rel.requestedAt)))
		r.event(crp, corev1.EventTypeNormal, placementv1beta1.ReasonEvicted, "left %s: the replacement on %v is available", rel.cluster, res.Selected)
	}
	if err := r.applyBindings(ctx, s, group, existing, res, held); err != nil {
		return res, err
	}
	log.FromContext(ctx).V(1).Info("scheduled", "group", group, "selected", res.Selected, "unscheduled", res.Unschedule)
	return res, nil
}

// applyBindings makes the placement's bindings match the cycle's result: it
// carries out planBindings' plan.
func (r *Reconciler) applyBindings(ctx context.Context, s *scope, group string,
	existing []placementv1beta1.BindingObj, res framework.CycleResult, held map[string]string) error {
	plan := planBindings(existing, res, held, s.snapshot.GetName())
	var leaving []string
	plan.create, leaving = fencedCreates(s.snapshot.GetPolicySnapshotSpec().Policy, plan.create, existing, res.Selected)
	if len(leaving) > 0 {
		log.FromContext(ctx).V(1).Info("fenced: not starting the placement elsewhere until the copy it leaves is stopped", "group", group, "leaving", leaving)
	}
	return r.write(ctx, s, group, plan)
}

// write carries out a binding plan through the scheduler's BindingWriter: the
// creates (a failed one does not stop the others' bindings), the spec changes,
// then the Scheduled conditions, with their Events. The writes of each step are
// independent and go to the API server pipeline.WritesAtOnce at a time.
func (r *Reconciler) write(ctx context.Context, s *scope, group string, plan bindingPlan) error {
	created := make([]placementv1beta1.BindingObj, len(plan.create))
	failed := pipeline.Parallel(len(plan.create), func(i int) error {
		var err error
		created[i], err = r.createBinding(ctx, s, group, plan.create[i])
		if created[i] != nil {
			r.Spans.Mark(s.key, plan.create[i].cluster, pipeline.StageScheduled, "")
		}
		return err
	})
	createdOn := make(map[string]placementv1beta1.BindingObj, len(created))
	for i, b := range created {
		if b != nil {
			createdOn[plan.create[i].cluster] = b
		}
	}
	if errs := pipeline.Parallel(len(plan.spec), func(i int) error {
		ifState, set := plan.spec[i].specFields()
		return r.writer().PatchSpec(ctx, plan.spec[i].binding, ifState, set)
	}); errs != nil {
		return errors.Join(errs...)
	}
	if errs := pipeline.Parallel(len(plan.scheduled), func(i int) error {
		w := plan.scheduled[i]
		b := w.binding
		if b == nil {
			if b = createdOn[w.cluster]; b == nil {
				// Not created now (exists already, not yet in the cache, or
				// failed): its next reconcile writes the condition.
				return nil
			}
		}
		return r.setScheduledCondition(ctx, s.placement, b, w.misplaced, w.evicting)
	}); errs != nil {
		return errors.Join(errs...)
	}
	return errors.Join(failed...)
}

func (r *Reconciler) writer() pipeline.BindingWriter {
	return pipeline.BindingWriter{Client: r.Client, Manager: scheduledManager, Conditions: []string{placementv1beta1.ConditionScheduled}}
}

// createBinding creates the binding of the placement to cluster, named by
// BindingName. When that name is taken by another placement's binding (one an
// older hub named <placement>-<cluster>: web on prod-1 and web-prod on 1 both
// got web-prod-1), it uses HashedBindingName instead. It returns nil, and no
// error, when the binding exists already (it is not in the cache yet).
func (r *Reconciler) createBinding(ctx context.Context, s *scope, group string, c bindingCreate) (placementv1beta1.BindingObj, error) {
	cluster := c.cluster
	names := []string{BindingName(s.key, group, cluster)}
	if hashed := HashedBindingName(s.key, group, cluster); hashed != names[0] {
		names = append(names, hashed)
	}
	var taken []string
	for _, name := range names {
		b := pipeline.NewBinding(s.key)
		b.SetName(name)
		labels := s.key.Labels()
		if group != "" {
			labels[schedulinggroup.LabelGroup] = group
		}
		b.SetLabels(labels)
		// The work generator's finalizer, there from the start: added later,
		// it was a write per cluster that conflicted with this controller's
		// and the rollout's first writes and was retried (hub/pipeline/ownership.go).
		controllerutil.AddFinalizer(b, placementv1beta1.WorkCleanupFinalizer)
		*b.GetBindingSpec() = *c.spec.DeepCopy()
		// State hand-off: the values known now, frozen for the binding's life.
		b.GetBindingSpec().HandOff = handoff.Freeze(s.placement.GetPlacementSpec().StateHandOff, s.placement.GetPlacementStatus().HandOff)
		if err := controllerutil.SetControllerReference(s.placement, b, r.Scheme); err != nil {
			return nil, err
		}
		err := r.writer().Create(ctx, b)
		if err == nil {
			return b, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("failed to create binding %s for %s: %w", name, cluster, err)
		}
		other := pipeline.NewBinding(s.key)
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.key.Namespace, Name: name}, other); err != nil {
			return nil, fmt.Errorf("failed to read binding %s, which already exists: %w", name, err)
		}
		if isBindingOf(other, s.key, group, cluster) {
			// Ours, not yet in the cache (or being removed): its event wakes
			// the placement again.
			return nil, nil
		}
		owner, _ := pipeline.OwnerKey(other)
		taken = append(taken, fmt.Sprintf("%s (placement %q, cluster %q)", name, owner, other.GetBindingSpec().TargetCluster))
		log.FromContext(ctx).Info("binding name taken by another placement's binding; trying the next name",
			"name", name, "cluster", cluster, "otherPlacement", owner.String())
	}
	return nil, fmt.Errorf("cannot create the binding for cluster %s: its names are taken by other bindings: %s",
		cluster, strings.Join(taken, ", "))
}

// isBindingOf reports whether b is the binding of the placement key to cluster
// in the scheduling group.
func isBindingOf(b placementv1beta1.BindingObj, key pipeline.PlacementKey, group, cluster string) bool {
	owner, ok := pipeline.OwnerKey(b)
	return ok && owner == key && schedulinggroup.Of(b.GetLabels()) == group &&
		b.GetBindingSpec().TargetCluster == cluster
}

// setScheduledCondition records on the binding whether its cluster still matches
// (Kratix: a misplaced workload is flagged, not moved) or is being evicted, and
// announces a change of misplacement with an Event.
func (r *Reconciler) setScheduledCondition(ctx context.Context, crp placementv1beta1.PlacementObj, b placementv1beta1.BindingObj, misplaced, evicting string) error {
	own := pipeline.OwnConditions(b.GetBindingStatus().Conditions, placementv1beta1.ConditionScheduled)
	was := scheduledOf(b)
	spec := b.GetBindingSpec()
	status, reason, msg := scheduledCondition(spec, misplaced, evicting)
	if sameVerdict(was, status, reason, msg) {
		// Nothing new to say (sameVerdict): a binding just created for a
		// picked cluster, or one the rollout bound to another snapshot.
		return nil
	}
	conditions.Set(&own, placementv1beta1.ConditionScheduled, status, reason, msg, b.GetGeneration())
	transition := misplacedTransition(was, misplaced, evicting)
	if err := r.writer().ApplyStatus(ctx, b, pipeline.BindingStatus{Conditions: own}); err != nil {
		return err
	}
	switch transition {
	case placementv1beta1.ReasonMisplaced:
		r.event(crp, corev1.EventTypeWarning, placementv1beta1.ReasonMisplaced, "misplaced on %s (kept, not moved): %s", spec.TargetCluster, misplaced)
	case placementv1beta1.ReasonScheduled:
		r.event(crp, corev1.EventTypeNormal, placementv1beta1.ReasonScheduled, "%s matches the placement again", spec.TargetCluster)
	}
	return nil
}

// unscheduleStaleGroups unschedules the bindings of groups that no longer have
// selectors of their own (planStaleGroups).
func (r *Reconciler) unscheduleStaleGroups(ctx context.Context, s *scope) error {
	if err := r.write(ctx, s, "", planStaleGroups(s.bindings, s.groups)); err != nil {
		return fmt.Errorf("failed to unschedule the bindings of a removed group: %w", err)
	}
	return nil
}

// rebalanceRequested reports whether the placement asks for a rebalance the
// scheduler has not acted on yet.
func rebalanceRequested(crp, snap metav1.Object) bool {
	want := crp.GetAnnotations()[placementv1beta1.AnnotationRebalance]
	return want != "" && want != snap.GetAnnotations()[placementv1beta1.AnnotationRebalanced]
}

// recordRebalance notes on the snapshot that the placement's rebalance request
// was acted on, so it happens once per request.
func (r *Reconciler) recordRebalance(ctx context.Context, s *scope) error {
	if !rebalanceRequested(s.placement, s.snapshot) {
		return nil
	}
	snap := s.snapshot
	patch := client.MergeFrom(snap.DeepCopyObject().(client.Object))
	annotations := snap.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[placementv1beta1.AnnotationRebalanced] = s.placement.GetAnnotations()[placementv1beta1.AnnotationRebalance]
	snap.SetAnnotations(annotations)
	if err := r.Client.Patch(ctx, snap, patch, client.FieldOwner(scheduledManager)); err != nil {
		return fmt.Errorf("failed to record the rebalance: %w", err)
	}
	return nil
}

// notSelected lists the clusters of active bindings that are not in selected.
func notSelected(bindings []placementv1beta1.BindingObj, selected []string) []string {
	keep := map[string]bool{}
	for _, c := range selected {
		keep[c] = true
	}
	var out []string
	for _, b := range pipeline.ActiveBindings(bindings) {
		if cluster := b.GetBindingSpec().TargetCluster; !keep[cluster] {
			out = append(out, cluster)
		}
	}
	sort.Strings(out)
	return out
}

func setCondition(conds *[]metav1.Condition, typ string, status metav1.ConditionStatus, reason, message string, gen int64) {
	conditions.Set(conds, typ, status, reason, message, gen)
}

func statusEqual(a, b *placementv1beta1.SchedulingPolicySnapshotStatus) bool {
	return equality.Semantic.DeepEqual(a, b)
}

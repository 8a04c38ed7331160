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

package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	planv1beta1 "github.com/flotilla-io/flotilla/apis/plan/v1beta1"
	"github.com/flotilla-io/flotilla/hub/envelope"
	"github.com/flotilla-io/flotilla/hub/overrides"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/resources"
	"github.com/flotilla-io/flotilla/hub/scheduler"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/hub/schedulinggroup"
	"github.com/flotilla-io/flotilla/hub/updaterun"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Selector answers resource selectors on the hub (resources.Watcher), as the
// placement controller asks them.
type Selector interface {
	Select(ctx context.Context, selectors []placementv1beta1.ResourceSelector) ([]*unstructured.Unstructured, error)
	SelectNamespaced(ctx context.Context, namespace string, selectors []placementv1beta1.ResourceSelector) ([]*unstructured.Unstructured, error)
}

// InputError is a proposed change the planner cannot plan: the user's to fix
// (answered 422).
type InputError struct{ msg string }

func (e *InputError) Error() string { return e.msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{msg: fmt.Sprintf(format, args...)}
}

// Planner plans proposed changes on the hub's current state.
type Planner struct {
	// Reader reads the hub (the manager's cache). The planner never writes.
	Reader client.Reader
	// Resources selects hub objects for a placement whose resourceSelectors
	// are new or changed; nil plans only placements whose selectors are
	// unchanged (their latest resource snapshot).
	Resources Selector
	// Framework is the scheduler's framework (plugins.NewFramework).
	Framework *framework.Framework
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// proposal is the change being planned, with what the hub holds now.
type proposal struct {
	key       pipeline.PlacementKey
	placement placementv1beta1.PlacementObj // as proposed (or as it exists)
	existing  placementv1beta1.PlacementObj // nil when new
	overrides []overrides.Override          // proposed, converted
	replaces  map[string]bool               // override keys the proposed ones replace
}

// Plan answers a PlacementPlan's spec. An *InputError is the user's to fix.
func (p *Planner) Plan(ctx context.Context, spec *planv1beta1.PlacementPlanSpec) (*planv1beta1.PlacementPlanStatus, error) {
	pr, err := p.propose(ctx, spec)
	if err != nil {
		return nil, err
	}
	st := &planv1beta1.PlacementPlanStatus{Placement: pr.key.String(), Exists: pr.existing != nil}
	pspec := pr.placement.GetPlacementSpec()
	if pspec.SchedulerName != "" && pspec.SchedulerName != scheduler.Name {
		return nil, inputErrorf("the placement's schedulerName is %q: that scheduler, not Flotilla's, decides where it goes, so the hub cannot plan it", pspec.SchedulerName)
	}

	// Scheduling.
	members := &clusterv1beta1.MemberClusterList{}
	if err := p.Reader.List(ctx, members); err != nil {
		return nil, fmt.Errorf("failed to list member clusters: %w", err)
	}
	byName := map[string]*clusterv1beta1.MemberCluster{}
	for i := range members.Items {
		byName[members.Items[i].Name] = &members.Items[i]
	}
	var bindings []placementv1beta1.BindingObj
	if pr.existing != nil {
		if bindings, err = pipeline.ListBindings(ctx, p.Reader, pr.key); err != nil {
			return nil, err
		}
	}
	res, err := p.schedule(ctx, pr, members.Items, bindings)
	if err != nil {
		return nil, err
	}
	st.Scheduled = &metav1.Condition{Type: placementv1beta1.ConditionScheduled, Status: res.Status, Reason: res.Reason, Message: res.Message}
	on := map[string]bool{}
	now := map[string]current{}
	handOff := map[string][]placementv1beta1.HandOffValue{}
	for _, b := range pipeline.ActiveBindings(bindings) {
		bs := b.GetBindingSpec()
		if schedulinggroup.Of(b.GetLabels()) != "" {
			continue
		}
		on[bs.TargetCluster] = true
		handOff[bs.TargetCluster] = bs.HandOff
		now[bs.TargetCluster] = current{bound: bs.State == placementv1beta1.BindingStateBound,
			ready: conditions.IsTrue(b.GetBindingStatus().Conditions, placementv1beta1.ConditionAvailable)}
	}
	st.Clusters = classify(res, on)

	// Rendering.
	raws, err := p.resources(ctx, pr, st)
	if err != nil {
		return nil, err
	}
	ovs, err := p.overrides(ctx, pr)
	if err != nil {
		return nil, err
	}
	changed := map[string]bool{}
	rendered := 0
	for i := range st.Clusters {
		cp := &st.Clusters[i]
		if cp.Decision == planv1beta1.DecisionNotSelected {
			continue
		}
		if rendered++; rendered > planv1beta1.MaxPlannedClusters {
			if rendered == planv1beta1.MaxPlannedClusters+1 {
				st.Warnings = append(st.Warnings, fmt.Sprintf("manifests are rendered for the first %d clusters only", planv1beta1.MaxPlannedClusters))
			}
			continue
		}
		have, err := p.sentNow(ctx, pr.key, cp.Name)
		if err != nil {
			return nil, err
		}
		cp.ComparedWith = fmt.Sprintf("the Work %s/%s the hub holds for the cluster now", clusterv1beta1.MemberNamespace(cp.Name), pr.key.WorkName(""))
		var want [][]byte
		if cp.Decision != planv1beta1.DecisionDropped {
			out, applied, err := render(raws, ovs, pr.key, byName[cp.Name], handOff[cp.Name])
			if err != nil {
				cp.RenderError = err.Error()
				continue
			}
			want, cp.Overrides = out, applied
		}
		cp.Manifests, cp.ManifestsTruncated, err = compare(want, have)
		if err != nil {
			cp.RenderError = err.Error()
			continue
		}
		for _, m := range cp.Manifests {
			if m.Change != planv1beta1.ChangeUnchanged {
				changed[cp.Name] = true
			}
		}
	}

	// Rollout.
	st.Rollout, err = p.rollout(ctx, spec, pr, st.Clusters, now, changed, byName)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// propose reads the proposed objects and the placement they concern.
func (p *Planner) propose(ctx context.Context, spec *planv1beta1.PlacementPlanSpec) (*proposal, error) {
	pr := &proposal{replaces: map[string]bool{}}
	n := 0
	if spec.ClusterResourcePlacement != nil {
		n++
		pr.placement = spec.ClusterResourcePlacement.DeepCopy()
	}
	if spec.ResourcePlacement != nil {
		n++
		pr.placement = spec.ResourcePlacement.DeepCopy()
	}
	if spec.Placement != nil {
		n++
	}
	switch {
	case n > 1:
		return nil, inputErrorf("spec names %d placements: give one ClusterResourcePlacement, ResourcePlacement or placement reference", n)
	case n == 0:
		return nil, inputErrorf("spec names no placement: give a ClusterResourcePlacement, a ResourcePlacement, or, with overrides only, a placement reference")
	}
	if spec.Placement != nil {
		if spec.Placement.Name == "" {
			return nil, inputErrorf("spec.placement.name is required")
		}
		pr.key = pipeline.PlacementKey{Name: spec.Placement.Name, Namespace: spec.Placement.Namespace}
	} else {
		if pr.placement.GetName() == "" {
			return nil, inputErrorf("the proposed placement has no metadata.name")
		}
		if spec.ResourcePlacement != nil && pr.placement.GetNamespace() == "" {
			return nil, inputErrorf("the proposed ResourcePlacement %s has no metadata.namespace", pr.placement.GetName())
		}
		pr.key = pipeline.KeyOf(pr.placement)
	}
	existing, err := pipeline.GetPlacement(ctx, p.Reader, pr.key)
	switch {
	case apierrors.IsNotFound(err):
		if spec.Placement != nil {
			return nil, inputErrorf("there is no %s %s", pr.key.Kind(), pr.key)
		}
	case err != nil:
		return nil, fmt.Errorf("failed to get %s %s: %w", pr.key.Kind(), pr.key, err)
	default:
		pr.existing = existing
		if pr.placement == nil {
			pr.placement = existing
		} else {
			// Labels and annotations the user did not give are not kept: the
			// proposed object is what would be applied.
			pr.placement.SetUID(existing.GetUID())
		}
	}
	for i := range spec.ClusterResourceOverrides {
		o := &spec.ClusterResourceOverrides[i]
		if o.Name == "" {
			return nil, inputErrorf("spec.clusterResourceOverrides[%d] has no metadata.name", i)
		}
		s := &placementv1beta1.ClusterResourceOverrideSnapshot{}
		s.Name = "proposed:" + o.Name
		s.Spec.OverrideSpec = o.Spec
		pr.overrides = append(pr.overrides, overrides.FromClusterSnapshot(s))
		pr.replaces[o.Name] = true
	}
	for i := range spec.ResourceOverrides {
		o := &spec.ResourceOverrides[i]
		if o.Name == "" || o.Namespace == "" {
			return nil, inputErrorf("spec.resourceOverrides[%d] needs metadata.name and metadata.namespace", i)
		}
		s := &placementv1beta1.ResourceOverrideSnapshot{}
		s.Name, s.Namespace = "proposed:"+o.Name, o.Namespace
		s.Spec.OverrideSpec = o.Spec
		pr.overrides = append(pr.overrides, overrides.FromSnapshot(s))
		pr.replaces[o.Namespace+"/"+o.Name] = true
	}
	return pr, nil
}

// schedule runs the scheduler's cycle for the placement's own resources (the
// scheduling groups of Kratix dynamic selectors are not planned) with the
// proposed policy, as the scheduler would: evicted and failing-back clusters
// excluded, a rebalance choosing afresh.
func (p *Planner) schedule(ctx context.Context, pr *proposal, members []clusterv1beta1.MemberCluster, bindings []placementv1beta1.BindingObj) (framework.CycleResult, error) {
	policy := pr.placement.GetPlacementSpec().Policy
	dyn, err := schedulinggroup.Selectors(pr.placement)
	if err != nil {
		return framework.CycleResult{}, inputErrorf("the placement's dynamic selectors cannot be read: %v", err)
	}
	in := framework.CycleInput{
		PlacementName:    pr.key.String(),
		PlacementLabels:  pr.placement.GetLabels(),
		Policy:           policy,
		Clusters:         members,
		DynamicSelectors: dyn,
		Now:              p.now(),
	}
	for _, b := range bindings {
		if schedulinggroup.Of(b.GetLabels()) == "" {
			in.Bindings = append(in.Bindings, b)
		}
	}
	if policy != nil && len(policy.LocationSelectors) > 0 {
		locations := &clusterv1beta1.LocationList{}
		if err := p.Reader.List(ctx, locations); err != nil {
			return framework.CycleResult{}, fmt.Errorf("failed to list locations: %w", err)
		}
		in.Locations = locations.Items
	}
	if policy != nil && policy.Affinity != nil && (policy.Affinity.PlacementAffinity != nil || policy.Affinity.PlacementAntiAffinity != nil) {
		peers, err := p.peers(ctx, pr.key)
		if err != nil {
			return framework.CycleResult{}, err
		}
		in.OtherPlacements = peers
	}
	if !pr.key.Namespaced() {
		list := &placementv1beta1.ClusterResourcePlacementEvictionList{}
		if err := p.Reader.List(ctx, list); err != nil {
			return framework.CycleResult{}, fmt.Errorf("failed to list evictions: %w", err)
		}
		in.ExcludedClusters = scheduler.ExcludedClusters(pr.key.Name, list.Items)
	}
	for _, b := range pipeline.ActiveBindings(in.Bindings) {
		if c := pipeline.EvictionRequested(b); c != nil {
			if in.ExcludedClusters == nil {
				in.ExcludedClusters = map[string]string{}
			}
			if _, ok := in.ExcludedClusters[b.GetBindingSpec().TargetCluster]; !ok {
				in.ExcludedClusters[b.GetBindingSpec().TargetCluster] = "evicted: " + c.Message
			}
		}
	}
	res, err := p.Framework.RunCycle(ctx, in)
	if err != nil {
		return res, inputErrorf("the policy cannot be evaluated: %v", err)
	}
	return res, nil
}

// peers are the other placements of the same kind and namespace and the
// clusters they are on.
func (p *Planner) peers(ctx context.Context, self pipeline.PlacementKey) ([]framework.PlacementPeer, error) {
	all, err := pipeline.ListPlacements(ctx, p.Reader)
	if err != nil {
		return nil, err
	}
	var out []framework.PlacementPeer
	for _, o := range all {
		key := pipeline.KeyOf(o)
		if key == self || key.Namespace != self.Namespace {
			continue
		}
		list, err := pipeline.ListBindings(ctx, p.Reader, key)
		if err != nil {
			return nil, err
		}
		var on []string
		for _, b := range pipeline.ActiveBindings(list) {
			on = append(on, b.GetBindingSpec().TargetCluster)
		}
		out = append(out, framework.PlacementPeer{Name: key.String(), Labels: o.GetLabels(), Clusters: on})
	}
	return out, nil
}

// resources returns the manifests the placement would place (JSON, as the
// resource snapshot holds them, envelopes wrapped): those of its latest
// resource snapshot when its resourceSelectors are unchanged, a fresh
// selection otherwise. It fills st.Resources and st.ResourcesFrom.
func (p *Planner) resources(ctx context.Context, pr *proposal, st *planv1beta1.PlacementPlanStatus) ([][]byte, error) {
	selectors := pr.placement.GetPlacementSpec().ResourceSelectors
	if pr.existing != nil && equality.Semantic.DeepEqual(selectors, pr.existing.GetPlacementSpec().ResourceSelectors) {
		master, err := pipeline.LatestResourceSnapshot(ctx, p.Reader, pr.key)
		if err != nil {
			return nil, err
		}
		if master != nil {
			set, err := pipeline.ResourceSnapshotSetOf(ctx, p.Reader, master)
			if err != nil {
				return nil, err
			}
			var raws [][]byte
			for _, c := range set.Resources() {
				raws = append(raws, c.Raw)
			}
			st.ResourcesFrom = "resource snapshot " + master.GetName() + " (the placement's resourceSelectors are unchanged)"
			return raws, fillResources(st, raws)
		}
	}
	if p.Resources == nil {
		return nil, errors.New("this hub replica cannot select resources for a plan (the resource watcher is not running here)")
	}
	var objs []*unstructured.Unstructured
	var err error
	if pr.key.Namespaced() {
		objs, err = p.Resources.SelectNamespaced(ctx, pr.key.Namespace, selectors)
	} else {
		objs, err = p.Resources.Select(ctx, selectors)
	}
	if err != nil {
		return nil, inputErrorf("the resourceSelectors cannot be answered: %v", err)
	}
	raws := make([][]byte, 0, len(objs))
	for _, u := range objs {
		raw, err := json.Marshal(resources.Sanitize(u).Object)
		if err != nil {
			return nil, fmt.Errorf("failed to encode %s: %w", u.GetName(), err)
		}
		raws = append(raws, raw)
	}
	st.ResourcesFrom = "a selection of the hub's objects now (the placement or its resourceSelectors are new)"
	return raws, fillResources(st, raws)
}

func fillResources(st *planv1beta1.PlacementPlanStatus, raws [][]byte) error {
	for _, raw := range raws {
		id, err := identify(raw)
		if err != nil {
			return fmt.Errorf("a selected resource is not a Kubernetes object: %w", err)
		}
		st.Resources = append(st.Resources, id)
	}
	return nil
}

// snapshotSuffix is the "-<index>" an override snapshot's name adds to its
// override's (hub/overrides/snapshot.go).
var snapshotSuffix = regexp.MustCompile(`-[0-9]+$`)

// overrides are the latest override snapshots, each proposed override in
// place of the one it edits.
func (p *Planner) overrides(ctx context.Context, pr *proposal) ([]overrides.Override, error) {
	latest, err := overrides.Latest(ctx, p.Reader)
	if err != nil {
		return nil, err
	}
	out := make([]overrides.Override, 0, len(latest)+len(pr.overrides))
	for _, o := range latest {
		name := snapshotSuffix.ReplaceAllString(o.Name, "")
		if o.Namespace != "" {
			name = o.Namespace + "/" + name
		}
		if !pr.replaces[name] {
			out = append(out, o)
		}
	}
	out = append(out, pr.overrides...)
	overrides.Sort(out)
	return out, nil
}

// render is what a cluster would get, as the work generator renders it:
// envelopes unwrapped, then the overrides that apply to the placement's
// objects on the cluster, manifest by manifest. applied are the overrides
// that changed something.
func render(raws [][]byte, ovs []overrides.Override, key pipeline.PlacementKey, mc *clusterv1beta1.MemberCluster, handOff []placementv1beta1.HandOffValue) (out [][]byte, applied []string, err error) {
	raws, err = envelope.Unwrap(raws)
	if err != nil {
		return nil, nil, err
	}
	if mc == nil {
		mc = &clusterv1beta1.MemberCluster{}
	}
	objs := make([]*unstructured.Unstructured, 0, len(raws))
	for _, raw := range raws {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, nil, fmt.Errorf("failed to read a resource: %w", err)
		}
		objs = append(objs, u)
	}
	apply, err := overrides.Applicable(ovs, key, objs, mc)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for _, raw := range raws {
		if len(apply) == 0 {
			out = append(out, raw)
			continue
		}
		res, err := overrides.Apply(raw, apply, overrides.Target{Cluster: mc, HandOff: handOff})
		if err != nil {
			return nil, nil, err
		}
		for _, a := range res.Applied {
			if !seen[a] {
				seen[a] = true
				applied = append(applied, a)
			}
		}
		if !res.Deleted {
			out = append(out, res.Object)
		}
	}
	return out, applied, nil
}

// sentNow is what the hub sends the cluster for the placement now: the
// manifests of its Work, provenance removed; none when there is no Work.
func (p *Planner) sentNow(ctx context.Context, key pipeline.PlacementKey, cluster string) ([][]byte, error) {
	w := &placementv1beta1.Work{}
	err := p.Reader.Get(ctx, types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace(cluster), Name: key.WorkName("")}, w)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get the Work of %s on %s: %w", key, cluster, err)
	}
	out := make([][]byte, 0, len(w.Spec.Workload.Manifests))
	for _, m := range w.Spec.Workload.Manifests {
		out = append(out, stripProvenance(m.Raw))
	}
	return out, nil
}

// rollout is the order the change would reach the clusters in: the stages of
// the named staged update strategy, or the rolling update's waves.
func (p *Planner) rollout(ctx context.Context, spec *planv1beta1.PlacementPlanSpec, pr *proposal, plans []planv1beta1.ClusterPlan,
	now map[string]current, changed map[string]bool, byName map[string]*clusterv1beta1.MemberCluster) (*planv1beta1.RolloutPlan, error) {
	strategy := pr.placement.GetPlacementSpec().Strategy
	if spec.StagedUpdateStrategyName != "" {
		s := &placementv1beta1.ClusterStagedUpdateStrategy{}
		if err := p.Reader.Get(ctx, types.NamespacedName{Name: spec.StagedUpdateStrategyName}, s); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, inputErrorf("there is no ClusterStagedUpdateStrategy %s", spec.StagedUpdateStrategyName)
			}
			return nil, fmt.Errorf("failed to get ClusterStagedUpdateStrategy %s: %w", spec.StagedUpdateStrategyName, err)
		}
		clusters := map[string]map[string]string{}
		for _, cp := range plans {
			if cp.Decision == planv1beta1.DecisionSelected || cp.Decision == planv1beta1.DecisionKept {
				var l map[string]string
				if mc := byName[cp.Name]; mc != nil {
					l = mc.Labels
				}
				clusters[cp.Name] = l
			}
		}
		stages, unselected, err := updaterun.Stages(&s.Spec, clusters)
		if err != nil {
			return nil, inputErrorf("%v", err)
		}
		out := &planv1beta1.RolloutPlan{Strategy: placementv1beta1.ExternalRolloutStrategyType}
		for _, st := range stages {
			ps := planv1beta1.Stage{Name: st.StageName}
			for _, c := range st.Clusters {
				ps.Clusters = append(ps.Clusters, c.ClusterName)
			}
			for _, t := range st.AfterStageTaskStatus {
				ps.AfterStageTasks = append(ps.AfterStageTasks, t.Type)
			}
			out.Stages = append(out.Stages, ps)
		}
		out.Message = "a staged update run with strategy " + spec.StagedUpdateStrategyName + " would update the stages in this order"
		if len(unselected) > 0 {
			out.Message += fmt.Sprintf("; no stage matches %v: such a run would not update them", unselected)
		}
		return out, nil
	}
	if strategy.Type == placementv1beta1.ExternalRolloutStrategyType {
		return &planv1beta1.RolloutPlan{Strategy: strategy.Type,
			Message: "the placement's rollout is External: a staged update run moves it (give spec.stagedUpdateStrategyName to plan its stages)"}, nil
	}
	out := &planv1beta1.RolloutPlan{Strategy: placementv1beta1.RollingUpdateRolloutStrategyType}
	out.Waves = waves(plans, now, changed, strategy.RollingUpdate, pr.placement.GetPlacementSpec().Policy)
	out.Message = "assuming each cluster becomes available before the next wave; a cluster that does not holds the later waves"
	if len(out.Waves) == 0 {
		out.Message = "no cluster would change"
	}
	return out, nil
}

func (p *Planner) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

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
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	planv1beta1 "github.com/flotilla-io/flotilla/apis/plan/v1beta1"
	"github.com/flotilla-io/flotilla/hub/rollout"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// classify turns a scheduling cycle's result into a plan per cluster. on are
// the clusters the placement is on now (its active bindings). The rules:
//
//   - a selected cluster is Kept when the placement is on it, Selected
//     otherwise;
//   - a cluster the cycle unschedules, or one the placement is on that the
//     cycle did not select (a cluster that is gone), is Dropped;
//   - every other cluster is NotSelected.
//
// The order is the selected clusters, then the dropped ones, then the others,
// each by name; the reason is the scheduler's, as `kubectl flotilla why` says it.
func classify(res framework.CycleResult, on map[string]bool) []planv1beta1.ClusterPlan {
	selected := map[string]bool{}
	for _, c := range res.Selected {
		selected[c] = true
	}
	dropped := map[string]bool{}
	for _, c := range res.Unschedule {
		dropped[c] = true
	}
	for c := range on {
		if !selected[c] {
			dropped[c] = true
		}
	}
	var sel, drop, others []planv1beta1.ClusterPlan
	seen := map[string]bool{}
	for i := range res.Decisions {
		d := res.Decisions[i]
		seen[d.ClusterName] = true
		cp := planv1beta1.ClusterPlan{Name: d.ClusterName, Reason: d.Reason, Scheduler: &d}
		switch {
		case selected[d.ClusterName] && on[d.ClusterName]:
			cp.Decision = planv1beta1.DecisionKept
			if why, ok := res.Misplaced[d.ClusterName]; ok {
				cp.Reason = why
			}
			sel = append(sel, cp)
		case selected[d.ClusterName]:
			cp.Decision = planv1beta1.DecisionSelected
			sel = append(sel, cp)
		case dropped[d.ClusterName]:
			cp.Decision = planv1beta1.DecisionDropped
			drop = append(drop, cp)
		default:
			cp.Decision = planv1beta1.DecisionNotSelected
			others = append(others, cp)
		}
	}
	for c := range dropped {
		if !seen[c] {
			drop = append(drop, planv1beta1.ClusterPlan{Name: c, Decision: planv1beta1.DecisionDropped, Reason: "the member cluster is gone"})
		}
	}
	for _, l := range [][]planv1beta1.ClusterPlan{sel, drop, others} {
		sort.Slice(l, func(i, j int) bool { return l[i].Name < l[j].Name })
	}
	return append(append(sel, drop...), others...)
}

// current is what a cluster gets now: the binding the placement has there.
type current struct {
	// bound: the binding is Bound (the cluster holds the placement's resources).
	bound bool
	// ready: its resources are Available there.
	ready bool
}

// waves simulates the rolling update of a change with rollout.SelectWave, the
// function the rollout controller calls, assuming that every cluster it moves
// becomes available before the next wave: a cluster Selected is bound, a Kept
// one whose content changes is updated (changed), a Dropped one removed.
// Clusters that do not change are not in any wave. now are the bindings the
// placement has; a Kept cluster missing from it counts as bound and ready.
func waves(plans []planv1beta1.ClusterPlan, now map[string]current, changed map[string]bool, cfg *placementv1beta1.RollingUpdateConfig, policy *placementv1beta1.PlacementPolicy) []planv1beta1.Wave {
	type sim struct {
		b    rollout.Binding
		done bool
	}
	var bs []*sim
	target := 0
	for _, p := range plans {
		c, ok := now[p.Name]
		if !ok && p.Decision == planv1beta1.DecisionKept {
			c = current{bound: true, ready: true}
		}
		b := rollout.Binding{Name: p.Name, Cluster: p.Name, HasResources: c.bound, Ready: c.ready, NotReady: "not available"}
		switch p.Decision {
		case planv1beta1.DecisionSelected:
			b.State = placementv1beta1.BindingStateScheduled
			target++
		case planv1beta1.DecisionKept:
			b.State = placementv1beta1.BindingStateBound
			b.Current = !changed[p.Name]
			if !c.bound {
				b.State = placementv1beta1.BindingStateScheduled
			}
			target++
		case planv1beta1.DecisionDropped:
			b.State = placementv1beta1.BindingStateUnscheduled
		default:
			continue
		}
		bs = append(bs, &sim{b: b})
	}
	if n := wantClusters(policy); n > 0 {
		target = n
	}
	mu, ms := rollout.Limits(cfg, target)
	var out []planv1beta1.Wave
	for range len(bs) + 1 {
		in := rollout.Input{Target: target, MaxUnavailable: mu, MaxSurge: ms}
		for _, s := range bs {
			if !s.done {
				in.Bindings = append(in.Bindings, s.b)
			} else if s.b.State != placementv1beta1.BindingStateUnscheduled {
				in.Bindings = append(in.Bindings, s.b)
			}
		}
		plan := rollout.SelectWave(in)
		var w planv1beta1.Wave
		for _, s := range bs {
			if s.done {
				continue
			}
			switch plan.Steps[s.b.Name].Action {
			case rollout.ActionBind:
				w.Bind = append(w.Bind, s.b.Cluster)
			case rollout.ActionUpdate:
				w.Update = append(w.Update, s.b.Cluster)
			case rollout.ActionRemove:
				w.Remove = append(w.Remove, s.b.Cluster)
			case rollout.ActionNone:
				s.done = true
				continue
			default:
				continue
			}
			s.done = true
			s.b.State, s.b.HasResources, s.b.Ready, s.b.Current = placementv1beta1.BindingStateBound, true, true, true
			if plan.Steps[s.b.Name].Action == rollout.ActionRemove {
				s.b.State = placementv1beta1.BindingStateUnscheduled
			}
		}
		if len(w.Bind)+len(w.Update)+len(w.Remove) == 0 {
			break
		}
		out = append(out, w)
	}
	return out
}

// wantClusters is how many clusters a PickN policy asks for (0 otherwise).
func wantClusters(p *placementv1beta1.PlacementPolicy) int {
	if p == nil || p.PlacementType != placementv1beta1.PickN || p.NumberOfClusters == nil {
		return 0
	}
	return int(*p.NumberOfClusters)
}

// identify names a manifest (JSON) by group, version, kind, namespace and name.
func identify(raw []byte) (placementv1beta1.ResourceIdentifier, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return placementv1beta1.ResourceIdentifier{}, err
	}
	gvk := u.GroupVersionKind()
	return placementv1beta1.ResourceIdentifier{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}, nil
}

func idKey(id placementv1beta1.ResourceIdentifier) string {
	return id.Group + "/" + id.Kind + "/" + id.Namespace + "/" + id.Name
}

// compare says how each rendered manifest differs from what the cluster gets
// now (have, as the Work holds it, provenance annotations removed), and lists
// the objects in have that want no longer has as Delete. Manifests past the
// plan's limits are left out and truncated is true. A manifest that is not a
// Kubernetes object is an error naming it.
func compare(want, have [][]byte) (out []planv1beta1.PlannedManifest, truncated bool, err error) {
	old := map[string][]byte{}
	var oldOrder []placementv1beta1.ResourceIdentifier
	for _, raw := range have {
		id, err := identify(raw)
		if err != nil {
			continue // what the hub sent before is not the plan's to judge
		}
		old[idKey(id)] = raw
		oldOrder = append(oldOrder, id)
	}
	bytesUsed := 0
	add := func(m planv1beta1.PlannedManifest, size int) {
		if len(out) >= planv1beta1.MaxManifestsPerCluster || bytesUsed+size > planv1beta1.MaxManifestBytesPerCluster {
			truncated = true
			return
		}
		bytesUsed += size
		out = append(out, m)
	}
	kept := map[string]bool{}
	for _, raw := range want {
		id, err := identify(raw)
		if err != nil {
			return nil, false, fmt.Errorf("a rendered manifest is not a Kubernetes object: %w", err)
		}
		k := idKey(id)
		kept[k] = true
		m := planv1beta1.PlannedManifest{ResourceIdentifier: id, Change: planv1beta1.ChangeCreate, Object: &runtime.RawExtension{Raw: raw}}
		if prev, ok := old[k]; ok {
			d, err := diff(prev, raw)
			if err != nil {
				return nil, false, err
			}
			if d == "" {
				m.Change = planv1beta1.ChangeUnchanged
			} else {
				m.Change, m.Diff = planv1beta1.ChangeUpdate, d
			}
		}
		add(m, len(raw)+len(m.Diff))
	}
	for _, id := range oldOrder {
		if k := idKey(id); !kept[k] {
			add(planv1beta1.PlannedManifest{ResourceIdentifier: id, Change: planv1beta1.ChangeDelete}, 0)
		}
	}
	return out, truncated, nil
}

// diff is a unified diff of two JSON objects as YAML (keys sorted), "" when
// they are the same.
func diff(from, to []byte) (string, error) {
	a, err := toYAML(from)
	if err != nil {
		return "", err
	}
	b, err := toYAML(to)
	if err != nil {
		return "", err
	}
	if a == b {
		return "", nil
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(a), B: difflib.SplitLines(b),
		FromFile: "now", ToFile: "planned", Context: 3,
	})
}

func toYAML(raw []byte) (string, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("failed to read a manifest: %w", err)
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("failed to write a manifest as YAML: %w", err)
	}
	return string(out), nil
}

// stripProvenance removes the provenance annotations the work generator
// stamps (hub/workgen/provenance.go) from a Work's manifest, so that it
// compares with a rendered one; an empty annotations map goes too.
func stripProvenance(raw []byte) []byte {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return raw
	}
	ann := u.GetAnnotations()
	if len(ann) == 0 {
		return raw
	}
	for _, k := range []string{placementv1beta1.AnnotationPlacement, placementv1beta1.AnnotationResourceIndex, placementv1beta1.AnnotationHub} {
		delete(ann, k)
	}
	if len(ann) == 0 {
		unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
	} else {
		u.SetAnnotations(ann)
	}
	out, err := json.Marshal(u.Object)
	if err != nil {
		return raw
	}
	return out
}

// Access decides whether the user may see a hub object: allowed, or why not.
type Access func(id placementv1beta1.ResourceIdentifier) (allowed bool, why string)

// Redact removes from a plan the content of every manifest the user may not
// get on the hub, saying why in Forbidden: a plan never shows what its user
// cannot read. The identity, the change and the decision stay (the user asked
// for the placement's plan and may know what it places, as the placement's
// status lists it). access is asked once per object, whatever the clusters.
func Redact(st *planv1beta1.PlacementPlanStatus, access Access) {
	seen := map[string]string{}
	for i := range st.Clusters {
		for j := range st.Clusters[i].Manifests {
			m := &st.Clusters[i].Manifests[j]
			k := idKey(m.ResourceIdentifier)
			why, ok := seen[k]
			if !ok {
				allowed, reason := access(m.ResourceIdentifier)
				if allowed {
					why = ""
				} else {
					why = reason
					if why == "" {
						why = "you may not get this object on the hub"
					}
				}
				seen[k] = why
			}
			if why != "" {
				m.Object, m.Diff, m.Forbidden = nil, "", why
			}
		}
	}
}

// describe names an object in messages: Kind namespace/name or Kind name.
func describe(id placementv1beta1.ResourceIdentifier) string {
	if id.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", id.Kind, id.Namespace, id.Name)
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s", id.Kind, id.Name))
}

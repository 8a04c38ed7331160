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

package overrides

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// Override is one override snapshot, as Apply reads it.
type Override struct {
	// Snapshot names the snapshot: its name for a ClusterResourceOverrideSnapshot,
	// namespace/name for a ResourceOverrideSnapshot.
	Snapshot string
	// Name is the snapshot's name (without namespace).
	Name string
	// Namespace is a ResourceOverride's namespace (it selects only objects there);
	// empty for a ClusterResourceOverride, which selects cluster-scoped objects.
	Namespace string
	// Placement is the placement the override is limited to; empty for any.
	Placement string
	// Selectors select the objects the override changes.
	Selectors []placementv1beta1.OverrideResourceSelector
	// Rules are the override's rules, in order.
	Rules []placementv1beta1.OverrideRule
}

// FromClusterSnapshot reads a ClusterResourceOverrideSnapshot.
func FromClusterSnapshot(s *placementv1beta1.ClusterResourceOverrideSnapshot) Override {
	o := Override{Snapshot: s.Name, Name: s.Name, Selectors: s.Spec.OverrideSpec.ClusterResourceSelectors}
	if p := s.Spec.OverrideSpec.Placement; p != nil {
		o.Placement = p.Name
	}
	if p := s.Spec.OverrideSpec.Policy; p != nil {
		o.Rules = p.OverrideRules
	}
	return o
}

// FromSnapshot reads a ResourceOverrideSnapshot.
func FromSnapshot(s *placementv1beta1.ResourceOverrideSnapshot) Override {
	o := Override{Snapshot: s.Namespace + "/" + s.Name, Name: s.Name, Namespace: s.Namespace, Selectors: s.Spec.OverrideSpec.ResourceSelectors}
	if p := s.Spec.OverrideSpec.Placement; p != nil {
		o.Placement = p.Name
	}
	if p := s.Spec.OverrideSpec.Policy; p != nil {
		o.Rules = p.OverrideRules
	}
	return o
}

// clusterScoped reports whether the override is a ClusterResourceOverride's.
func (o *Override) clusterScoped() bool { return o.Namespace == "" }

// Selects reports whether the override selects an object: a ClusterResourceOverride
// selects cluster-scoped objects (no namespace), a ResourceOverride objects of its
// own namespace, either by group, version, kind and name.
func (o *Override) Selects(obj *unstructured.Unstructured) bool {
	if obj.GetNamespace() != o.Namespace {
		return false
	}
	gvk := obj.GroupVersionKind()
	for _, s := range o.Selectors {
		if s.Group == gvk.Group && s.Version == gvk.Version && s.Kind == gvk.Kind && s.Name == obj.GetName() {
			return true
		}
	}
	return false
}

// ForPlacement reports whether the override may apply to a placement's objects.
// An override without placement.name may apply to any placement. A
// ClusterResourceOverride's placement.name names a ClusterResourcePlacement; a
// ResourceOverride's names a ClusterResourcePlacement, or a ResourcePlacement in
// the override's own namespace.
func (o *Override) ForPlacement(placement pipeline.PlacementKey) bool {
	if o.Placement == "" {
		return true
	}
	if o.Placement != placement.Name {
		return false
	}
	return !placement.Namespaced() || o.Namespace == placement.Namespace
}

// SelectsCluster reports whether any rule of the override selects the cluster.
func (o *Override) SelectsCluster(mc *clusterv1beta1.MemberCluster) (bool, error) {
	for i := range o.Rules {
		ok, err := framework.MatchesClusterSelector(mc, o.Rules[i].ClusterSelector)
		if err != nil {
			return false, &Error{Override: o.Snapshot, Rule: i + 1, Err: err}
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// Sort puts overrides in the order they apply: ClusterResourceOverrides, then
// ResourceOverrides, each by snapshot name.
func Sort(os []Override) {
	sort.SliceStable(os, func(i, j int) bool {
		if os[i].clusterScoped() != os[j].clusterScoped() {
			return os[i].clusterScoped()
		}
		return os[i].Snapshot < os[j].Snapshot
	})
}

// Error is an override that cannot be applied to a manifest for a cluster.
type Error struct {
	// Override is the override snapshot's name (namespace/name for a ResourceOverride's).
	Override string
	// Rule is the rule's position, from 1.
	Rule int
	// Path is the JSON patch path, if a patch failed.
	Path string
	// Object names the manifest.
	Object string
	// Err is what went wrong.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "override %s rule %d", e.Override, e.Rule)
	if e.Path != "" {
		fmt.Fprintf(&b, " path %s", e.Path)
	}
	if e.Object != "" {
		fmt.Fprintf(&b, " on %s", e.Object)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Result is what the overrides made of one manifest.
type Result struct {
	// Object is the manifest after the overrides (nil when Deleted).
	Object []byte
	// Deleted is true when a Delete rule keeps the manifest off the cluster.
	Deleted bool
	// Applied are the snapshots of the overrides whose rules changed the manifest.
	Applied []string
}

// Apply applies the overrides (in the order given; see Sort) to one manifest (JSON)
// for target t (a binding's cluster and hand-off values). An override applies when it selects the manifest; each of its
// rules applies when it selects the cluster. The first failure is returned as an
// *Error.
func Apply(manifest []byte, overrides []Override, t Target) (Result, error) {
	mc := t.Cluster
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(manifest); err != nil {
		return Result{}, fmt.Errorf("failed to read manifest: %w", err)
	}
	res := Result{Object: manifest}
	for i := range overrides {
		o := &overrides[i]
		if !o.Selects(obj) {
			continue
		}
		applied := false
		for r := range o.Rules {
			rule := &o.Rules[r]
			ok, err := framework.MatchesClusterSelector(mc, rule.ClusterSelector)
			if err != nil {
				return Result{}, &Error{Override: o.Snapshot, Rule: r + 1, Object: describe(obj), Err: err}
			}
			if !ok {
				continue
			}
			applied = true
			if rule.OverrideType == placementv1beta1.DeleteOverrideType {
				return Result{Deleted: true, Applied: append(res.Applied, o.Snapshot)}, nil
			}
			out, perr := applyPatches(res.Object, rule.JSONPatchOverrides, t)
			if perr != nil {
				perr.Override, perr.Rule, perr.Object = o.Snapshot, r+1, describe(obj)
				return Result{}, perr
			}
			res.Object = out
		}
		if applied {
			res.Applied = append(res.Applied, o.Snapshot)
		}
	}
	return res, nil
}

// applyPatches applies one rule's JSON patch operations, each on its own so that
// a failure names its path.
func applyPatches(doc []byte, patches []placementv1beta1.JSONPatchOverride, t Target) ([]byte, *Error) {
	for _, p := range patches {
		op := map[string]any{"op": string(p.Operator), "path": p.Path}
		if p.Value != nil && p.Operator != placementv1beta1.JSONPatchOverrideOpRemove {
			v, err := substituteJSON(p.Value.Raw, t)
			if err != nil {
				return nil, &Error{Path: p.Path, Err: err}
			}
			op["value"] = json.RawMessage(v)
		}
		raw, err := json.Marshal([]any{op})
		if err != nil {
			return nil, &Error{Path: p.Path, Err: err}
		}
		patch, err := jsonpatch.DecodePatch(raw)
		if err != nil {
			return nil, &Error{Path: p.Path, Err: err}
		}
		out, err := patch.Apply(doc)
		if err != nil {
			return nil, &Error{Path: p.Path, Err: err}
		}
		doc = out
	}
	return doc, nil
}

// describe names an object in messages: Kind namespace/name or Kind name.
func describe(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", obj.GetKind(), ns, obj.GetName())
	}
	return fmt.Sprintf("%s %s", obj.GetKind(), obj.GetName())
}

// Applicable returns, of the given overrides, those a placement's binding on
// cluster mc applies: limited to no placement or to this one, selecting at least
// one of the objects, with a rule that selects the cluster. The result is sorted
// (see Sort).
func Applicable(overrides []Override, placement pipeline.PlacementKey, objects []*unstructured.Unstructured, mc *clusterv1beta1.MemberCluster) ([]Override, error) {
	var out []Override
	for i := range overrides {
		o := &overrides[i]
		if !o.ForPlacement(placement) {
			continue
		}
		selects := false
		for _, obj := range objects {
			if o.Selects(obj) {
				selects = true
				break
			}
		}
		if !selects {
			continue
		}
		ok, err := o.SelectsCluster(mc)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, *o)
		}
	}
	Sort(out)
	return out, nil
}

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

package placement

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// This file keeps a ClusterResourcePlacement and a ResourcePlacement (or two
// ResourcePlacements of a namespace) from fighting over an object both select:
// the placement created first keeps it, the later one leaves that object out
// and reports ConditionConflicted. The decision is per object, not per
// placement: the later placement still places everything else it selects.
// What a placement places is read from the other placements' status
// (selectedResources, which lists what each actually places), so an earlier
// placement's choice is final and two placements never wait on each other.

// objectID identifies a hub object regardless of version.
type objectID struct{ group, kind, namespace, name string }

func (o objectID) String() string {
	kind := o.kind
	if o.group != "" {
		kind += "." + o.group
	}
	if o.namespace == "" {
		return kind + " " + o.name
	}
	return kind + " " + o.namespace + "/" + o.name
}

// conflict is an object left out, and the placement that places it.
type conflict struct {
	object objectID
	owner  pipeline.PlacementKey
}

// mayConflict reports whether two placements can claim the same objects:
// a ClusterResourcePlacement and a ResourcePlacement, or two
// ResourcePlacements of one namespace. Two ClusterResourcePlacements are left
// as they always were.
func mayConflict(a, b pipeline.PlacementKey) bool {
	switch {
	case a == b:
		return false
	case a.Namespaced() && b.Namespaced():
		return a.Namespace == b.Namespace
	default:
		return a.Namespaced() || b.Namespaced()
	}
}

// isNamespace reports whether an object is a Namespace, which is never a
// conflict (a ResourcePlacement only makes sure it exists).
func isNamespace(group, kind string) bool { return group == "" && kind == "Namespace" }

// claims returns, for every object that placements created before self place,
// the earliest of them; others may include self and placements that cannot
// conflict with it, which are ignored.
func claims(self placementv1beta1.PlacementObj, others []placementv1beta1.PlacementObj) map[objectID]pipeline.PlacementKey {
	selfKey := pipeline.KeyOf(self)
	earlier := make([]placementv1beta1.PlacementObj, 0, len(others))
	for _, o := range others {
		if mayConflict(selfKey, pipeline.KeyOf(o)) && o.GetDeletionTimestamp().IsZero() && pipeline.Earlier(o, self) {
			earlier = append(earlier, o)
		}
	}
	pipeline.SortByCreation(earlier)
	out := map[objectID]pipeline.PlacementKey{}
	for _, o := range earlier {
		for _, id := range o.GetPlacementStatus().SelectedResources {
			if isNamespace(id.Group, id.Kind) {
				continue
			}
			k := objectID{group: id.Group, kind: id.Kind, namespace: id.Namespace, name: id.Name}
			if _, taken := out[k]; !taken {
				out[k] = pipeline.KeyOf(o)
			}
		}
	}
	return out
}

// withoutClaimed returns the selected objects that no earlier placement
// claims, and the conflicts for the others.
func withoutClaimed(selected []*unstructured.Unstructured, claimed map[objectID]pipeline.PlacementKey) ([]*unstructured.Unstructured, []conflict) {
	if len(claimed) == 0 {
		return selected, nil
	}
	kept := make([]*unstructured.Unstructured, 0, len(selected))
	var out []conflict
	for _, u := range selected {
		gvk := u.GroupVersionKind()
		id := objectID{group: gvk.Group, kind: gvk.Kind, namespace: u.GetNamespace(), name: u.GetName()}
		if owner, ok := claimed[id]; ok && !isNamespace(gvk.Group, gvk.Kind) {
			out = append(out, conflict{object: id, owner: owner})
			continue
		}
		kept = append(kept, u)
	}
	return kept, out
}

// conflictMessage says which objects are left out and who places them.
func conflictMessage(cs []conflict) string {
	byOwner := map[pipeline.PlacementKey][]string{}
	var owners []pipeline.PlacementKey
	for _, c := range cs {
		if byOwner[c.owner] == nil {
			owners = append(owners, c.owner)
		}
		byOwner[c.owner] = append(byOwner[c.owner], c.object.String())
	}
	sort.Slice(owners, func(i, j int) bool { return owners[i].String() < owners[j].String() })
	parts := make([]string, 0, len(owners))
	for _, o := range owners {
		objs := byOwner[o]
		sort.Strings(objs)
		parts = append(parts, fmt.Sprintf("%s placed by %s %s, created earlier", strings.Join(objs, ", "), o.Kind(), o))
	}
	return fmt.Sprintf("%d selected object(s) not placed by this placement: %s", len(cs), strings.Join(parts, "; "))
}

// resolveConflicts leaves out of the selection the objects an earlier
// placement places (see the top of this file).
func (r *Reconciler) resolveConflicts(ctx context.Context, s *scope) error {
	if s.selectErr != nil || len(s.selected) == 0 {
		return nil
	}
	var others []placementv1beta1.PlacementObj
	// A ClusterResourcePlacement can conflict with ResourcePlacements only; a
	// ResourcePlacement with ClusterResourcePlacements and those of its namespace.
	if s.key.Namespaced() {
		crps := &placementv1beta1.ClusterResourcePlacementList{}
		if err := r.Client.List(ctx, crps); err != nil {
			return fmt.Errorf("failed to list ClusterResourcePlacements: %w", err)
		}
		for i := range crps.Items {
			others = append(others, &crps.Items[i])
		}
	}
	rps := &placementv1beta1.ResourcePlacementList{}
	var opts []client.ListOption
	if s.key.Namespaced() {
		opts = append(opts, client.InNamespace(s.key.Namespace))
	}
	if err := r.Client.List(ctx, rps, opts...); err != nil {
		return fmt.Errorf("failed to list ResourcePlacements: %w", err)
	}
	for i := range rps.Items {
		others = append(others, &rps.Items[i])
	}
	s.selected, s.conflicts = withoutClaimed(s.selected, claims(s.placement, others))
	return nil
}

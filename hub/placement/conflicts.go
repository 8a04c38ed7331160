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
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// This file keeps two placements from fighting over an object both select: the
// placement created first keeps it, the later one leaves that object out and
// reports ConditionConflicted. The decision is made on the hub, before any Work
// goes out, so the later placement never sends the object and deleting it never
// removes what the earlier one places. It is per object, not per placement: the
// later placement still places everything else it selects.
//
// The rules, for a placement self and every other placement o created before it
// (pipeline.Earlier) and not being deleted:
//
//  1. Two ResourcePlacements of different namespaces never conflict.
//  2. Two placements whose apply strategies both set allowCoOwnership share
//     what they both select: neither leaves anything out for the other.
//  3. An object o places (its status.selectedResources, which lists what o
//     actually places) is left out of self, with o as its owner; the earliest
//     such o wins.
//  4. A Namespace is a conflict only between two ClusterResourcePlacements: the
//     Namespace a ResourcePlacement brings is create-only (members get it if
//     missing, never changed), so it is neither claimed by one nor left out of
//     one.
//  5. A ClusterResourcePlacement that places a Namespace places everything in
//     it, so for a later ClusterResourcePlacement it claims every object of
//     that namespace too, whether or not its status lists the object yet.
//
// Reading what o places from its status makes an earlier placement's choice
// final: two placements never wait on each other.

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

// indexKey is the key of the object in the claims index (indexClaims).
func (o objectID) indexKey() string {
	return o.group + "/" + o.kind + "/" + o.namespace + "/" + o.name
}

func idOf(u *unstructured.Unstructured) objectID {
	gvk := u.GroupVersionKind()
	return objectID{group: gvk.Group, kind: gvk.Kind, namespace: u.GetNamespace(), name: u.GetName()}
}

func idOfResource(id placementv1beta1.ResourceIdentifier) objectID {
	return objectID{group: id.Group, kind: id.Kind, namespace: id.Namespace, name: id.Name}
}

func namespaceOf(name string) objectID { return objectID{kind: "Namespace", name: name} }

// conflict is an object left out, and the placement that places it.
type conflict struct {
	object objectID
	owner  pipeline.PlacementKey
}

// mayConflict reports whether two placements can claim the same objects:
// any two, except ResourcePlacements of different namespaces (rule 1).
func mayConflict(a, b pipeline.PlacementKey) bool {
	switch {
	case a == b:
		return false
	case a.Namespaced() && b.Namespaced():
		return a.Namespace == b.Namespace
	default:
		return true
	}
}

// isNamespace reports whether an object is a Namespace.
func isNamespace(group, kind string) bool { return group == "" && kind == "Namespace" }

// coOwned reports whether a placement's apply strategy allows co-ownership.
func coOwned(p placementv1beta1.PlacementObj) bool {
	as := p.GetPlacementSpec().Strategy.ApplyStrategy
	return as != nil && as.AllowCoOwnership
}

// claimSet is what placements created before self place, as far as self is
// concerned: objects by ID, and whole namespaces (rule 5), each with the
// earliest placement that claims it.
type claimSet struct {
	objects    map[objectID]pipeline.PlacementKey
	namespaces map[string]pipeline.PlacementKey
}

func (c claimSet) empty() bool { return len(c.objects) == 0 && len(c.namespaces) == 0 }

// owner returns the placement that claims an object self selects, if any.
func (c claimSet) owner(id objectID) (pipeline.PlacementKey, bool) {
	if o, ok := c.objects[id]; ok {
		return o, true
	}
	if id.namespace != "" {
		o, ok := c.namespaces[id.namespace]
		return o, ok
	}
	return pipeline.PlacementKey{}, false
}

// claims returns what the placements created before self place that self must
// leave out (the rules at the top of this file); others may include self and
// placements that cannot conflict with it, which are ignored.
func claims(self placementv1beta1.PlacementObj, others []placementv1beta1.PlacementObj) claimSet {
	selfKey := pipeline.KeyOf(self)
	earlier := make([]placementv1beta1.PlacementObj, 0, len(others))
	for _, o := range others {
		if !mayConflict(selfKey, pipeline.KeyOf(o)) || !o.GetDeletionTimestamp().IsZero() || !pipeline.Earlier(o, self) {
			continue
		}
		if coOwned(self) && coOwned(o) {
			continue
		}
		earlier = append(earlier, o)
	}
	pipeline.SortByCreation(earlier)
	out := claimSet{objects: map[objectID]pipeline.PlacementKey{}, namespaces: map[string]pipeline.PlacementKey{}}
	for _, o := range earlier {
		oKey := pipeline.KeyOf(o)
		bothCluster := !selfKey.Namespaced() && !oKey.Namespaced()
		for _, rid := range o.GetPlacementStatus().SelectedResources {
			id := idOfResource(rid)
			if isNamespace(id.group, id.kind) {
				if !bothCluster {
					continue // rule 4
				}
				if _, taken := out.namespaces[id.name]; !taken {
					out.namespaces[id.name] = oKey // rule 5
				}
			}
			if _, taken := out.objects[id]; !taken {
				out.objects[id] = oKey
			}
		}
	}
	return out
}

// withoutClaimed returns the selected objects that no earlier placement
// claims, and the conflicts for the others. self is the selecting placement.
func withoutClaimed(self pipeline.PlacementKey, selected []*unstructured.Unstructured, claimed claimSet) ([]*unstructured.Unstructured, []conflict) {
	if claimed.empty() {
		return selected, nil
	}
	kept := make([]*unstructured.Unstructured, 0, len(selected))
	var out []conflict
	for _, u := range selected {
		id := idOf(u)
		if isNamespace(id.group, id.kind) && self.Namespaced() {
			kept = append(kept, u) // rule 4: a ResourcePlacement's own Namespace
			continue
		}
		if owner, ok := claimed.owner(id); ok {
			out = append(out, conflict{object: id, owner: owner})
			continue
		}
		kept = append(kept, u)
	}
	return kept, out
}

// decideConflicts is the whole conflict decision for placement self: of what it
// selects, what it places and what it leaves out, and to whom (the rules at the
// top of this file). others are the placements that may claim what self
// selects, in any order; self among them is ignored.
func decideConflicts(self placementv1beta1.PlacementObj, selected []*unstructured.Unstructured, others []placementv1beta1.PlacementObj) ([]*unstructured.Unstructured, []conflict) {
	return withoutClaimed(pipeline.KeyOf(self), selected, claims(self, others))
}

// lookupKeys are the claims-index keys under which the placements that may
// claim what self selects are found: each selected object and, for a
// ClusterResourcePlacement, the Namespace of each namespaced one (rule 5).
func lookupKeys(self pipeline.PlacementKey, selected []*unstructured.Unstructured) []string {
	seen := map[string]bool{}
	var out []string
	add := func(id objectID) {
		if k := id.indexKey(); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, u := range selected {
		id := idOf(u)
		add(id)
		if !self.Namespaced() && id.namespace != "" {
			add(namespaceOf(id.namespace))
		}
	}
	return out
}

// claimsIndexKeys are the keys a placement is indexed under: every object its
// status says it places and, once each, the namespace of every namespaced one
// (namespaceMembersKey), under which a placement that starts or stops placing
// that Namespace finds it (rule 5).
func claimsIndexKeys(o client.Object) []string {
	p, ok := o.(placementv1beta1.PlacementObj)
	if !ok {
		return nil
	}
	ids := p.GetPlacementStatus().SelectedResources
	out := make([]string, 0, len(ids))
	namespaces := map[string]bool{}
	for _, id := range ids {
		out = append(out, idOfResource(id).indexKey())
		if id.Namespace != "" && !namespaces[id.Namespace] {
			namespaces[id.Namespace] = true
			out = append(out, namespaceMembersKey(id.Namespace))
		}
	}
	return out
}

// namespaceMembersKey is the claims-index key of the placements that place
// objects in namespace ns. An object's key has four parts separated by "/",
// and a namespace cannot hold ":", so the two never collide.
func namespaceMembersKey(ns string) string { return "in-namespace:" + ns }

// maxPeerKeys bounds the index lookups one change of a placement's placed
// objects makes (wakeKeys); above it every placement that may conflict is
// woken, as a change of a placement placing thousands of objects would
// otherwise cost thousands of lookups.
const maxPeerKeys = 256

// wakeKeys are the claims-index keys of the placements whose conflict
// decision may change when p starts or stops placing what its status lists:
// those placing one of the same objects, and for a Namespace those placing
// objects in it (rule 5). A placement that leaves out an object for p is not
// found here (it does not place it); it has Conflicted True, and
// mayConflictWith wakes those too. ok is false when there are more than
// maxPeerKeys keys.
func wakeKeys(p placementv1beta1.PlacementObj) (keys []string, ok bool) {
	seen := map[string]bool{}
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, rid := range p.GetPlacementStatus().SelectedResources {
		id := idOfResource(rid)
		add(id.indexKey())
		if isNamespace(id.group, id.kind) {
			add(namespaceMembersKey(id.name))
		}
	}
	return keys, len(keys) <= maxPeerKeys
}

// conflicted reports whether p leaves objects out for an earlier placement.
func conflicted(p placementv1beta1.PlacementObj) bool {
	c := conditions.Get(p.GetPlacementStatus().Conditions, p.PlacementConditionType(placementv1beta1.ConditionConflicted))
	return c != nil && c.Status == metav1.ConditionTrue
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

// indexClaims indexes placements of both scopes by the objects they place
// (claimsIndexKeys), so that a placement finds the few that may claim what it
// selects without reading every placement: without it, each reconcile of n
// placements read all n, O(n²) per round.
const indexClaims = "flotilla.placement.claims"

var claimsIndexed sync.Map // cache.Cache -> true

// setupClaimsIndex registers indexClaims with the manager's cache, once.
func setupClaimsIndex(mgr ctrl.Manager) error {
	if _, done := claimsIndexed.Load(mgr.GetCache()); done {
		return nil
	}
	for _, o := range []client.Object{&placementv1beta1.ClusterResourcePlacement{}, &placementv1beta1.ResourcePlacement{}} {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), o, indexClaims, claimsIndexKeys); err != nil {
			return fmt.Errorf("failed to index placements by the objects they place: %w", err)
		}
	}
	claimsIndexed.Store(mgr.GetCache(), true)
	return nil
}

// listClaiming returns the placements indexed under claims-index key k (read
// only: the cache's objects are not copied); ResourcePlacements only of
// namespace when it is not empty.
func (r *Reconciler) listClaiming(ctx context.Context, k, namespace string) ([]placementv1beta1.PlacementObj, error) {
	opts := []client.ListOption{client.MatchingFields{indexClaims: k}, client.UnsafeDisableDeepCopy}
	crps := &placementv1beta1.ClusterResourcePlacementList{}
	if err := r.Client.List(ctx, crps, opts...); err != nil {
		return nil, fmt.Errorf("failed to list ClusterResourcePlacements: %w", err)
	}
	out := make([]placementv1beta1.PlacementObj, 0, len(crps.Items))
	for i := range crps.Items {
		out = append(out, &crps.Items[i])
	}
	rps := &placementv1beta1.ResourcePlacementList{}
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := r.Client.List(ctx, rps, opts...); err != nil {
		return nil, fmt.Errorf("failed to list ResourcePlacements: %w", err)
	}
	for i := range rps.Items {
		out = append(out, &rps.Items[i])
	}
	return out, nil
}

// resolveConflicts leaves out of the selection the objects an earlier
// placement places (see the top of this file).
func (r *Reconciler) resolveConflicts(ctx context.Context, s *scope) error {
	if s.selectErr != nil || len(s.selected) == 0 {
		return nil
	}
	found := map[pipeline.PlacementKey]placementv1beta1.PlacementObj{}
	namespace := ""
	if s.key.Namespaced() {
		namespace = s.key.Namespace
	}
	for _, k := range lookupKeys(s.key, s.selected) {
		claiming, err := r.listClaiming(ctx, k, namespace)
		if err != nil {
			return err
		}
		for _, p := range claiming {
			found[pipeline.KeyOf(p)] = p
		}
	}
	others := make([]placementv1beta1.PlacementObj, 0, len(found))
	for _, o := range found {
		others = append(others, o)
	}
	s.selected, s.conflicts = decideConflicts(s.placement, s.selected, others)
	return nil
}

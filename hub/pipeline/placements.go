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

package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// PlacementKey identifies a placement of either scope: a ClusterResourcePlacement
// by its name (Namespace empty), a ResourcePlacement by its namespace and name.
// The controllers of the pipeline reconcile placements by key, so that one
// controller serves both kinds: a reconcile.Request of a cluster-scoped
// placement has no namespace, one of a ResourcePlacement has its namespace.
//
// The snapshots and bindings of a ResourcePlacement are the namespaced kinds
// (ResourceSnapshot, SchedulingPolicySnapshot, ResourceBinding) in its
// namespace; every object the hub makes for a placement carries
// LabelPlacementName and, for a ResourcePlacement, LabelPlacementNamespace.
type PlacementKey struct {
	// Namespace is a ResourcePlacement's namespace; empty for a
	// ClusterResourcePlacement.
	Namespace string
	// Name is the placement's name.
	Name string
}

// KeyOf returns the key of a placement object.
func KeyOf(p metav1.Object) PlacementKey {
	return PlacementKey{Namespace: p.GetNamespace(), Name: p.GetName()}
}

// KeyFromRequest returns the key of the placement a request names.
func KeyFromRequest(req reconcile.Request) PlacementKey {
	return PlacementKey{Namespace: req.Namespace, Name: req.Name}
}

// OwnerKey returns the key of the placement an object the hub made for it
// (a snapshot, binding or Work) belongs to, read from its labels; ok is false
// for an object without LabelPlacementName.
func OwnerKey(o metav1.Object) (key PlacementKey, ok bool) {
	l := o.GetLabels()
	name := l[placementv1beta1.LabelPlacementName]
	if name == "" {
		return PlacementKey{}, false
	}
	return PlacementKey{Namespace: l[placementv1beta1.LabelPlacementNamespace], Name: name}, true
}

// Namespaced reports whether the key is a ResourcePlacement's.
func (k PlacementKey) Namespaced() bool { return k.Namespace != "" }

// String is "name" for a ClusterResourcePlacement and "namespace/name" for a
// ResourcePlacement.
func (k PlacementKey) String() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// Kind is the placement's kind.
func (k PlacementKey) Kind() string {
	if k.Namespaced() {
		return "ResourcePlacement"
	}
	return "ClusterResourcePlacement"
}

// Request is the reconcile request of the placement.
func (k PlacementKey) Request() reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: k.Namespace, Name: k.Name}}
}

// Labels are the labels that mark an object as the placement's.
func (k PlacementKey) Labels() map[string]string {
	l := map[string]string{placementv1beta1.LabelPlacementName: k.Name}
	if k.Namespaced() {
		l[placementv1beta1.LabelPlacementNamespace] = k.Namespace
	}
	return l
}

// listOptions select the placement's objects of a kind of its scope.
func (k PlacementKey) listOptions(extra map[string]string) []client.ListOption {
	l := client.MatchingLabels(k.Labels())
	for key, v := range extra {
		l[key] = v
	}
	opts := []client.ListOption{l}
	if k.Namespaced() {
		opts = append(opts, client.InNamespace(k.Namespace))
	}
	return opts
}

// WorkName is the name of the placement's Work (of a scheduling group, or ""
// for its own resources) in a member's namespace, unique to the placement and
// group and at most 253 characters:
//
//   - a ClusterResourcePlacement's own Work is <name>-work when that fits;
//   - a scheduling group's Work, a ResourcePlacement's Work, and a name too long
//     for the short form carry a hash of the placement and group:
//     [<namespace>.]<name>[.<group>]-<8 hex>-work, the readable part trimmed to
//     fit (and the group to the characters a name may hold). So web's group db
//     and a placement named web-db, or a ClusterResourcePlacement and a
//     ResourcePlacement of the same name, never share a Work.
//
// Hubs before this scheme named a group's Work <name>-<group>-work
// (LegacyWorkName); the work generator keeps using such a Work when it finds
// one its binding owns.
func (k PlacementKey) WorkName(group string) string {
	const suffix = "-work"
	if !k.Namespaced() && group == "" && len(k.Name) <= 253-len(suffix) {
		return k.Name + suffix
	}
	kind := "ClusterResourcePlacement/"
	if k.Namespaced() {
		kind = "ResourcePlacement/" + k.Namespace + "/"
	}
	sum := sha256.Sum256([]byte(kind + k.Name + "/" + group))
	prefix := k.Name
	if k.Namespaced() {
		prefix = k.Namespace + "." + prefix
	}
	if group != "" {
		prefix += "-" + nameChars(group)
	}
	// Keep the hash and the suffix.
	if max := 253 - len("-12345678"+suffix); len(prefix) > max {
		prefix = strings.TrimRight(prefix[:max], ".-")
	}
	return prefix + "-" + hex.EncodeToString(sum[:4]) + suffix
}

// LegacyWorkName is the name older hubs gave a ClusterResourcePlacement's Work
// of a scheduling group (<name>-<group>-work); "" where it is WorkName's.
func (k PlacementKey) LegacyWorkName(group string) string {
	if k.Namespaced() || group == "" {
		return ""
	}
	return k.Name + "-" + group + "-work"
}

// nameChars keeps the characters of s a DNS subdomain name may hold, in lower
// case.
func nameChars(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return -1
	}, s)
}

// NewPlacement returns an empty placement object of the key's kind, with its
// name and namespace set.
func NewPlacement(k PlacementKey) placementv1beta1.PlacementObj {
	meta := metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}
	if k.Namespaced() {
		return &placementv1beta1.ResourcePlacement{ObjectMeta: meta}
	}
	return &placementv1beta1.ClusterResourcePlacement{ObjectMeta: meta}
}

// GetPlacement reads a placement of either kind.
func GetPlacement(ctx context.Context, r client.Reader, k PlacementKey) (placementv1beta1.PlacementObj, error) {
	p := NewPlacement(k)
	if err := r.Get(ctx, types.NamespacedName{Namespace: k.Namespace, Name: k.Name}, p); err != nil {
		return nil, err
	}
	return p, nil
}

// ListPlacements lists the placements of both kinds, ClusterResourcePlacements
// first.
func ListPlacements(ctx context.Context, r client.Reader) ([]placementv1beta1.PlacementObj, error) {
	return listBothScopes[placementv1beta1.PlacementObj](ctx, r, "placements",
		&placementv1beta1.ClusterResourcePlacementList{}, &placementv1beta1.ResourcePlacementList{})
}

// NewBinding returns an empty binding of the scope of the placement key.
func NewBinding(k PlacementKey) placementv1beta1.BindingObj {
	if k.Namespaced() {
		return &placementv1beta1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace}}
	}
	return &placementv1beta1.ClusterResourceBinding{}
}

// GetBinding reads the binding a request names: a ResourceBinding when the
// request has a namespace, a ClusterResourceBinding otherwise.
func GetBinding(ctx context.Context, r client.Reader, nn types.NamespacedName) (placementv1beta1.BindingObj, error) {
	b := NewBinding(PlacementKey{Namespace: nn.Namespace})
	if err := r.Get(ctx, nn, b); err != nil {
		return nil, err
	}
	return b, nil
}

// ListBindings lists a placement's bindings, in every state.
func ListBindings(ctx context.Context, r client.Reader, k PlacementKey) ([]placementv1beta1.BindingObj, error) {
	// A label selector is matched against every binding of the fleet: a cache
	// that has the binding index (SetupIndexes) answers from it instead.
	if out, err := ListBindingsCached(ctx, r, k); err == nil {
		return out, nil
	}
	out, err := listAs[placementv1beta1.BindingObj](ctx, r, bindingList(k), k.listOptions(nil)...)
	if err != nil {
		return nil, fmt.Errorf("failed to list the bindings of %s: %w", k, err)
	}
	return out, nil
}

// ListBindingsCached lists a placement's bindings, in every state, through
// IndexBindingPlacement (a manager's cached client).
func ListBindingsCached(ctx context.Context, r client.Reader, k PlacementKey) ([]placementv1beta1.BindingObj, error) {
	opts := []client.ListOption{client.MatchingFields{IndexBindingPlacement: k.Name}}
	if k.Namespaced() {
		opts = append(opts, client.InNamespace(k.Namespace))
	}
	all, err := listAs[placementv1beta1.BindingObj](ctx, r, bindingList(k), opts...)
	if err != nil {
		return nil, fmt.Errorf("failed to list the bindings of %s: %w", k, err)
	}
	out := all[:0]
	for _, b := range all {
		if !k.Namespaced() || b.GetLabels()[placementv1beta1.LabelPlacementNamespace] == k.Namespace {
			out = append(out, b)
		}
	}
	return out, nil
}

// ListBindingsOnCluster lists the bindings of both kinds that target a cluster,
// through IndexBindingCluster (a manager's cached client).
func ListBindingsOnCluster(ctx context.Context, r client.Reader, cluster string) ([]placementv1beta1.BindingObj, error) {
	return listBothScopes[placementv1beta1.BindingObj](ctx, r, "bindings on "+cluster,
		&placementv1beta1.ClusterResourceBindingList{}, &placementv1beta1.ResourceBindingList{},
		client.MatchingFields{IndexBindingCluster: cluster})
}

// BindingKind is the kind of a binding object, for server-side apply bodies.
func BindingKind(b placementv1beta1.BindingObj) string {
	if _, ok := b.(*placementv1beta1.ResourceBinding); ok {
		return "ResourceBinding"
	}
	return "ClusterResourceBinding"
}

// NewResourceSnapshot returns an empty resource snapshot of the key's scope.
func NewResourceSnapshot(k PlacementKey) placementv1beta1.ResourceSnapshotObj {
	if k.Namespaced() {
		return &placementv1beta1.ResourceSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace}}
	}
	return &placementv1beta1.ClusterResourceSnapshot{}
}

// ListResourceSnapshots lists the placement's resource snapshots carrying the
// extra labels too.
func ListResourceSnapshots(ctx context.Context, r client.Reader, k PlacementKey, extra map[string]string) ([]placementv1beta1.ResourceSnapshotObj, error) {
	var list client.ObjectList = &placementv1beta1.ClusterResourceSnapshotList{}
	if k.Namespaced() {
		list = &placementv1beta1.ResourceSnapshotList{}
	}
	out, err := listAs[placementv1beta1.ResourceSnapshotObj](ctx, r, list, k.listOptions(extra)...)
	if err != nil {
		return nil, fmt.Errorf("failed to list the resource snapshots of %s: %w", k, err)
	}
	return out, nil
}

// GetResourceSnapshot reads a resource snapshot of the key's scope by name.
func GetResourceSnapshot(ctx context.Context, r client.Reader, k PlacementKey, name string) (placementv1beta1.ResourceSnapshotObj, error) {
	s := NewResourceSnapshot(k)
	if err := r.Get(ctx, types.NamespacedName{Namespace: k.Namespace, Name: name}, s); err != nil {
		return nil, err
	}
	return s, nil
}

// NewPolicySnapshot returns an empty scheduling policy snapshot of the key's scope.
func NewPolicySnapshot(k PlacementKey) placementv1beta1.PolicySnapshotObj {
	if k.Namespaced() {
		return &placementv1beta1.SchedulingPolicySnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace}}
	}
	return &placementv1beta1.ClusterSchedulingPolicySnapshot{}
}

// ListPolicySnapshots lists the placement's scheduling policy snapshots carrying
// the extra labels too.
func ListPolicySnapshots(ctx context.Context, r client.Reader, k PlacementKey, extra map[string]string) ([]placementv1beta1.PolicySnapshotObj, error) {
	var list client.ObjectList = &placementv1beta1.ClusterSchedulingPolicySnapshotList{}
	if k.Namespaced() {
		list = &placementv1beta1.SchedulingPolicySnapshotList{}
	}
	out, err := listAs[placementv1beta1.PolicySnapshotObj](ctx, r, list, k.listOptions(extra)...)
	if err != nil {
		return nil, fmt.Errorf("failed to list the policy snapshots of %s: %w", k, err)
	}
	return out, nil
}

// SortByCreation orders placements oldest first, by creation time and then by
// kind and key, so that "the earlier placement" is well defined.
func SortByCreation(ps []placementv1beta1.PlacementObj) {
	sort.SliceStable(ps, func(i, j int) bool { return Earlier(ps[i], ps[j]) })
}

// Earlier reports whether placement a was created before b (ties broken by
// ClusterResourcePlacements first, then by key).
func Earlier(a, b placementv1beta1.PlacementObj) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	ka, kb := KeyOf(a), KeyOf(b)
	if ka.Namespaced() != kb.Namespaced() {
		return !ka.Namespaced()
	}
	return ka.String() < kb.String()
}

// bindingList returns an empty list of the bindings of the key's scope.
func bindingList(k PlacementKey) client.ObjectList {
	if k.Namespaced() {
		return &placementv1beta1.ResourceBindingList{}
	}
	return &placementv1beta1.ClusterResourceBindingList{}
}

// listAs lists into list, a typed list of one kind, and returns its items as T
// (pointers into the list's items).
func listAs[T any](ctx context.Context, r client.Reader, list client.ObjectList, opts ...client.ListOption) ([]T, error) {
	if err := r.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	for _, o := range items {
		t, ok := o.(T)
		if !ok {
			return nil, fmt.Errorf("a %T is not a %T", o, t)
		}
		out = append(out, t)
	}
	return out, nil
}

// listBothScopes lists the cluster-scoped kind, then the namespaced one, with
// the same options; what names the objects in an error.
func listBothScopes[T any](ctx context.Context, r client.Reader, what string, cluster, namespaced client.ObjectList, opts ...client.ListOption) ([]T, error) {
	out, err := listAs[T](ctx, r, cluster, opts...)
	if err != nil {
		return nil, fmt.Errorf("failed to list the %s (cluster-scoped): %w", what, err)
	}
	more, err := listAs[T](ctx, r, namespaced, opts...)
	if err != nil {
		return nil, fmt.Errorf("failed to list the %s (namespaced): %w", what, err)
	}
	return append(out, more...), nil
}

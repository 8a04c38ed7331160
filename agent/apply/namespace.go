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

package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
)

// A Namespace is never deleted while it holds objects no Work applied, or objects
// another Work applies: deleting it would delete them. namespaceInUse lists every
// namespaced resource the member serves (discovery, not cached: a kind added a
// moment ago counts) and looks at the objects' metadata only.
//
// Not the member's own objects (foreignObjects):
//   - objects that carry AnnotationWork (any Work's);
//   - objects owned (ownerReferences, transitively) by those, or by objects this
//     removal deleted: the ReplicaSets and Pods of a placed Deployment, the
//     EndpointSlices of a placed Service, being garbage-collected or not;
//   - objects whose every owner is one of those or a namespaced object that no
//     longer exists: the garbage collector is deleting them (the Pods of a
//     ReplicaSet it deleted already, when the placed Deployment went). An owner
//     of a cluster-scoped kind, or of a kind the agent cannot map, counts as
//     present;
//   - the Endpoints of a placed Service (the endpoints controller sets no owner);
//   - objects being deleted already;
//   - what every namespace has: the ServiceAccount default, the ConfigMap
//     kube-root-ca.crt, Events (not listed), and the RoleBinding the least-privilege
//     profile grants the agent.
//
// A resource that cannot be listed (forbidden, a failing aggregated API) or that
// holds more than maxNamespaceScan objects makes the Namespace in use as well:
// what cannot be checked is not deleted.

// maxNamespaceScan bounds the objects of one resource read from one namespace.
const maxNamespaceScan = 1000

// maxNamedForeign is how many foreign objects a message names.
const maxNamedForeign = 5

// skippedResources are not listed: Events come and go with everything, and the
// metrics API serves views of Pods and Nodes, not objects.
var skippedResources = []schema.GroupResource{
	{Group: "", Resource: "events"},
	{Group: "events.k8s.io", Resource: "events"},
}

var skippedGroups = []string{"metrics.k8s.io"}

// nsObject is the metadata of an object in a namespace that namespaceInUse reads.
type nsObject struct {
	// kind is the kind as people write it ("ConfigMap", "Deployment.apps").
	kind   string
	name   string
	uid    types.UID
	owners []nsOwner
	// work is the Work its AnnotationWork names; "" if none.
	work      string
	deleting  bool
	managedBy string
}

func (o nsObject) String() string { return o.kind + " " + o.name }

// nsOwner is an owner reference of an object in a namespace.
type nsOwner struct {
	uid types.UID
	// namespaced is true when the owner's kind is namespaced: the owner is then
	// in the same namespace, and gone when the namespace does not list it.
	namespaced bool
}

// foreignObjects returns the objects of a namespace that are the member's own (the
// rules above), in the order given. deleted holds the UIDs of objects the current
// removal deleted.
func foreignObjects(objs []nsObject, deleted map[types.UID]bool) []nsObject {
	ours := map[types.UID]bool{}
	for uid := range deleted {
		ours[uid] = true
	}
	services := map[string]bool{}
	for _, o := range objs {
		if o.work != "" {
			ours[o.uid] = true
			if o.kind == "Service" {
				services[o.name] = true
			}
		}
	}
	present := map[types.UID]bool{}
	for _, o := range objs {
		present[o.uid] = true
	}
	// collected: every owner is ours, or namespaced and gone.
	collected := func(o nsObject) bool {
		return len(o.owners) > 0 && !slices.ContainsFunc(o.owners, func(w nsOwner) bool {
			return !ours[w.uid] && (!w.namespaced || present[w.uid])
		})
	}
	// Owners before dependents is not guaranteed: repeat until nothing changes
	// (each round adds one level of ownership).
	for changed := true; changed; {
		changed = false
		for _, o := range objs {
			if ours[o.uid] {
				continue
			}
			if slices.ContainsFunc(o.owners, func(w nsOwner) bool { return ours[w.uid] }) || collected(o) {
				ours[o.uid] = true
				changed = true
			}
		}
	}
	var out []nsObject
	for _, o := range objs {
		switch {
		case ours[o.uid], o.deleting:
		case o.kind == "ServiceAccount" && o.name == "default":
		case o.kind == "ConfigMap" && o.name == "kube-root-ca.crt":
		case o.kind == "RoleBinding.rbac.authorization.k8s.io" && o.name == GrantRoleBindingName && o.managedBy == managedByAgent:
		case o.kind == "Endpoints" && services[o.name]:
		default:
			out = append(out, o)
		}
	}
	return out
}

// appliedByOthers returns the objects of a namespace, not being deleted, that
// carry the annotation of a Work other than workName, in the order given. The
// other Work's record does not list the Namespace (it would be handed over to
// that Work then), but deleting it would delete what that Work applies.
func appliedByOthers(objs []nsObject, workName string) []nsObject {
	var out []nsObject
	for _, o := range objs {
		if o.work != "" && o.work != workName && !o.deleting {
			out = append(out, o)
		}
	}
	return out
}

// namespaceVerdict returns why the Namespace ns, which Work workName lets go of,
// must not be deleted, from the objects in it and the resources that could not be
// checked; "" if it may be deleted. deleted holds the UIDs of the objects the
// current removal deleted.
func namespaceVerdict(ns, workName string, objs []nsObject, deleted map[types.UID]bool, unchecked []string) string {
	if foreign := foreignObjects(objs, deleted); len(foreign) > 0 {
		return fmt.Sprintf("namespace %s holds %s no placement applied: %s", ns, plural(len(foreign), "object"), nameSome(foreign))
	}
	if others := appliedByOthers(objs, workName); len(others) > 0 {
		return fmt.Sprintf("namespace %s holds %s other placements apply: %s", ns, plural(len(others), "object"), nameSome(others))
	}
	if len(unchecked) > 0 {
		return fmt.Sprintf("the agent could not check every object in namespace %s: %s", ns, strings.Join(unchecked, ", "))
	}
	return ""
}

// namespaceInUse returns why the Namespace ns, which Work workName lets go of, must
// not be deleted (namespaceVerdict); "" if it may be deleted. deleted holds the UIDs
// of the objects the current removal deleted. The error is for a namespace that
// could not be checked at all (discovery failed).
func (a *Applier) namespaceInUse(ctx context.Context, ns, workName string, deleted map[types.UID]bool) (string, error) {
	lists, err := discovery.ServerPreferredNamespacedResources(a.discovery)
	var unchecked []string
	if err != nil {
		var failed *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &failed) {
			return "", fmt.Errorf("failed to discover the resources in namespace %s: %w", ns, err)
		}
		for gv := range failed.Groups {
			if !slices.Contains(skippedGroups, gv.Group) {
				unchecked = append(unchecked, gv.String())
			}
		}
	}
	var objs []nsObject
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil || slices.Contains(skippedGroups, gv.Group) {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") ||
				slices.Contains(skippedResources, schema.GroupResource{Group: gv.Group, Resource: r.Name}) {
				continue
			}
			gvr := gv.WithResource(r.Name)
			kind := kindString(schema.GroupKind{Group: gv.Group, Kind: r.Kind})
			found, err := a.metadata.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{Limit: maxNamespaceScan})
			switch {
			case apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err):
				continue
			case err != nil:
				unchecked = append(unchecked, fmt.Sprintf("%s (%s)", gvr.GroupResource(), apiMessage(err)))
				continue
			case found.Continue != "":
				unchecked = append(unchecked, fmt.Sprintf("%s (more than %d)", gvr.GroupResource(), maxNamespaceScan))
			}
			for _, item := range found.Items {
				o := nsObject{
					kind:      kind,
					name:      item.Name,
					uid:       item.UID,
					work:      item.Annotations[AnnotationWork],
					deleting:  item.DeletionTimestamp != nil,
					managedBy: item.Labels[labelManagedBy],
				}
				for _, ref := range item.OwnerReferences {
					o.owners = append(o.owners, nsOwner{uid: ref.UID, namespaced: a.namespacedKind(ctx, ref.APIVersion, ref.Kind)})
				}
				objs = append(objs, o)
			}
		}
	}
	slices.Sort(unchecked)
	return namespaceVerdict(ns, workName, objs, deleted, unchecked), nil
}

// nameSome names the first maxNamedForeign objects and counts the rest.
func nameSome(objs []nsObject) string {
	names := make([]string, 0, maxNamedForeign+1)
	for i, o := range objs {
		if i == maxNamedForeign {
			names = append(names, fmt.Sprintf("and %d more", len(objs)-i))
			break
		}
		names = append(names, o.String())
	}
	return strings.Join(names, ", ")
}

// namespacedKind reports whether the kind of an owner reference is namespaced;
// false when the agent cannot tell (the owner then counts as present).
func (a *Applier) namespacedKind(ctx context.Context, apiVersion, kind string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false
	}
	m, err := a.mapper.RESTMappingWithContext(ctx, schema.GroupKind{Group: gv.Group, Kind: kind}, gv.Version)
	return err == nil && m.Scope.Name() == meta.RESTScopeNameNamespace
}

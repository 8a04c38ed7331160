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

// Package upsync mirrors objects born on member clusters to the hub (kcp's upsync):
// the Handler takes the agents' Upsync messages, and the Reconciler removes the
// mirrors of a Work's member when the Work goes (its placement left the cluster, or
// the cluster left the fleet).
//
// A mirror has the member object's namespace and name and carries the label
// placement.flotilla.io/upsynced-from: <cluster>. The hub accepts only objects the
// Work's upsync selectors select (kind and labels) in the namespaces the Work
// places, and never changes an object that is not a mirror from the same cluster:
// the same object on a second cluster, or one the hub holds itself, is a conflict,
// reported on the binding's Upsynced condition and left alone.
package upsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// FieldManager is the field manager of mirrors and of the Upsynced condition.
const FieldManager = pipeline.ManagerUpsync

// Handler applies agents' Upsync messages to the hub. It is safe for concurrent use.
type Handler struct {
	// Client reads Works and bindings and writes binding status, uncached.
	Client client.Client
	// Dynamic reads and writes mirrors.
	Dynamic dynamic.Interface
	// Mapper maps kinds to resources.
	Mapper meta.RESTMapper
	// Log is where refusals and conflicts are logged.
	Log logr.Logger

	mu sync.Mutex
	// states holds, per member namespace and Work, what the Upsynced condition
	// says.
	states map[types.NamespacedName]*state
}

// state is what the Handler knows of the mirrors of one Work.
type state struct {
	// mirrored are the objects mirrored, by key.
	mirrored map[string]bool
	// conflicts are the objects not mirrored because the hub's object is not this
	// cluster's mirror, by key, with why.
	conflicts map[string]string
	// refused are objects the hub refused, by key, with why.
	refused map[string]string
	// problems are the agent's, from its last complete message.
	problems []string
	// written is the condition last written.
	written string
}

// Handle applies one Upsync message from the agent of cluster.
func (h *Handler) Handle(ctx context.Context, cluster string, m tunnel.Upsync) error {
	work := &placementv1beta1.Work{}
	key := types.NamespacedName{Namespace: clusterv1beta1.MemberNamespace(cluster), Name: m.WorkName}
	if err := h.Client.Get(ctx, key, work); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !work.DeletionTimestamp.IsZero() {
		return nil
	}
	st := h.state(key)
	var err error
	switch {
	case len(m.Object) > 0:
		err = h.upsert(ctx, cluster, work, m.Object, st)
	case m.Deleted != nil:
		err = h.remove(ctx, cluster, work, *m.Deleted, st)
	case m.Complete:
		err = h.complete(ctx, cluster, work, m, st)
	}
	if err != nil {
		return err
	}
	return h.report(ctx, work, st)
}

func (h *Handler) state(key types.NamespacedName) *state {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.states == nil {
		h.states = map[types.NamespacedName]*state{}
	}
	st := h.states[key]
	if st == nil {
		st = &state{mirrored: map[string]bool{}, conflicts: map[string]string{}, refused: map[string]string{}}
		h.states[key] = st
	}
	return st
}

// Forget drops what the Handler knows of a Work, once it is gone.
func (h *Handler) Forget(key types.NamespacedName) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.states, key)
}

func (h *Handler) upsert(ctx context.Context, cluster string, work *placementv1beta1.Work, raw json.RawMessage, st *state) error {
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		h.note(st, st.refused, "?", fmt.Sprintf("an object that does not decode: %v", err))
		return nil
	}
	k := refKey(refOf(obj))
	if why := allowed(work, obj); why != "" {
		h.Log.Info("Refused an upsynced object", "cluster", cluster, "work", work.Name, "object", k, "why", why)
		h.note(st, st.refused, k, why)
		return nil
	}
	ri, err := h.resource(obj.GroupVersionKind(), obj.GetNamespace())
	if err != nil {
		h.note(st, st.refused, k, err.Error())
		return nil
	}
	existing, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	switch {
	case err == nil:
		if from := existing.GetLabels()[placementv1beta1.LabelUpsyncedFrom]; from != cluster {
			why := "it exists on the hub and is not a mirror (it is the hub's own)"
			if from != "" {
				why = "it is already mirrored from cluster " + from
			}
			h.note(st, st.conflicts, k, why)
			return nil
		}
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("failed to get %s on the hub: %w", k, err)
	}
	mirror := mirrorOf(obj, cluster, work.Name)
	if _, err := ri.Apply(ctx, mirror.GetName(), mirror, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) {
			h.note(st, st.refused, k, err.Error())
			return nil
		}
		return fmt.Errorf("failed to mirror %s to the hub: %w", k, err)
	}
	h.mu.Lock()
	st.mirrored[k] = true
	delete(st.conflicts, k)
	delete(st.refused, k)
	h.mu.Unlock()
	return nil
}

func (h *Handler) remove(ctx context.Context, cluster string, work *placementv1beta1.Work, ref tunnel.UpsyncRef, st *state) error {
	k := refKey(ref)
	h.mu.Lock()
	delete(st.mirrored, k)
	delete(st.conflicts, k)
	delete(st.refused, k)
	h.mu.Unlock()
	ri, err := h.resource(schema.GroupVersionKind{Group: ref.Group, Version: ref.Version, Kind: ref.Kind}, ref.Namespace)
	switch {
	case meta.IsNoMatchError(err) || errors.Is(err, errClusterScoped):
		return nil // nothing of that kind was mirrored
	case err != nil:
		return err // discovery failed: the mirror may exist, so try again
	}
	return deleteMirror(ctx, ri, ref.Name, cluster, work.Name)
}

// complete removes the mirrors of the Work from this cluster that the member no
// longer holds.
func (h *Handler) complete(ctx context.Context, cluster string, work *placementv1beta1.Work, m tunnel.Upsync, st *state) error {
	present := map[string]bool{}
	for _, r := range m.Present {
		present[refKey(r)] = true
	}
	h.mu.Lock()
	st.problems = append([]string(nil), m.Problems...)
	for k := range st.mirrored {
		if !present[k] {
			delete(st.mirrored, k)
		}
	}
	for _, set := range []map[string]string{st.conflicts, st.refused} {
		for k := range set {
			if !present[k] {
				delete(set, k)
			}
		}
	}
	h.mu.Unlock()
	mirrors, err := h.mirrors(ctx, cluster, work.Name, work.Spec.UpsyncSelectors)
	if err != nil {
		return err
	}
	for _, mo := range mirrors {
		if present[refKey(refOf(mo.obj))] {
			continue
		}
		if err := deleteMirror(ctx, mo.ri, mo.obj.GetName(), cluster, work.Name); err != nil {
			return err
		}
	}
	return nil
}

// mirror is a mirror on the hub with the resource to reach it.
type mirror struct {
	obj *unstructured.Unstructured
	ri  dynamic.ResourceInterface
}

// mirrors lists the mirrors from cluster for a Work, of the selectors' kinds.
func (h *Handler) mirrors(ctx context.Context, cluster, workName string, selectors []placementv1beta1.UpsyncSelector) ([]mirror, error) {
	var out []mirror
	seen := map[schema.GroupVersionKind]bool{}
	for _, s := range selectors {
		gvk := schema.GroupVersionKind{Group: s.Group, Version: s.Version, Kind: s.Kind}
		if seen[gvk] {
			continue
		}
		seen[gvk] = true
		mapping, err := h.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			continue // the hub does not serve the kind: nothing can be mirrored
		}
		selector := labels.SelectorFromSet(labels.Set{placementv1beta1.LabelUpsyncedFrom: cluster}).String()
		list, err := h.Dynamic.Resource(mapping.Resource).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return nil, fmt.Errorf("failed to list the mirrors of %s from %s: %w", gvk.Kind, cluster, err)
		}
		for i := range list.Items {
			o := &list.Items[i]
			if o.GetAnnotations()[placementv1beta1.AnnotationUpsyncedWork] != workName {
				continue
			}
			out = append(out, mirror{obj: o, ri: h.Dynamic.Resource(mapping.Resource).Namespace(o.GetNamespace())})
		}
	}
	return out, nil
}

// report writes the binding's Upsynced condition when it changed.
func (h *Handler) report(ctx context.Context, work *placementv1beta1.Work, st *state) error {
	binding := work.Labels[placementv1beta1.LabelParentBinding]
	if binding == "" {
		return nil
	}
	h.mu.Lock()
	status, reason, message := summary(st)
	sig := string(status) + reason + message
	if sig == st.written {
		h.mu.Unlock()
		return nil
	}
	h.mu.Unlock()
	b := &placementv1beta1.ClusterResourceBinding{}
	if err := h.Client.Get(ctx, types.NamespacedName{Name: binding}, b); err != nil {
		return client.IgnoreNotFound(err)
	}
	cond := metav1.Condition{Type: placementv1beta1.ConditionUpsynced, Status: status, Reason: reason, Message: message,
		ObservedGeneration: b.Generation, LastTransitionTime: metav1.Now()}
	for _, c := range b.Status.Conditions {
		if c.Type == cond.Type && c.Status == cond.Status {
			cond.LastTransitionTime = c.LastTransitionTime
		}
	}
	patch := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": placementv1beta1.GroupVersion.String(),
		"kind":       "ClusterResourceBinding",
		"metadata":   map[string]any{"name": binding},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": cond.Type, "status": string(cond.Status), "reason": cond.Reason, "message": cond.Message,
			"observedGeneration": cond.ObservedGeneration, "lastTransitionTime": cond.LastTransitionTime.UTC().Format("2006-01-02T15:04:05Z"),
		}}},
	}}
	if err := h.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(patch), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("failed to report the Upsynced condition of binding %s: %w", binding, err)
	}
	h.mu.Lock()
	st.written = sig
	h.mu.Unlock()
	return nil
}

// summary is the Upsynced condition of a state. The caller holds h.mu.
func summary(st *state) (metav1.ConditionStatus, string, string) {
	first := func(m map[string]string) string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return fmt.Sprintf("%s: %s", keys[0], m[keys[0]])
	}
	switch {
	case len(st.problems) > 0:
		return metav1.ConditionFalse, placementv1beta1.ReasonUpsyncNotServed, strings.Join(st.problems, "; ")
	case len(st.conflicts) > 0:
		return metav1.ConditionFalse, placementv1beta1.ReasonUpsyncConflict,
			fmt.Sprintf("%d object(s) not mirrored, not merged; the first is %s", len(st.conflicts), first(st.conflicts))
	case len(st.refused) > 0:
		return metav1.ConditionFalse, placementv1beta1.ReasonUpsyncRefused,
			fmt.Sprintf("%d object(s) refused; the first is %s", len(st.refused), first(st.refused))
	default:
		return metav1.ConditionTrue, placementv1beta1.ReasonUpsynced, fmt.Sprintf("%d object(s) mirrored to the hub", len(st.mirrored))
	}
}

func (h *Handler) note(st *state, set map[string]string, k, why string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	set[k] = why
	delete(st.mirrored, k)
}

// allowed returns why the hub refuses an object from a Work, or "" if it accepts it:
// its kind and labels must match an upsync selector of the Work, and its namespace
// be one the Work places.
func allowed(work *placementv1beta1.Work, obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	if obj.GetNamespace() == "" || !slices.Contains(work.PlacedNamespaces(), obj.GetNamespace()) {
		return fmt.Sprintf("namespace %q is not one the Work places", obj.GetNamespace())
	}
	for _, s := range work.Spec.UpsyncSelectors {
		if s.Group != gvk.Group || s.Version != gvk.Version || s.Kind != gvk.Kind {
			continue
		}
		sel := labels.Everything()
		if s.LabelSelector != nil {
			var err error
			if sel, err = metav1.LabelSelectorAsSelector(s.LabelSelector); err != nil {
				return fmt.Sprintf("the upsync selector of %s is invalid: %v", gvk.Kind, err)
			}
		}
		if sel.Matches(labels.Set(obj.GetLabels())) {
			return ""
		}
	}
	return "no upsync selector of the Work selects it"
}

// mirrorOf returns the mirror of a member object: its content without what the
// member's API server sets or owns, labelled with its cluster and annotated with
// its Work.
func mirrorOf(obj *unstructured.Unstructured, cluster, workName string) *unstructured.Unstructured {
	m := obj.DeepCopy()
	delete(m.Object, "status")
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation",
		"selfLink", "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences", "finalizers", "generateName"} {
		unstructured.RemoveNestedField(m.Object, "metadata", f)
	}
	lbl := m.GetLabels()
	if lbl == nil {
		lbl = map[string]string{}
	}
	lbl[placementv1beta1.LabelUpsyncedFrom] = cluster
	m.SetLabels(lbl)
	ann := m.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[placementv1beta1.AnnotationUpsyncedWork] = workName
	m.SetAnnotations(ann)
	return m
}

func refOf(obj *unstructured.Unstructured) tunnel.UpsyncRef {
	gvk := obj.GroupVersionKind()
	return tunnel.UpsyncRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// refKey names an object in messages: "ConfigMap app/born".
func refKey(r tunnel.UpsyncRef) string {
	kind := r.Kind
	if r.Group != "" {
		kind += "." + r.Group
	}
	return kind + " " + r.Namespace + "/" + r.Name
}

// resource returns the hub resource of a namespaced kind, in a namespace.
// errClusterScoped is the refusal of a cluster-scoped kind.
var errClusterScoped = errors.New("is cluster-scoped; only namespaced kinds are upsynced")

func (h *Handler) resource(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, error) {
	mapping, err := h.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("the hub does not serve %s: %w", gvk.Kind, err)
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return nil, fmt.Errorf("%s %w", gvk.Kind, errClusterScoped)
	}
	return h.Dynamic.Resource(mapping.Resource).Namespace(namespace), nil
}

// deleteMirror deletes a mirror, only if it is still the one from cluster for the
// Work.
func deleteMirror(ctx context.Context, ri dynamic.ResourceInterface, name, cluster, workName string) error {
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to get the mirror %s: %w", name, err)
	}
	if obj.GetLabels()[placementv1beta1.LabelUpsyncedFrom] != cluster || obj.GetAnnotations()[placementv1beta1.AnnotationUpsyncedWork] != workName {
		return nil
	}
	uid := obj.GetUID()
	err = ri.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("failed to delete the mirror %s: %w", name, err)
	}
	return nil
}

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

// Package upsync is the agent's side of upsync (kcp): for every Work with upsync
// selectors it watches the objects those selectors match in the namespaces the Work
// places, skipping what the agent applied itself, and sends them to the hub as
// tunnel.Upsync messages: every change and removal as it happens, and everything
// followed by a complete message whenever its watches start and after every
// reconnect.
package upsync

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/agent/apply"
	"github.com/flotilla-io/flotilla/agent/informer"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// Sender sends a message to the hub; it fails when there is no session (the next
// session's Resync sends everything again).
type Sender func(tunnel.Upsync) error

// Syncer upsyncs the objects of the Works it is given. It is safe for concurrent
// use.
type Syncer struct {
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
	send    Sender
	log     logr.Logger

	mu    sync.Mutex
	works map[string]*workWatch
}

// workWatch is the watches of one Work.
type workWatch struct {
	// key identifies the selectors and namespaces watched; a Work whose key did
	// not change keeps its watches.
	key string
	// informers are the watches, one per selector and namespace.
	informers []cache.SharedIndexInformer
	// problems are the selectors that cannot be watched, and why.
	problems []string
	stop     chan struct{}
}

// New returns a Syncer that resolves kinds with mapper and sends with send.
func New(dyn dynamic.Interface, mapper meta.RESTMapper, send Sender, log logr.Logger) *Syncer {
	return &Syncer{dynamic: dyn, mapper: mapper, send: send, log: log, works: map[string]*workWatch{}}
}

// Set starts (or changes) the watches of a Work after it was applied: nothing
// happens if its selectors and placed namespaces did not change; a Work without
// selectors has none.
func (s *Syncer) Set(work *placementv1beta1.Work) {
	namespaces := work.PlacedNamespaces()
	key := watchKey(work.Spec.UpsyncSelectors, namespaces)
	s.mu.Lock()
	old := s.works[work.Name]
	if old != nil && old.key == key {
		s.mu.Unlock()
		return
	}
	delete(s.works, work.Name)
	s.mu.Unlock()
	if old != nil {
		close(old.stop)
	}
	if len(work.Spec.UpsyncSelectors) == 0 {
		return
	}
	w := &workWatch{key: key, stop: make(chan struct{})}
	for _, sel := range work.Spec.UpsyncSelectors {
		s.watch(work.Name, w, sel, namespaces)
	}
	s.mu.Lock()
	s.works[work.Name] = w
	s.mu.Unlock()
	s.log.Info("Upsyncing", "work", work.Name, "selectors", len(work.Spec.UpsyncSelectors), "namespaces", namespaces, "problems", w.problems)
	go func() {
		if cache.WaitForCacheSync(w.stop, syncedFuncs(w.informers)...) {
			s.sendAll(work.Name, w)
		}
	}()
}

// watch starts the informers of one selector, or records why it cannot.
func (s *Syncer) watch(workName string, w *workWatch, sel placementv1beta1.UpsyncSelector, namespaces []string) {
	gvk := schema.GroupVersionKind{Group: sel.Group, Version: sel.Version, Kind: sel.Kind}
	name := kindName(gvk)
	mapping, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		w.problems = append(w.problems, fmt.Sprintf("upsync selector %s: the member cluster does not serve it (%v)", name, err))
		return
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		w.problems = append(w.problems, fmt.Sprintf("upsync selector %s: the kind is cluster-scoped; only namespaced kinds are upsynced", name))
		return
	}
	selector := ""
	if sel.LabelSelector != nil {
		ls, err := metav1.LabelSelectorAsSelector(sel.LabelSelector)
		if err != nil {
			w.problems = append(w.problems, fmt.Sprintf("upsync selector %s: invalid labelSelector: %v", name, err))
			return
		}
		selector = ls.String()
	}
	for _, ns := range namespaces {
		inf := informer.Dynamic(s.dynamic, mapping.Resource, ns, selector)
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { s.upsert(workName, obj) },
			UpdateFunc: func(_, obj any) { s.upsert(workName, obj) },
			DeleteFunc: func(obj any) { s.deleted(workName, obj) },
		})
		w.informers = append(w.informers, inf)
		go inf.Run(w.stop)
	}
}

// Remove stops the watches of a Work that was removed. The hub removes its
// mirrors itself.
func (s *Syncer) Remove(workName string) {
	s.mu.Lock()
	w := s.works[workName]
	delete(s.works, workName)
	s.mu.Unlock()
	if w != nil {
		close(w.stop)
	}
}

// Resync sends every watched object again, each Work's followed by a complete
// message, for a new session.
func (s *Syncer) Resync() {
	s.mu.Lock()
	works := make(map[string]*workWatch, len(s.works))
	for name, w := range s.works {
		works[name] = w
	}
	s.mu.Unlock()
	for name, w := range works {
		if synced(w.informers) {
			s.sendAll(name, w)
		}
	}
}

// Close stops every watch.
func (s *Syncer) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, w := range s.works {
		close(w.stop)
		delete(s.works, name)
	}
}

// sendAll sends every object a Work's watches hold, then the complete message.
func (s *Syncer) sendAll(workName string, w *workWatch) {
	var present []tunnel.UpsyncRef
	for _, inf := range w.informers {
		for _, item := range inf.GetStore().List() {
			u, ok := item.(*unstructured.Unstructured)
			if !ok || applied(u) {
				continue
			}
			if !s.upsert(workName, u) {
				return
			}
			present = append(present, refOf(u))
		}
	}
	sort.Slice(present, func(i, j int) bool { return refString(present[i]) < refString(present[j]) })
	if err := s.send(tunnel.Upsync{WorkName: workName, Complete: true, Present: present, Problems: w.problems}); err != nil {
		s.log.V(1).Info("Failed to send the complete upsync; the next session sends it", "work", workName, "err", err.Error())
	}
}

// upsert sends an object born on the member; it returns false if it could not.
func (s *Syncer) upsert(workName string, obj any) bool {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || applied(u) {
		return true
	}
	c := u.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	raw, err := json.Marshal(c.Object)
	if err != nil {
		return true
	}
	if err := s.send(tunnel.Upsync{WorkName: workName, Object: raw}); err != nil {
		s.log.V(1).Info("Failed to upsync an object; the next session sends it", "work", workName, "object", refString(refOf(u)), "err", err.Error())
		return false
	}
	return true
}

func (s *Syncer) deleted(workName string, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || applied(u) {
		return
	}
	ref := refOf(u)
	if err := s.send(tunnel.Upsync{WorkName: workName, Deleted: &ref}); err != nil {
		s.log.V(1).Info("Failed to upsync a removal; the next session's complete message carries it", "work", workName, "err", err.Error())
	}
}

// applied reports whether the agent applied an object (it is the hub's, not born
// on the member).
func applied(u *unstructured.Unstructured) bool {
	return u.GetLabels()[apply.LabelAppliedBy] == apply.AppliedByAgent
}

func watchKey(selectors []placementv1beta1.UpsyncSelector, namespaces []string) string {
	raw, _ := json.Marshal(struct {
		S []placementv1beta1.UpsyncSelector
		N []string
	}{selectors, namespaces})
	return string(raw)
}

func refOf(u *unstructured.Unstructured) tunnel.UpsyncRef {
	gvk := u.GroupVersionKind()
	return tunnel.UpsyncRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

func refString(r tunnel.UpsyncRef) string {
	return strings.Join([]string{r.Group, r.Kind, r.Namespace, r.Name}, "/")
}

func kindName(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Version + " " + gvk.Kind
	}
	return gvk.Group + "/" + gvk.Version + " " + gvk.Kind
}

func synced(informers []cache.SharedIndexInformer) bool {
	for _, inf := range informers {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

func syncedFuncs(informers []cache.SharedIndexInformer) []cache.InformerSynced {
	out := make([]cache.InformerSynced, 0, len(informers))
	for _, inf := range informers {
		out = append(out, inf.HasSynced)
	}
	return out
}

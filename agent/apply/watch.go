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
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/agent/informer"
)

// watcher keeps one informer per resource the Applier applied objects of, selecting
// only objects carrying LabelAppliedBy, and calls onChange with the Work of every
// object that is added, changed or deleted. Its caches answer the Applier's reads of
// applied objects, so an idle agent neither polls nor lists.
type watcher struct {
	dynamic  dynamic.Interface
	onChange func(workName string)
	// perNamespace watches namespaced resources namespace by namespace, for an
	// agent that may not list them cluster-wide (least-privilege profile).
	perNamespace bool
	stop         chan struct{}

	mu        sync.Mutex
	informers map[watchKey]cache.SharedIndexInformer
	// blockers holds, per Work, a watch on each object that keeps one of its
	// manifests from being applied (see watchBlockers).
	blockers map[string]map[objectRef]chan struct{}
	// listers holds, per applied object, the Works whose last apply applied it
	// (see setApplied): when the object is deleted, each of them is told, not
	// only the Work its annotation names.
	listers map[objectRef]map[string]bool
	// appliedBy is the inverse of listers, per Work.
	appliedBy map[string][]objectRef
	closed    bool
}

// objectRef names one object of a resource.
type objectRef struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

// watchKey is what one informer watches: a resource, in one namespace or in all
// ("").
type watchKey struct {
	gvr       schema.GroupVersionResource
	namespace string
}

func newWatcher(dyn dynamic.Interface, onChange func(string), perNamespace bool) *watcher {
	return &watcher{
		dynamic:      dyn,
		onChange:     onChange,
		perNamespace: perNamespace,
		stop:         make(chan struct{}),
		informers:    map[watchKey]cache.SharedIndexInformer{},
		blockers:     map[string]map[objectRef]chan struct{}{},
		listers:      map[objectRef]map[string]bool{},
		appliedBy:    map[string][]objectRef{},
	}
}

// setApplied records the objects a Work's last apply applied (none when the Work
// is removed), for deletions to reach every Work that applied the object.
func (w *watcher) setApplied(work string, refs []objectRef) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ref := range w.appliedBy[work] {
		delete(w.listers[ref], work)
		if len(w.listers[ref]) == 0 {
			delete(w.listers, ref)
		}
	}
	delete(w.appliedBy, work)
	if len(refs) == 0 {
		return
	}
	w.appliedBy[work] = refs
	for _, ref := range refs {
		if w.listers[ref] == nil {
			w.listers[ref] = map[string]bool{}
		}
		w.listers[ref][work] = true
	}
}

// keyOf returns the informer that watches an object of gvr in namespace ("" for
// cluster-scoped objects).
func (w *watcher) keyOf(gvr schema.GroupVersionResource, namespace string) watchKey {
	if !w.perNamespace {
		namespace = metav1.NamespaceAll
	}
	return watchKey{gvr: gvr, namespace: namespace}
}

// appliedSelector selects the objects the Applier applied.
var appliedSelector = labels.SelectorFromSet(labels.Set{LabelAppliedBy: AppliedByAgent}).String()

// ensure starts the informer for objects of a resource in a namespace unless it
// runs already.
func (w *watcher) ensure(gvr schema.GroupVersionResource, namespace string) {
	key := w.keyOf(gvr, namespace)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.informers[key] != nil {
		return
	}
	inf := informer.Dynamic(w.dynamic, gvr, key.namespace, appliedSelector)
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    w.notify,
		UpdateFunc: func(_, obj any) { w.notify(obj) },
		DeleteFunc: func(obj any) { w.notifyDeleted(gvr, obj) },
	})
	w.informers[key] = inf
	go inf.Run(w.stop)
}

func (w *watcher) notify(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if work := u.GetAnnotations()[AnnotationWork]; work != "" {
		w.onChange(work)
	}
}

// notifyDeleted tells the Work an object's annotation names, and every other Work
// whose last apply applied it (two placements that share it), that it is gone: a
// Work must not go on reporting an object Applied and Available that is not there.
// Only deletions reach the other Works: an update by one of them must not wake the
// other, whose apply would wake the first again.
func (w *watcher) notifyDeleted(gvr schema.GroupVersionResource, obj any) {
	w.notify(obj)
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	annotated := u.GetAnnotations()[AnnotationWork]
	ref := objectRef{gvr: gvr, namespace: u.GetNamespace(), name: u.GetName()}
	w.mu.Lock()
	var others []string
	for work := range w.listers[ref] {
		if work != annotated {
			others = append(others, work)
		}
	}
	w.mu.Unlock()
	for _, work := range others {
		w.onChange(work)
	}
}

// get returns the cached object, if the informer of its resource has synced. found
// is false when the cache cannot answer (the caller then asks the API server).
func (w *watcher) get(gvr schema.GroupVersionResource, namespace, name string) (obj *unstructured.Unstructured, found bool) {
	w.mu.Lock()
	inf := w.informers[w.keyOf(gvr, namespace)]
	w.mu.Unlock()
	if inf == nil || !inf.HasSynced() {
		return nil, false
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	item, exists, err := inf.GetStore().GetByKey(key)
	if err != nil {
		return nil, false
	}
	if !exists {
		return nil, true
	}
	u, ok := item.(*unstructured.Unstructured)
	if !ok {
		return nil, false
	}
	return u.DeepCopy(), true
}

// resources returns how many informers run.
func (w *watcher) resources() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.informers)
}

// blocker is an object that keeps a manifest of a Work from being applied, with the
// resourceVersion the apply saw ("" if unknown).
type blocker struct {
	ref             objectRef
	resourceVersion string
}

// watchBlockers sets the objects that keep manifests of a Work from being applied
// (objects that are not the Work's and that whenToTakeOver refuses to take over):
// each is watched by name, without the applied-by label the other informers select
// on, and its change or deletion calls onChange with the Work, so that the Work is
// applied again at once rather than at its next retry. Watches of objects no longer
// in blockers stop; an empty blockers stops all of the Work's.
func (w *watcher) watchBlockers(work string, blockers []blocker) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	have := w.blockers[work]
	want := make(map[objectRef]bool, len(blockers))
	for _, b := range blockers {
		want[b.ref] = true
		if _, ok := have[b.ref]; ok {
			continue
		}
		if have == nil {
			have = map[objectRef]chan struct{}{}
			w.blockers[work] = have
		}
		have[b.ref] = w.startBlockerWatch(work, b)
	}
	for ref, stop := range have {
		if !want[ref] {
			close(stop)
			delete(have, ref)
		}
	}
	if len(have) == 0 {
		delete(w.blockers, work)
	}
}

// startBlockerWatch runs an informer on one object and returns its stop channel.
// The watch starts after the apply that saw the object, so what happened in between
// counts too: an initial list that holds the object at another resourceVersion, or
// does not hold it at all, is a change; the object as the apply saw it is not.
func (w *watcher) startBlockerWatch(work string, b blocker) chan struct{} {
	inf := informer.Object(w.dynamic, b.ref.gvr, b.ref.namespace, b.ref.name)
	changed := func(any) { w.onChange(work) }
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			o, ok := obj.(metav1.Object)
			seen := ok && b.resourceVersion != "" && o.GetResourceVersion() == b.resourceVersion
			if !seen && (b.resourceVersion != "" || inf.HasSynced()) {
				changed(obj)
			}
		},
		UpdateFunc: func(_, obj any) { changed(obj) },
		DeleteFunc: changed,
	})
	stop := make(chan struct{})
	go inf.Run(stop)
	go func() {
		if cache.WaitForCacheSync(stop, inf.HasSynced) && len(inf.GetStore().ListKeys()) == 0 {
			changed(nil) // gone before the watch began
		}
	}()
	return stop
}

// blockerWatches returns how many objects are watched as blockers.
func (w *watcher) blockerWatches() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, refs := range w.blockers {
		n += len(refs)
	}
	return n
}

// close stops every informer.
func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.stop)
		for _, refs := range w.blockers {
			for _, stop := range refs {
				close(stop)
			}
		}
		w.blockers = nil
	}
}

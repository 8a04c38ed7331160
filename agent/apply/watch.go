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
	closed    bool
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
		DeleteFunc: w.notify,
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

// close stops every informer.
func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.stop)
	}
}

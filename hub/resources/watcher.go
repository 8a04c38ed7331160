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

package resources

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Change names an object that was added, updated or deleted on the hub.
type Change struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
}

// Options configures a Watcher.
type Options struct {
	// RediscoveryInterval is how often new kinds are looked for regardless of
	// CRDs (an aggregated API that comes up, a CRD whose serving lagged its
	// Established condition). Default: 30s. A CRD that becomes Established is
	// looked for at once (and every second, up to crdRetries times, until
	// discovery serves it).
	RediscoveryInterval time.Duration
	// SyncTimeout bounds the wait for a kind's cache to fill. Default: 10s.
	SyncTimeout time.Duration
}

// Watcher caches every selectable kind on the hub. It is a manager Runnable.
type Watcher struct {
	opts      Options
	discovery discovery.DiscoveryInterface
	factory   dynamicinformer.DynamicSharedInformerFactory
	log       logr.Logger

	mu        sync.RWMutex
	kinds     map[schema.GroupVersionKind]apiResource
	informers map[schema.GroupVersionResource]informers.GenericInformer
	handlers  []func(Change)
	ctx       context.Context
	// started is closed once Start has discovered the kinds and started their
	// informers; selection waits for it.
	started chan struct{}
	// newCRDs holds the kinds of Established CRDs that discovery has not served
	// yet (in any version: discovery serves a group's preferred one); crdEstablished
	// wakes Start to look for them.
	newCRDs        map[schema.GroupKind]bool
	crdEstablished chan struct{}
}

var crdKind = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

const (
	// crdRetry is how soon discovery is asked again for an Established CRD's kinds
	// it did not serve yet, crdRetries how many times before the periodic
	// rediscovery takes over.
	crdRetry   = time.Second
	crdRetries = 10
)

type apiResource struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

// NewWatcher creates a Watcher for the cluster behind cfg.
func NewWatcher(cfg *rest.Config, log logr.Logger, opts Options) (*Watcher, error) {
	if opts.RediscoveryInterval == 0 {
		opts.RediscoveryInterval = 30 * time.Second
	}
	if opts.SyncTimeout == 0 {
		opts.SyncTimeout = 10 * time.Second
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a dynamic client: %w", err)
	}
	return &Watcher{
		opts:      opts,
		discovery: dc,
		factory:   dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0),
		log:       log,
		kinds:     map[schema.GroupVersionKind]apiResource{},
		informers: map[schema.GroupVersionResource]informers.GenericInformer{},
		started:   make(chan struct{}),

		newCRDs:        map[schema.GroupKind]bool{},
		crdEstablished: make(chan struct{}, 1),
	}, nil
}

// OnChange registers a handler called for every change of a watched object.
// Register handlers before Start.
func (w *Watcher) OnChange(h func(Change)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.handlers = append(w.handlers, h)
}

// NeedLeaderElection: only the leader runs placements, so only it watches.
func (w *Watcher) NeedLeaderElection() bool { return true }

// Start discovers kinds, starts their informers and rediscovers periodically.
func (w *Watcher) Start(ctx context.Context) error {
	w.mu.Lock()
	w.ctx = ctx
	w.mu.Unlock()
	if err := w.discover(); err != nil {
		// Partial discovery (an aggregated API down) must not stop the hub.
		w.log.Error(err, "resource discovery was incomplete")
	}
	close(w.started)
	ticker := time.NewTicker(w.opts.RediscoveryInterval)
	defer ticker.Stop()
	retry := time.NewTimer(crdRetry)
	retry.Stop()
	retries := 0
	for {
		select {
		case <-ctx.Done():
			w.factory.Shutdown()
			return nil
		case <-ticker.C:
		case <-w.crdEstablished:
			retries = 0
		case <-retry.C:
			retries++
		}
		if err := w.discover(); err != nil {
			w.log.V(1).Info("resource rediscovery was incomplete", "error", err.Error())
		}
		if w.waitingForCRDs() {
			if retries < crdRetries {
				retry.Reset(crdRetry)
			} else {
				w.giveUpOnCRDs()
			}
		}
	}
}

// crdChanged notes the kinds of a CRD that is Established and not watched yet,
// and wakes Start to discover them.
func (w *Watcher) crdChanged(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !isEstablished(u) {
		return
	}
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(u.Object, "spec", "names", "plural")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
	if !selectable(schema.GroupResource{Group: group, Resource: plural}) {
		return
	}
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	gk := schema.GroupKind{Group: group, Kind: kind}
	w.mu.Lock()
	known, served := w.newCRDs[gk], false
	for _, v := range versions {
		version, _ := v.(map[string]any)
		name, _ := version["name"].(string)
		if s, _ := version["served"].(bool); s {
			served = true
		}
		if _, ok := w.kinds[gk.WithVersion(name)]; ok {
			known = true
		}
	}
	known = known || !served // a CRD that serves no version has nothing to find
	if !known {
		w.newCRDs[gk] = true
	}
	w.mu.Unlock()
	if !known {
		select {
		case w.crdEstablished <- struct{}{}:
		default:
		}
	}
}

// waitingForCRDs reports whether an Established CRD's kind is not discovered yet.
func (w *Watcher) waitingForCRDs() bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return len(w.newCRDs) > 0
}

// giveUpOnCRDs forgets the Established CRDs' kinds discovery did not serve within
// crdRetries tries (listed without list and watch, say): the periodic rediscovery
// still looks for every kind.
func (w *Watcher) giveUpOnCRDs() {
	w.mu.Lock()
	defer w.mu.Unlock()
	kinds := make([]string, 0, len(w.newCRDs))
	for gk := range w.newCRDs {
		kinds = append(kinds, gk.String())
	}
	w.log.Info("discovery does not serve the kinds of Established CRDs as selectable; looking again every rediscovery interval",
		"kinds", kinds, "interval", w.opts.RediscoveryInterval.String())
	w.newCRDs = map[schema.GroupKind]bool{}
}

func isEstablished(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		cond, _ := c.(map[string]any)
		if cond["type"] == "Established" && cond["status"] == "True" {
			return true
		}
	}
	return false
}

// discover finds every listable, watchable kind in its preferred version and
// starts an informer for each new one.
func (w *Watcher) discover() error {
	lists, discErr := w.discovery.ServerPreferredResources()
	w.mu.Lock()
	defer w.mu.Unlock()
	added := 0
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerbs(r, "list", "watch") {
				continue
			}
			if !selectable(schema.GroupResource{Group: gv.Group, Resource: r.Name}) {
				continue
			}
			gvk := gv.WithKind(r.Kind)
			gvr := gv.WithResource(r.Name)
			w.kinds[gvk] = apiResource{gvr: gvr, namespaced: r.Namespaced}
			delete(w.newCRDs, gvk.GroupKind())
			if _, ok := w.informers[gvr]; ok {
				continue
			}
			inf := w.factory.ForResource(gvr)
			// The cache keeps only what selection reads (cacheTransform).
			_ = inf.Informer().SetTransform(cacheTransform)
			onChange := func(obj any) { w.notify(gvk, obj) }
			if gvk == crdKind {
				onChange = func(obj any) {
					w.crdChanged(obj)
					w.notify(gvk, obj)
				}
			}
			_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    onChange,
				UpdateFunc: func(_, obj any) { onChange(obj) },
				DeleteFunc: onChange,
			})
			w.informers[gvr] = inf
			added++
		}
	}
	if added > 0 && w.ctx != nil {
		w.factory.Start(w.ctx.Done())
		w.log.V(1).Info("watching new kinds", "count", added)
	}
	return discErr
}

// cacheTransform is the informers' transform: it drops what selection never
// reads before an object is cached. That is every object's managedFields
// (sanitize drops them), and all but the identity of what is in a reserved
// namespace or is one (ReservedNamespace: the Namespace and bootstrap token
// Secret of every member, and in a real cluster each member namespace's
// kube-root-ca.crt and default ServiceAccount), which is never selected:
// those objects are kept only to be skipped (SkipObject), and a reserved
// Namespace to be reported by ReservedMatches, by its labels.
func cacheTransform(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	if reservedObject(u) {
		return identityOf(u), nil
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	return u, nil
}

// reservedObject reports whether u is a reserved Namespace or in one.
func reservedObject(u *unstructured.Unstructured) bool {
	if ns := u.GetNamespace(); ns != "" {
		return ReservedNamespace(ns) != ""
	}
	return u.GetKind() == "Namespace" && u.GetAPIVersion() == "v1" && ReservedNamespace(u.GetName()) != ""
}

// identityOf returns u reduced to its kind, name, namespace, labels, UID,
// resourceVersion and deletion timestamp.
func identityOf(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(u.GetAPIVersion())
	out.SetKind(u.GetKind())
	out.SetName(u.GetName())
	out.SetNamespace(u.GetNamespace())
	out.SetUID(u.GetUID())
	out.SetResourceVersion(u.GetResourceVersion())
	if l := u.GetLabels(); len(l) > 0 {
		out.SetLabels(l)
	}
	if t := u.GetDeletionTimestamp(); t != nil {
		out.SetDeletionTimestamp(t)
	}
	return out
}

func hasVerbs(r metav1.APIResource, verbs ...string) bool {
	have := map[string]bool{}
	for _, v := range r.Verbs {
		have[v] = true
	}
	for _, v := range verbs {
		if !have[v] {
			return false
		}
	}
	return true
}

func (w *Watcher) notify(gvk schema.GroupVersionKind, obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	c := Change{GVK: gvk, Namespace: u.GetNamespace(), Name: u.GetName()}
	w.mu.RLock()
	handlers := w.handlers
	w.mu.RUnlock()
	for _, h := range handlers {
		h(c)
	}
}

// lister returns a synced lister for a kind, waiting a bounded time for its
// cache to fill.
func (w *Watcher) lister(ctx context.Context, gvk schema.GroupVersionKind) (cache.GenericLister, apiResource, error) {
	select {
	case <-w.started:
	case <-ctx.Done():
		return nil, apiResource{}, ctx.Err()
	}
	w.mu.RLock()
	res, ok := w.kinds[gvk]
	var inf informers.GenericInformer
	if ok {
		inf = w.informers[res.gvr]
	}
	w.mu.RUnlock()
	if !ok {
		// Perhaps a CRD installed since the last discovery.
		if err := w.discover(); err != nil {
			w.log.V(1).Info("resource discovery was incomplete", "error", err.Error())
		}
		w.mu.RLock()
		res, ok = w.kinds[gvk]
		if ok {
			inf = w.informers[res.gvr]
		}
		w.mu.RUnlock()
		if !ok {
			return nil, apiResource{}, fmt.Errorf("the hub serves no selectable kind %s", gvkString(gvk))
		}
	}
	if !inf.Informer().HasSynced() {
		start := time.Now()
		syncCtx, cancel := context.WithTimeout(ctx, w.opts.SyncTimeout)
		defer cancel()
		if !cache.WaitForCacheSync(syncCtx.Done(), inf.Informer().HasSynced) {
			w.log.Info("a kind's cache did not sync", "kind", gvkString(gvk), "waited", time.Since(start).String())
			return nil, apiResource{}, fmt.Errorf("the cache of %s did not sync within %s", gvkString(gvk), w.opts.SyncTimeout)
		}
		if d := time.Since(start); d > time.Second {
			w.log.Info("waited for a kind's cache to sync", "kind", gvkString(gvk), "waited", d.String())
		}
	}
	return inf.Lister(), res, nil
}

func gvkString(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Version + "/" + gvk.Kind
	}
	return gvk.Group + "/" + gvk.Version + "/" + gvk.Kind
}

// namespacedKinds returns every watched namespaced kind, sorted for determinism.
func (w *Watcher) namespacedKinds() []schema.GroupVersionKind {
	w.mu.RLock()
	defer w.mu.RUnlock()
	var out []schema.GroupVersionKind
	for gvk, r := range w.kinds {
		if r.namespaced {
			out = append(out, gvk)
		}
	}
	sort.Slice(out, func(i, j int) bool { return gvkString(out[i]) < gvkString(out[j]) })
	return out
}

// Select returns deep copies of the objects the selectors pick, with a Namespace
// bringing every selectable object in it, skipping what must not be copied. The
// result is sorted: Namespaces, then CRDs, then everything else by kind,
// namespace and name.
func (w *Watcher) Select(ctx context.Context, selectors []placementv1beta1.ResourceSelector) ([]*unstructured.Unstructured, error) {
	picked := map[string]*unstructured.Unstructured{}
	add := func(u *unstructured.Unstructured) {
		if skip, _ := SkipObject(u); skip {
			return
		}
		picked[objectKey(u)] = u
	}
	for _, sel := range selectors {
		gvk := schema.GroupVersionKind{Group: sel.Group, Version: sel.Version, Kind: sel.Kind}
		objs, err := w.list(ctx, gvk, sel)
		if err != nil {
			return nil, err
		}
		for _, u := range objs {
			add(u)
			if gvk.Group == "" && gvk.Kind == "Namespace" {
				if skip, _ := SkipObject(u); skip {
					continue
				}
				inside, err := w.objectsIn(ctx, u.GetName())
				if err != nil {
					return nil, err
				}
				for _, o := range inside {
					add(o)
				}
			}
		}
	}
	out := make([]*unstructured.Unstructured, 0, len(picked))
	for _, u := range picked {
		out = append(out, u)
	}
	SortForApply(out)
	return out, nil
}

// ReservedMatches returns the reserved namespaces (ReservedNamespace) that the
// Namespace selectors without a name match, sorted: Select leaves them out, and
// the placement reports them. (A selector that names one is refused before
// selection.)
func (w *Watcher) ReservedMatches(ctx context.Context, selectors []placementv1beta1.ResourceSelector) ([]string, error) {
	set := map[string]bool{}
	for _, sel := range selectors {
		if sel.Group != "" || sel.Kind != "Namespace" || sel.Name != "" {
			continue
		}
		objs, err := w.list(ctx, schema.GroupVersionKind{Version: sel.Version, Kind: sel.Kind}, sel)
		if err != nil {
			return nil, err
		}
		for _, u := range objs {
			if ReservedNamespace(u.GetName()) != "" {
				set[u.GetName()] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for ns := range set {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out, nil
}

// SelectNamespaced returns deep copies of the objects of namespace that the
// selectors (of a ResourcePlacement there) pick, skipping what must not be
// copied, sorted like Select. The first object is the Namespace itself, reduced
// to its name and labels and marked create-only (AnnotationCreateOnly): members
// that lack it get it, and it is never updated or removed there. A selector of a
// cluster-scoped kind is an error.
func (w *Watcher) SelectNamespaced(ctx context.Context, namespace string, selectors []placementv1beta1.ResourceSelector) ([]*unstructured.Unstructured, error) {
	nsLister, _, err := w.lister(ctx, schema.GroupVersionKind{Version: "v1", Kind: "Namespace"})
	if err != nil {
		return nil, err
	}
	nsObj, err := nsLister.Get(namespace)
	if err != nil {
		return nil, fmt.Errorf("failed to get namespace %s: %w", namespace, err)
	}
	ns := toUnstructured(nsObj)
	if skip, why := SkipObject(ns); skip {
		return nil, fmt.Errorf("namespace %s cannot be placed: %s", namespace, why)
	}
	picked := map[string]*unstructured.Unstructured{}
	for _, sel := range selectors {
		gvk := schema.GroupVersionKind{Group: sel.Group, Version: sel.Version, Kind: sel.Kind}
		objs, err := w.listIn(ctx, gvk, namespace, sel)
		if err != nil {
			return nil, err
		}
		for _, u := range objs {
			if skip, _ := SkipObject(u); !skip {
				picked[objectKey(u)] = u
			}
		}
	}
	out := make([]*unstructured.Unstructured, 0, len(picked)+1)
	out = append(out, MinimalNamespace(ns))
	for _, u := range picked {
		out = append(out, u)
	}
	SortForApply(out)
	return out, nil
}

// MinimalNamespace is the Namespace a ResourcePlacement brings to its members:
// the hub namespace's name and labels, marked create-only.
func MinimalNamespace(ns *unstructured.Unstructured) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Namespace")
	u.SetName(ns.GetName())
	if l := ns.GetLabels(); len(l) > 0 {
		u.SetLabels(l)
	}
	u.SetAnnotations(map[string]string{placementv1beta1.AnnotationCreateOnly: "true"})
	return u
}

// listIn lists the objects of a namespaced kind in namespace that sel picks.
func (w *Watcher) listIn(ctx context.Context, gvk schema.GroupVersionKind, namespace string, sel placementv1beta1.ResourceSelector) ([]*unstructured.Unstructured, error) {
	lister, res, err := w.lister(ctx, gvk)
	if err != nil {
		return nil, err
	}
	if !res.namespaced {
		return nil, fmt.Errorf("%s is cluster-scoped: a ResourcePlacement selects kinds of its own namespace (use a ClusterResourcePlacement for cluster-scoped kinds)", gvkString(gvk))
	}
	nsLister := lister.ByNamespace(namespace)
	if sel.Name != "" {
		obj, err := nsLister.Get(sel.Name)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("failed to get %s %s/%s: %w", gvkString(gvk), namespace, sel.Name, err)
		}
		return []*unstructured.Unstructured{toUnstructured(obj)}, nil
	}
	selector := labels.Everything()
	if sel.LabelSelector != nil {
		if selector, err = metav1.LabelSelectorAsSelector(sel.LabelSelector); err != nil {
			return nil, fmt.Errorf("invalid label selector for %s: %w", gvkString(gvk), err)
		}
	}
	objs, err := nsLister.List(selector)
	if err != nil {
		return nil, fmt.Errorf("failed to list %s in %s: %w", gvkString(gvk), namespace, err)
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		out = append(out, toUnstructured(o))
	}
	return out, nil
}

func (w *Watcher) list(ctx context.Context, gvk schema.GroupVersionKind, sel placementv1beta1.ResourceSelector) ([]*unstructured.Unstructured, error) {
	lister, res, err := w.lister(ctx, gvk)
	if err != nil {
		return nil, err
	}
	if res.namespaced {
		return nil, fmt.Errorf("%s is namespaced: a ClusterResourcePlacement selects cluster-scoped kinds (select its Namespace to bring it)", gvkString(gvk))
	}
	if sel.Name != "" {
		obj, err := lister.Get(sel.Name)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("failed to get %s %s: %w", gvkString(gvk), sel.Name, err)
		}
		return []*unstructured.Unstructured{toUnstructured(obj)}, nil
	}
	selector := labels.Everything()
	if sel.LabelSelector != nil {
		if selector, err = metav1.LabelSelectorAsSelector(sel.LabelSelector); err != nil {
			return nil, fmt.Errorf("invalid label selector for %s: %w", gvkString(gvk), err)
		}
	}
	objs, err := lister.List(selector)
	if err != nil {
		return nil, fmt.Errorf("failed to list %s: %w", gvkString(gvk), err)
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		out = append(out, toUnstructured(o))
	}
	return out, nil
}

// objectsIn lists every selectable object in a namespace.
func (w *Watcher) objectsIn(ctx context.Context, namespace string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, gvk := range w.namespacedKinds() {
		lister, _, err := w.lister(ctx, gvk)
		if err != nil {
			// One broken kind (an aggregated API down) must not block the rest.
			w.log.V(1).Info("skipping a kind that cannot be listed", "kind", gvkString(gvk), "error", err.Error())
			continue
		}
		objs, err := lister.ByNamespace(namespace).List(labels.Everything())
		if err != nil {
			return nil, fmt.Errorf("failed to list %s in %s: %w", gvkString(gvk), namespace, err)
		}
		for _, o := range objs {
			out = append(out, toUnstructured(o))
		}
	}
	return out, nil
}

func toUnstructured(o runtime.Object) *unstructured.Unstructured {
	return o.(*unstructured.Unstructured).DeepCopy()
}

func objectKey(u *unstructured.Unstructured) string {
	return u.GroupVersionKind().String() + "/" + u.GetNamespace() + "/" + u.GetName()
}

// applyRank orders kinds so that what others depend on comes first.
func applyRank(u *unstructured.Unstructured) int {
	gvk := u.GroupVersionKind()
	switch {
	case gvk.Group == "" && gvk.Kind == "Namespace":
		return 0
	case gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition":
		return 1
	default:
		return 2
	}
}

// SortForApply orders objects Namespaces first, then CRDs, then by kind,
// namespace and name — a stable order, so equal selections hash equally.
func SortForApply(objs []*unstructured.Unstructured) {
	sort.SliceStable(objs, func(i, j int) bool {
		ri, rj := applyRank(objs[i]), applyRank(objs[j])
		if ri != rj {
			return ri < rj
		}
		return objectKey(objs[i]) < objectKey(objs[j])
	})
}

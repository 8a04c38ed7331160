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
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// OwnWrites is a client whose reads return what it wrote while its cache is
// behind: the controllers that share one see their own writes and each
// other's at once.
//
// The rules:
//   - Every object of the kinds it tracks that a write (create, update, patch,
//     of the object or its status) returns is remembered, without
//     managedFields (the cache keeps none), for OwnWritesTTL. It tracks the
//     small objects whose status several controllers write and read
//     (placements, bindings, policy snapshots), not Works or resource
//     snapshots, which can be large and are written by one controller that
//     copes with a cache behind.
//   - A read (Get, or each item of a List) that returns an object of the same
//     UID with an older resourceVersion returns the remembered one instead.
//     One the cache holds at that resourceVersion or newer is the cache's: the
//     entry is dropped.
//   - A read never adds an object the cache does not hold: a deleted object
//     stays deleted, and a created one appears once the cache has it.
//   - A delete drops the entry.
//
// controller-runtime's read-your-writes consistency reaches the same end by
// making each read wait until the cache has caught up; with every reconcile
// of a placement's change listing bindings while others write them, the
// waits queued the whole pipeline behind the watch (a 1 000-member fleet
// placed 100 placements in p50 24.9 s against 15.3 s). Nothing here waits.
type OwnWrites struct {
	client.Client

	tracked map[schema.GroupVersionKind]bool

	mu      sync.Mutex
	written map[ownWriteKey]ownWrite
	swept   time.Time
	now     func() time.Time
}

// OwnWritesTTL is how long a write is remembered: far longer than a healthy
// watch lags, and short enough that the memory stays that of the writes of
// a few seconds.
const OwnWritesTTL = 10 * time.Second

type ownWriteKey struct {
	gvk schema.GroupVersionKind
	key types.NamespacedName
}

type ownWrite struct {
	obj client.Object
	rv  int64
	at  time.Time
}

// NewOwnWrites returns c reading its own writes of the kinds of the objects
// given; it panics on an object whose kind c's scheme does not know.
func NewOwnWrites(c client.Client, kinds ...client.Object) *OwnWrites {
	w := &OwnWrites{Client: c, tracked: map[schema.GroupVersionKind]bool{}, written: map[ownWriteKey]ownWrite{}, now: time.Now}
	for _, k := range kinds {
		gvk, err := apiutil.GVKForObject(k, c.Scheme())
		if err != nil {
			panic(err)
		}
		w.tracked[gvk] = true
	}
	return w
}

// PipelineKinds are the kinds whose status the controllers of the placement
// pipeline write and read: what they track with OwnWrites.
func PipelineKinds() []client.Object {
	return []client.Object{
		&placementv1beta1.ClusterResourcePlacement{}, &placementv1beta1.ResourcePlacement{},
		&placementv1beta1.ClusterResourceBinding{}, &placementv1beta1.ResourceBinding{},
		&placementv1beta1.ClusterSchedulingPolicySnapshot{}, &placementv1beta1.SchedulingPolicySnapshot{},
	}
}

// resourceVersion is obj's resourceVersion as a number, false when it has none
// that is one.
func resourceVersion(obj client.Object) (int64, bool) {
	rv, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	return rv, err == nil
}

func (c *OwnWrites) keyOf(obj runtime.Object, key types.NamespacedName) (ownWriteKey, bool) {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil || !c.tracked[gvk] {
		return ownWriteKey{}, false
	}
	return ownWriteKey{gvk: gvk, key: key}, true
}

// remember keeps what a write returned.
func (c *OwnWrites) remember(obj client.Object) {
	rv, ok := resourceVersion(obj)
	if !ok {
		return
	}
	k, ok := c.keyOf(obj, client.ObjectKeyFromObject(obj))
	if !ok {
		return
	}
	kept, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return
	}
	kept.SetManagedFields(nil)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if was, ok := c.written[k]; ok && was.rv >= rv {
		return
	}
	c.written[k] = ownWrite{obj: kept, rv: rv, at: now}
	if now.Sub(c.swept) >= time.Second {
		c.swept = now
		for k, w := range c.written {
			if now.Sub(w.at) > OwnWritesTTL {
				delete(c.written, k)
			}
		}
	}
}

func (c *OwnWrites) forget(obj client.Object) {
	if k, ok := c.keyOf(obj, client.ObjectKeyFromObject(obj)); ok {
		c.mu.Lock()
		delete(c.written, k)
		c.mu.Unlock()
	}
}

// fresher replaces obj, read from the cache, with what this client wrote of
// it, if that is newer.
func (c *OwnWrites) fresher(k ownWriteKey, obj client.Object) {
	c.mu.Lock()
	w, ok := c.written[k]
	if ok {
		rv, numbered := resourceVersion(obj)
		switch {
		case !numbered || w.obj.GetUID() != obj.GetUID() || rv >= w.rv || c.now().Sub(w.at) > OwnWritesTTL:
			// The cache caught up, or holds another object of the name.
			delete(c.written, k)
			ok = false
		}
	}
	c.mu.Unlock()
	if !ok {
		return
	}
	dst := reflect.ValueOf(obj)
	src := reflect.ValueOf(w.obj.DeepCopyObject())
	if dst.Kind() != reflect.Pointer || src.Type() != dst.Type() {
		return // another representation (unstructured, metadata only)
	}
	dst.Elem().Set(src.Elem())
}

// Get reads key from the cache, or what this client wrote of it if newer.
func (c *OwnWrites) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if k, ok := c.keyOf(obj, key); ok {
		c.fresher(k, obj)
	}
	return nil
}

// List lists from the cache, each item replaced by what this client wrote of
// it if newer.
func (c *OwnWrites) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	gvk, err := apiutil.GVKForObject(list, c.Scheme())
	if err != nil || !c.tracked[gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List"))] {
		return nil
	}
	c.mu.Lock()
	empty := len(c.written) == 0
	c.mu.Unlock()
	if empty {
		return nil
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil
	}
	for _, item := range items {
		obj, ok := item.(client.Object)
		if !ok {
			continue
		}
		if k, ok := c.keyOf(obj, client.ObjectKeyFromObject(obj)); ok {
			c.fresher(k, obj)
		}
	}
	return nil
}

// Create creates obj and remembers it.
func (c *OwnWrites) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		return err
	}
	c.remember(obj)
	return nil
}

// Update updates obj and remembers it.
func (c *OwnWrites) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := c.Client.Update(ctx, obj, opts...); err != nil {
		return err
	}
	c.remember(obj)
	return nil
}

// Patch patches obj and remembers it.
func (c *OwnWrites) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := c.Client.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	c.remember(obj)
	return nil
}

// Delete deletes obj and forgets it.
func (c *OwnWrites) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.forget(obj)
	return c.Client.Delete(ctx, obj, opts...)
}

// Status writes the status subresource, remembering what it returns.
func (c *OwnWrites) Status() client.SubResourceWriter {
	return &ownWritesStatus{SubResourceWriter: c.Client.Status(), c: c}
}

type ownWritesStatus struct {
	client.SubResourceWriter
	c *OwnWrites
}

func (s *ownWritesStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := s.SubResourceWriter.Update(ctx, obj, opts...); err != nil {
		return err
	}
	s.c.remember(obj)
	return nil
}

func (s *ownWritesStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if err := s.SubResourceWriter.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	s.c.remember(obj)
	return nil
}

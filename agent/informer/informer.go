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

// Package informer makes the agent's informers on objects of any kind.
//
// It builds them from the dynamic client and client-go's cache directly rather
// than with dynamicinformer, which imports client-go's informer factory and,
// through it, the typed clients and informers of every API group: code the
// agent would carry, and partly page in, without using it.
package informer

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// Dynamic returns an informer, not started, on the objects of resource gvr in
// namespace ("" for all namespaces, or a cluster-scoped resource) that match
// labelSelector ("" for all). It never resyncs, and it drops managed fields,
// which are large and never read from the cache.
func Dynamic(client dynamic.Interface, gvr schema.GroupVersionResource, namespace, labelSelector string) cache.SharedIndexInformer {
	return newInformer(client, gvr, namespace, func(o *metav1.ListOptions) { o.LabelSelector = labelSelector })
}

// Object returns an informer, not started, on the one object of resource gvr named
// name in namespace ("" for a cluster-scoped resource), whatever its labels. It
// never resyncs, and it drops managed fields.
func Object(client dynamic.Interface, gvr schema.GroupVersionResource, namespace, name string) cache.SharedIndexInformer {
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	return newInformer(client, gvr, namespace, func(o *metav1.ListOptions) { o.FieldSelector = selector })
}

func newInformer(client dynamic.Interface, gvr schema.GroupVersionResource, namespace string, tweak func(*metav1.ListOptions)) cache.SharedIndexInformer {
	res := client.Resource(gvr).Namespace(namespace)
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			tweak(&o)
			return res.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			tweak(&o)
			return res.Watch(ctx, o)
		},
	}, &unstructured.Unstructured{}, 0, cache.Indexers{})
	_ = inf.SetTransform(dropManagedFields)
	return inf
}

func dropManagedFields(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u.SetManagedFields(nil)
	}
	return obj, nil
}

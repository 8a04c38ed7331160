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
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// frozenReads is a client whose reads come from a copy of the store taken
// when freeze was last called: a cache that has not seen the writes since.
type frozenReads struct {
	client.Client
	frozen client.Client
}

func (f *frozenReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return f.frozen.Get(ctx, key, obj, opts...)
}

func (f *frozenReads) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return f.frozen.List(ctx, list, opts...)
}

func (f *frozenReads) freeze(t *testing.T, scheme *runtime.Scheme) {
	t.Helper()
	list := &placementv1beta1.ClusterResourceBindingList{}
	if err := f.Client.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&placementv1beta1.ClusterResourceBinding{})
	for i := range list.Items {
		b = b.WithObjects(&list.Items[i])
	}
	f.frozen = b.Build()
}

func TestOwnWrites(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := placementv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	server := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&placementv1beta1.ClusterResourceBinding{}).Build()
	cache := &frozenReads{Client: server}
	now := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
	c := NewOwnWrites(cache, PipelineKinds()...)
	c.now = func() time.Time { return now }

	message := func(b *placementv1beta1.ClusterResourceBinding) string {
		if len(b.Status.Conditions) == 0 {
			return ""
		}
		return b.Status.Conditions[0].Message
	}
	setStatus := func(name, msg string) {
		t.Helper()
		b := &placementv1beta1.ClusterResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, b); err != nil {
			t.Fatal(err)
		}
		b.Status.Conditions = []metav1.Condition{{Type: "Scheduled", Status: metav1.ConditionTrue, Reason: "Scheduled", Message: msg, LastTransitionTime: metav1.NewTime(now)}}
		if err := c.Status().Update(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) (*placementv1beta1.ClusterResourceBinding, error) {
		b := &placementv1beta1.ClusterResourceBinding{}
		return b, c.Get(ctx, client.ObjectKey{Name: name}, b)
	}

	for _, name := range []string{"a", "b"} {
		if err := c.Create(ctx, &placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}}); err != nil {
			t.Fatal(err)
		}
	}
	cache.freeze(t, scheme)

	// Works are not tracked: they can be large, and their one writer copes
	// with a cache behind.
	c.remember(&placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "m", Name: "w", UID: "uid-w", ResourceVersion: "7"}})
	for k := range c.written {
		if k.gvk.Kind == "Work" {
			t.Fatalf("a Work write is remembered: %v", k)
		}
	}

	// A status this client wrote is read back while the cache is behind, by
	// Get and in a List.
	setStatus("a", "first")
	if b, err := read("a"); err != nil || message(b) != "first" {
		t.Fatalf("Get after a write: %q, %v; want the write", message(b), err)
	}
	list := &placementv1beta1.ClusterResourceBindingList{}
	if err := c.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for i := range list.Items {
		got[list.Items[i].Name] = message(&list.Items[i])
	}
	if got["a"] != "first" || got["b"] != "" || len(got) != 2 {
		t.Fatalf("List after a write: %v; want a's write and b as the cache has it", got)
	}

	// The cache, once it catches up with a newer write of another writer,
	// wins.
	other := &placementv1beta1.ClusterResourceBinding{}
	if err := server.Get(ctx, client.ObjectKey{Name: "a"}, other); err != nil {
		t.Fatal(err)
	}
	other.Status.Conditions[0].Message = "other writer"
	if err := server.Status().Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	cache.freeze(t, scheme)
	if b, _ := read("a"); message(b) != "other writer" {
		t.Fatalf("Get after the cache caught up with a newer write: %q, want the cache's", message(b))
	}
	if len(c.written) != 0 {
		t.Fatalf("the entry of a write the cache caught up with is kept: %v", c.written)
	}

	// A deleted object stays deleted, though it was written.
	setStatus("b", "before delete")
	if err := server.Delete(ctx, &placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}}); err != nil {
		t.Fatal(err)
	}
	cache.freeze(t, scheme)
	if _, err := read("b"); !apierrors.IsNotFound(err) {
		t.Fatalf("Get of a deleted object: %v, want NotFound", err)
	}

	// An object created anew under a written name is the new one.
	setStatus("a", "old a")
	if err := server.Delete(ctx, &placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	if err := server.Create(ctx, &placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "uid-a2"}}); err != nil {
		t.Fatal(err)
	}
	cache.freeze(t, scheme)
	if b, _ := read("a"); b.UID != "uid-a2" || message(b) != "" {
		t.Fatalf("Get of an object created again: uid %s, %q; want the new one", b.UID, message(b))
	}

	// A write is forgotten after OwnWritesTTL.
	setStatus("a", "late")
	now = now.Add(OwnWritesTTL + time.Second)
	if b, _ := read("a"); message(b) != "" {
		t.Fatalf("Get after OwnWritesTTL: %q, want the cache's", message(b))
	}
	// And swept with a write after that.
	cache.freeze(t, scheme)
	setStatus("a", "again")
	now = now.Add(OwnWritesTTL + time.Second)
	c.remember(&placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "c", UID: "uid-c", ResourceVersion: "1000"}})
	if len(c.written) != 1 {
		t.Fatalf("%d writes remembered, want the last one", len(c.written))
	}
}

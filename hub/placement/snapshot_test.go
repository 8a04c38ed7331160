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

package placement

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// laggingClient is a client whose lists, like a cache's, do not show the
// objects created through it until catchUp.
type laggingClient struct {
	client.Client
	unseen sets.Set[string]
}

func (c *laggingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		return err
	}
	c.unseen.Insert(obj.GetName())
	return nil
}

func (c *laggingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	l, ok := list.(*placementv1beta1.ClusterResourceSnapshotList)
	if !ok {
		return nil
	}
	kept := l.Items[:0]
	for _, s := range l.Items {
		if !c.unseen.Has(s.Name) {
			kept = append(kept, s)
		}
	}
	l.Items = kept
	return nil
}

func (c *laggingClient) catchUp() { c.unseen.Clear() }

func bigConfigMap(name string, size int) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("large")
	u.SetName(name)
	_ = unstructured.SetNestedField(u.Object, strings.Repeat("x", size), "data", "blob")
	return u
}

// A resource snapshot created by this process and not yet in the cache is
// not overwritten by the next reconcile: it waits for the cache, and the
// next set gets the next index. Without the wait, a selection that grew
// (here from one part to two) wrote its second part beside the first set's
// master and failed to write its own master, leaving index 0 with a part
// its master does not count.
func TestASnapshotSetIsNotWrittenUnderAnIndexTheCacheDoesNotShowYet(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := placementv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	crp := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "large", UID: "uid-large"}}
	c := &laggingClient{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(crp).Build(), unseen: sets.New[string]()}
	r := &Reconciler{Client: c, Scheme: scheme, Recorder: events.NewFakeRecorder(100)}
	key := pipeline.KeyOf(crp)
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "large"}}}

	reconcile := func(selected ...*unstructured.Unstructured) *scope {
		t.Helper()
		s := &scope{key: key, placement: crp, selected: selected}
		if err := r.ensureResourceSnapshot(ctx, s); err != nil {
			t.Fatalf("ensureResourceSnapshot: %v", err)
		}
		return s
	}
	// The first selection fits one snapshot: large-0-snapshot.
	if s := reconcile(ns, bigConfigMap("blob-0", 350_000)); s.cacheBehind {
		t.Fatal("the first reconcile found the cache behind")
	}
	// The selection grows past one snapshot before the cache shows the first.
	grown := []*unstructured.Unstructured{ns, bigConfigMap("blob-0", 350_000), bigConfigMap("blob-1", 350_000), bigConfigMap("blob-2", 350_000)}
	if s := reconcile(grown...); !s.cacheBehind {
		t.Fatal("a reconcile on a cache without the snapshot just created did not wait for it")
	}
	c.catchUp()
	if s := reconcile(grown...); s.cacheBehind {
		t.Fatal("the reconcile after the cache caught up still waited")
	}

	list := &placementv1beta1.ClusterResourceSnapshotList{}
	if err := c.Client.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range list.Items {
		got = append(got, fmt.Sprintf("%s index=%s latest=%s parts=%s subindex=%s", s.Name,
			s.Labels[placementv1beta1.LabelResourceIndex], s.Labels[placementv1beta1.LabelIsLatestSnapshot],
			s.Annotations[placementv1beta1.AnnotationNumberOfResourceSnapshots], s.Annotations[placementv1beta1.AnnotationSubindexOfResourceSnapshot]))
	}
	sort.Strings(got)
	want := []string{
		"large-0-snapshot index=0 latest=false parts=1 subindex=",
		"large-1-1 index=1 latest=true parts= subindex=1",
		"large-1-snapshot index=1 latest=true parts=2 subindex=",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resource snapshots (-want +got):\n%s", diff)
	}
}

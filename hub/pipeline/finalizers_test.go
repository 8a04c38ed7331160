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
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The finalizer helpers never drop a finalizer another writer added or kept
// since the caller read the object: such a write fails with Conflict, and the
// retry on a fresh read keeps both.
func TestFinalizersAreWrittenWithAnOptimisticLock(t *testing.T) {
	const mine, theirs = "example.com/mine", "example.com/theirs"
	for i, tc := range []struct {
		name string
		// start are the finalizers the object is created with.
		start []string
		// meanwhile is what another writer does after the caller's read.
		meanwhile func(ctx context.Context, c client.Client, o client.Object) error
		// write is the caller's write.
		write        func(ctx context.Context, c client.Client, o client.Object) error
		wantConflict bool
		// want are the finalizers after the write (and its retry, on Conflict).
		want []string
	}{
		{
			name: "adding a finalizer keeps the one another writer added since the read",
			meanwhile: func(ctx context.Context, c client.Client, o client.Object) error {
				return AddFinalizer(ctx, c, o, theirs, "other")
			},
			write: func(ctx context.Context, c client.Client, o client.Object) error {
				return AddFinalizer(ctx, c, o, mine, "me")
			},
			wantConflict: true,
			want:         []string{theirs, mine},
		},
		{
			name:  "removing a finalizer keeps the one another writer added since the read",
			start: []string{mine},
			meanwhile: func(ctx context.Context, c client.Client, o client.Object) error {
				return AddFinalizer(ctx, c, o, theirs, "other")
			},
			write: func(ctx context.Context, c client.Client, o client.Object) error {
				return RemoveFinalizer(ctx, c, o, mine, "me")
			},
			wantConflict: true,
			want:         []string{theirs},
		},
		{
			name:  "removing a finalizer does not bring back one another writer removed since the read",
			start: []string{mine, theirs},
			meanwhile: func(ctx context.Context, c client.Client, o client.Object) error {
				return RemoveFinalizer(ctx, c, o, theirs, "other")
			},
			write: func(ctx context.Context, c client.Client, o client.Object) error {
				return RemoveFinalizer(ctx, c, o, mine, "me")
			},
			wantConflict: true,
			want:         nil,
		},
		{
			name: "adding a finalizer with other changes keeps the one another writer added since the read",
			meanwhile: func(ctx context.Context, c client.Client, o client.Object) error {
				return AddFinalizer(ctx, c, o, theirs, "other")
			},
			write: func(ctx context.Context, c client.Client, o client.Object) error {
				_, err := AddFinalizerWith(ctx, c, o, mine, "me", func() bool { o.SetLabels(map[string]string{"k": "v"}); return true })
				return err
			},
			wantConflict: true,
			want:         []string{theirs, mine},
		},
		{
			name:  "adding a finalizer that is there, with no other change, writes nothing",
			start: []string{mine},
			write: func(ctx context.Context, c client.Client, o client.Object) error {
				_, err := AddFinalizerWith(ctx, c, o, mine, "me", func() bool { return false })
				return err
			},
			want: []string{mine},
		},
		{
			name:  "adding a finalizer that is there writes nothing",
			start: []string{mine},
			write: func(ctx context.Context, c client.Client, o client.Object) error {
				return AddFinalizer(ctx, c, o, mine, "me")
			},
			want: []string{mine},
		},
		{
			name:  "removing a finalizer that is not there writes nothing",
			start: []string{theirs},
			write: func(ctx context.Context, c client.Client, o client.Object) error {
				return RemoveFinalizer(ctx, c, o, mine, "me")
			},
			want: []string{theirs},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := env.Client
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("finalizers-%d", i), Finalizers: tc.start}}
			if err := c.Create(ctx, cm); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				cm := &corev1.ConfigMap{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: fmt.Sprintf("finalizers-%d", i)}, cm); err == nil {
					cm.Finalizers = nil
					_ = c.Update(ctx, cm)
					_ = c.Delete(ctx, cm)
				}
			})
			stale := cm.DeepCopy()
			if tc.meanwhile != nil {
				if err := tc.meanwhile(ctx, c, cm.DeepCopy()); err != nil {
					t.Fatal(err)
				}
			}
			rv, read := stale.ResourceVersion, append([]string(nil), stale.Finalizers...)
			err := tc.write(ctx, c, stale)
			if got := apierrors.IsConflict(err); got != tc.wantConflict {
				t.Fatalf("write: %v; conflict = %v, want %v", err, got, tc.wantConflict)
			}
			if err != nil && !tc.wantConflict {
				t.Fatal(err)
			}
			if tc.wantConflict {
				if diff := cmp.Diff(read, stale.Finalizers); diff != "" {
					t.Errorf("a failed write changed the caller's finalizers (-want +got):\n%s", diff)
				}
				if err := c.Get(ctx, client.ObjectKeyFromObject(cm), stale); err != nil {
					t.Fatal(err)
				}
				if err := tc.write(ctx, c, stale); err != nil {
					t.Fatalf("the retry on a fresh read: %v", err)
				}
			} else if stale.ResourceVersion != rv {
				t.Errorf("resourceVersion moved from %s to %s: a write that changes nothing was sent", rv, stale.ResourceVersion)
			}
			got := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Finalizers); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
		})
	}
}

// A finalizer written by the helper is owned by the manager that wrote it, and
// removing one from an object that is gone is done.
func TestFinalizerIsOwnedByItsWriterAndRemovalOfAGoneObjectIsDone(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	// (An object created without any field has no managedFields at all, and
	// the API server then records none for a patch either.)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "finalizer-owner"}, Data: map[string]string{"k": "v"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := AddFinalizer(ctx, c, cm, "example.com/mine", "flotilla-test"); err != nil {
		t.Fatal(err)
	}
	var owned [][]string
	for _, e := range cm.ManagedFields {
		if e.Manager != "flotilla-test" {
			continue
		}
		paths, err := FieldPaths(e.FieldsV1.GetRawBytes())
		if err != nil {
			t.Fatal(err)
		}
		owned = append(owned, paths...)
	}
	want := [][]string{{"metadata", "finalizers"}, {"metadata", "finalizers", "example.com/mine"}}
	if diff := cmp.Diff(want, owned); diff != "" {
		t.Errorf("fields of flotilla-test (-want +got):\n%s", diff)
	}
	gone := cm.DeepCopy()
	cm.Finalizers = nil
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := RemoveFinalizer(ctx, c, gone, "example.com/mine", "flotilla-test"); err != nil {
		t.Errorf("removing the finalizer of a deleted object: %v", err)
	}
}

// AddFinalizerWith writes the finalizer and the other changes in one write,
// under the writer's field manager, and writes the other changes alone once
// the finalizer is there.
func TestAddFinalizerWithWritesTheOtherChangesInTheSameWrite(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "finalizer-with"}, Data: map[string]string{"k": "v"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cm.Finalizers = nil
		_ = c.Update(ctx, cm)
		_ = c.Delete(ctx, cm)
	})
	rv := cm.ResourceVersion
	written, err := AddFinalizerWith(ctx, c, cm, "example.com/mine", "flotilla-test", func() bool {
		cm.Labels = map[string]string{"built-in": "a"}
		return true
	})
	if err != nil || !written {
		t.Fatalf("AddFinalizerWith = %v, %v; want written", written, err)
	}
	got := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"example.com/mine"}, got.Finalizers); diff != "" {
		t.Errorf("finalizers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"built-in": "a"}, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if got.ResourceVersion == rv {
		t.Fatalf("resourceVersion still %s: nothing was written", rv)
	}
	var owned [][]string
	for _, e := range got.ManagedFields {
		if e.Manager != "flotilla-test" {
			continue
		}
		paths, err := FieldPaths(e.FieldsV1.GetRawBytes())
		if err != nil {
			t.Fatal(err)
		}
		owned = append(owned, paths...)
	}
	want := [][]string{{"metadata", "finalizers"}, {"metadata", "finalizers", "example.com/mine"}, {"metadata", "labels"}, {"metadata", "labels", "built-in"}}
	if diff := cmp.Diff(want, owned, cmpopts.SortSlices(func(a, b []string) bool { return fmt.Sprint(a) < fmt.Sprint(b) })); diff != "" {
		t.Errorf("fields of flotilla-test (-want +got):\n%s", diff)
	}

	// The finalizer is there: only the other change is written.
	written, err = AddFinalizerWith(ctx, c, cm, "example.com/mine", "flotilla-test", func() bool {
		cm.Labels["built-in"] = "b"
		return true
	})
	if err != nil || !written {
		t.Fatalf("AddFinalizerWith = %v, %v; want written", written, err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
		t.Fatal(err)
	}
	if got.Labels["built-in"] != "b" || len(got.Finalizers) != 1 {
		t.Errorf("labels %v, finalizers %v; want built-in=b and the one finalizer", got.Labels, got.Finalizers)
	}
}

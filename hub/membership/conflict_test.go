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

package membership_test

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/membership"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// A write that loses to another writer's (the tunnel server's, while a fleet joins)
// is read again shortly, not returned as an error (which controller-runtime logs
// with a stack, once per member of a joining fleet).
func TestAConflictingWriteIsReadAgainWithoutAnError(t *testing.T) {
	ctx := context.Background()
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "contested"}}
	testenv.Create(t, env.Client, mc)
	direct, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	conflicts := 1
	c := interceptor.NewClient(direct, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if conflicts > 0 {
				conflicts--
				return apierrors.NewConflict(schema.GroupResource{Group: clusterv1beta1.GroupVersion.Group, Resource: "memberclusters"},
					obj.GetName(), nil)
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	r := &membership.Reconciler{Client: c, Recorder: events.NewFakeRecorder(10)}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(mc)}

	result, err := r.Reconcile(ctx, req)
	if err != nil || result.RequeueAfter <= 0 {
		t.Fatalf("Reconcile after a conflict = %+v, %v; want a requeue soon and no error", result, err)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatalf("Reconcile once the conflict is gone: %v", err)
	}
	if err := env.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.ContainsFinalizer(mc, clusterv1beta1.MemberClusterFinalizer) {
		t.Errorf("no finalizer after the retried write")
	}
}

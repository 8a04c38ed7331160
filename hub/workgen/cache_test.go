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

package workgen

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// behindClient reads, like a cache that has not caught up, no Work at all.
type behindClient struct{ client.Client }

func (c behindClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*placementv1beta1.Work); ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: placementv1beta1.GroupVersion.Group, Resource: "works"}, key.Name)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// A Work the cache does not show yet is not a failure the binding reports:
// creating it again fails with AlreadyExists, and the reconcile is retried
// with the status left as it was. (It once said "failed to write Work ...
// already exists", and the placement turned Stalled until the cache caught up.)
func TestAWorkTheCacheDoesNotShowYetIsRetriedNotReported(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, placementv1beta1.AddToScheme, clusterv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	crp := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "app", UID: "uid-app"}}
	b := &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "app-m1", UID: "uid-b", Labels: map[string]string{placementv1beta1.LabelPlacementName: "app"}},
		Spec:       placementv1beta1.ResourceBindingSpec{TargetCluster: "m1", State: placementv1beta1.BindingStateBound, ResourceSnapshotName: "app-0-snapshot"},
	}
	existing := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: clusterv1beta1.MemberNamespace("m1"), Name: WorkName("app")}}
	c := behindClient{fake.NewClientBuilder().WithScheme(scheme).WithObjects(crp, b, existing).Build()}
	r := &Reconciler{Client: c, Scheme: scheme}
	s := &scope{status: statusInput{binding: b}, work: workSpec{binding: b, placement: crp}}
	err := r.writeWork(context.Background(), s)
	if err == nil || !apierrors.IsAlreadyExists(err) {
		t.Errorf("writeWork returned %v, want an AlreadyExists error to retry", err)
	}
	if s.status.err != nil {
		t.Errorf("the binding's status would report %q", s.status.err)
	}
}

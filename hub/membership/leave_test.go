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
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/membership"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, testenv.Options{}, func(e *testenv.Env) error { env = e; return nil }))
}

// A member that leaves loses its bindings of both scopes — a ResourcePlacement's
// as well as a ClusterResourcePlacement's — before its MemberCluster goes.
func TestLeavingMemberLosesItsBindingsOfBothScopes(t *testing.T) {
	ctx := context.Background()
	env.StartManager(t, func(mgr ctrl.Manager) error {
		return (&membership.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("membership")}).SetupWithManager(mgr)
	})
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "leaver"}}
	testenv.Create(t, env.Client, mc)
	testenv.Eventually(t, 20*time.Second, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
			return err
		}
		if !controllerutil.ContainsFinalizer(mc, clusterv1beta1.MemberClusterFinalizer) {
			return fmt.Errorf("no finalizer yet")
		}
		return nil
	})
	testenv.Create(t, env.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
	spec := placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateScheduled, TargetCluster: "leaver"}
	crb := &placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "crp-leaver",
		Labels: map[string]string{placementv1beta1.LabelPlacementName: "crp"}}, Spec: spec}
	rb := &placementv1beta1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "rp-leaver",
		Labels: map[string]string{placementv1beta1.LabelPlacementName: "rp"}}, Spec: spec}
	other := &placementv1beta1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "rp-stayer",
		Labels: map[string]string{placementv1beta1.LabelPlacementName: "rp"}},
		Spec: placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateScheduled, TargetCluster: "stayer"}}
	for _, b := range []client.Object{crb, rb, other} {
		testenv.Create(t, env.Client, b)
	}
	if err := env.Client.Delete(ctx, mc); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		for _, o := range []client.Object{crb, rb, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "leaver"}}} {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%T %s is still there (%w)", o, o.GetName(), err)
			}
		}
		return nil
	})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(other), other); err != nil {
		t.Errorf("the binding on another member is gone: %v", err)
	}
}

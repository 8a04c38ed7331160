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

package reportback

import (
	"context"
	"os"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, testenv.Options{}, func(e *testenv.Env) error { env = e; return nil }))
}

func TestMirrorCopiesTheMembersStatusOntoTheHubObject(t *testing.T) {
	ctx := context.Background()
	for _, ns := range []string{"app", "flotilla-member-member-1"} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	if err := env.Client.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "settings"}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	work := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-member-member-1", Name: "web-work"},
		Spec: placementv1beta1.WorkSpec{ReportBack: placementv1beta1.ReportBackMirror}}
	if err := env.Client.Create(ctx, work); err != nil {
		t.Fatal(err)
	}
	work.Status.ManifestConditions = []placementv1beta1.ManifestCondition{
		{Identifier: placementv1beta1.WorkResourceIdentifier{Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "app", Name: "web"},
			ReportedStatus: &runtime.RawExtension{Raw: []byte(`{"replicas":2,"readyReplicas":2,"availableReplicas":2}`)}},
		// A kind without a status subresource is skipped.
		{Identifier: placementv1beta1.WorkResourceIdentifier{Ordinal: 1, Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "settings"},
			ReportedStatus: &runtime.RawExtension{Raw: []byte(`{"x":1}`)}},
	}
	if err := env.Client.Status().Update(ctx, work); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(env.Config, hc)
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: env.Client, Dynamic: dyn, Mapper: mapper}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: work.Namespace, Name: work.Name}}); err != nil {
		t.Fatalf("Reconcile() failed: %v", err)
	}
	got := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: "app", Name: "web"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.ReadyReplicas != 2 || got.Status.AvailableReplicas != 2 {
		t.Errorf("hub Deployment status = %+v, want the member's (2 ready, 2 available)", got.Status)
	}
}

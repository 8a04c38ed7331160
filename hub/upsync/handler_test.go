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

package upsync

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, testenv.Options{}, func(e *testenv.Env) error { env = e; return nil }))
}

func newHandler(t *testing.T) *Handler {
	t.Helper()
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
	return &Handler{Client: env.Client, Dynamic: dyn, Mapper: mapper, Log: testr.New(t)}
}

// upsyncWork creates, for cluster, a binding and a Work placing namespace ns that
// upsyncs ConfigMaps labelled upsync=true.
func upsyncWork(t *testing.T, cluster, ns string) *placementv1beta1.Work {
	t.Helper()
	ctx := context.Background()
	for _, name := range []string{clusterv1beta1.MemberNamespace(cluster), ns} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	b := &placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "up-" + cluster},
		Spec: placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateBound, TargetCluster: cluster}}
	if err := env.Client.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	w := &placementv1beta1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: "up-work", Namespace: clusterv1beta1.MemberNamespace(cluster),
			Labels: map[string]string{placementv1beta1.LabelParentBinding: b.Name}},
		Spec: placementv1beta1.WorkSpec{
			Workload: placementv1beta1.WorkloadTemplate{Manifests: []placementv1beta1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
			UpsyncSelectors: []placementv1beta1.UpsyncSelector{{Version: "v1", Kind: "ConfigMap",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"upsync": "true"}}}},
		},
	}
	if err := env.Client.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	return w
}

func configMapJSON(ns, name, value string, labels map[string]string) json.RawMessage {
	raw, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels, "resourceVersion": "7", "uid": "member-uid"},
		"data":     map[string]any{"k": value}})
	return raw
}

func upsynced(t *testing.T, cluster string) *metav1.Condition {
	t.Helper()
	b := &placementv1beta1.ClusterResourceBinding{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: "up-" + cluster}, b); err != nil {
		t.Fatal(err)
	}
	return conditions.Get(b.Status.Conditions, placementv1beta1.ConditionUpsynced)
}

func TestHandlerMirrorsExclusivelyAndRemoves(t *testing.T) {
	ctx := context.Background()
	const ns = "upsync-app"
	h := newHandler(t)
	w1 := upsyncWork(t, "member-1", ns)
	upsyncWork(t, "member-2", ns)
	selected := map[string]string{"upsync": "true"}

	if err := h.Handle(ctx, "member-1", tunnel.Upsync{WorkName: "up-work", Object: configMapJSON(ns, "born", "1", selected)}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "born"}, cm); err != nil {
		t.Fatalf("no mirror: %v", err)
	}
	if cm.Labels[placementv1beta1.LabelUpsyncedFrom] != "member-1" || cm.Data["k"] != "1" || cm.Annotations[placementv1beta1.AnnotationUpsyncedWork] != "up-work" {
		t.Errorf("mirror = %+v, want data k=1 labelled from member-1", cm.ObjectMeta)
	}
	if c := upsynced(t, "member-1"); c == nil || c.Status != metav1.ConditionTrue || c.Reason != placementv1beta1.ReasonUpsynced {
		t.Errorf("member-1 Upsynced = %+v, want True", c)
	}

	// The same object from a second cluster is a conflict, not merged.
	if err := h.Handle(ctx, "member-2", tunnel.Upsync{WorkName: "up-work", Object: configMapJSON(ns, "born", "2", selected)}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "born"}, cm); err != nil || cm.Data["k"] != "1" {
		t.Errorf("the mirror changed after a second cluster sent it: %v %v", cm.Data, err)
	}
	if c := upsynced(t, "member-2"); c == nil || c.Reason != placementv1beta1.ReasonUpsyncConflict || !strings.Contains(c.Message, "already mirrored from cluster member-1") {
		t.Errorf("member-2 Upsynced = %+v, want False/UpsyncConflict naming member-1", c)
	}

	// Objects outside the placed namespaces or not selected are refused.
	for _, obj := range []json.RawMessage{configMapJSON("kube-system", "x", "1", selected), configMapJSON(ns, "unselected", "1", nil)} {
		if err := h.Handle(ctx, "member-1", tunnel.Upsync{WorkName: "up-work", Object: obj}); err != nil {
			t.Fatal(err)
		}
	}
	if c := upsynced(t, "member-1"); c == nil || c.Reason != placementv1beta1.ReasonUpsyncRefused {
		t.Errorf("member-1 Upsynced after refused objects = %+v, want UpsyncRefused", c)
	}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: "kube-system", Name: "x"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused object reached the hub: %v", err)
	}

	// A complete message without the object removes its mirror; unserved kinds are reported.
	if err := h.Handle(ctx, "member-1", tunnel.Upsync{WorkName: "up-work", Complete: true, Problems: []string{"upsync selector example.com/v1 Widget: not served"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "born"}, cm); !apierrors.IsNotFound(err) {
		t.Errorf("the mirror is still there after a complete message without it: %v", err)
	}
	if c := upsynced(t, "member-1"); c == nil || c.Reason != placementv1beta1.ReasonUpsyncNotServed || !strings.Contains(c.Message, "Widget") {
		t.Errorf("member-1 Upsynced = %+v, want UpsyncNotServed naming Widget", c)
	}

	// When the Work goes, its mirrors go.
	if err := h.Handle(ctx, "member-1", tunnel.Upsync{WorkName: "up-work", Object: configMapJSON(ns, "again", "1", selected)}); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: env.Client, Handler: h}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: w1.Namespace, Name: w1.Name}}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, w1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "again"}, cm); !apierrors.IsNotFound(err) {
		t.Errorf("the mirror is still there after its Work was deleted: %v", err)
	}
	if err := env.Client.Get(ctx, req.NamespacedName, &placementv1beta1.Work{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Work is kept after its mirrors were removed: %v", err)
	}
}

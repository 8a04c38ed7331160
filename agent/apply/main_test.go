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

package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// env is the test API server shared by the tests of this package; it plays the
// member cluster.
var env *testenv.Env

// dyn is a dynamic client of env.
var dyn dynamic.Interface

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, testenv.Options{MemberCluster: true}, func(e *testenv.Env) (err error) {
		env = e
		dyn, err = dynamic.NewForConfig(env.Config)
		return err
	}))
}

// testContext returns a context that logs to the test and ends with it.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return logr.NewContext(ctx, testr.NewWithOptions(t, testr.Options{Verbosity: 2}))
}

// newApplier returns an Applier of env that keeps its records in a namespace of its
// own, so that tests do not see each other's records.
func newApplier(t *testing.T, recordNamespace string) *Applier {
	t.Helper()
	a, err := New(env.Config, Options{Namespace: recordNamespace, EstablishTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("New() failed: %v", err)
	}
	return a
}

// eventually polls check until it returns nil, failing the test with its last error
// after the timeout.
func eventually(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		last = check()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("condition not met within %s: %v", timeout, last)
	}
}

// Builders of manifests and Works.

func manifestOf(t *testing.T, obj map[string]any) placementv1beta1.Manifest {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("failed to encode a manifest: %v", err)
	}
	return placementv1beta1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
}

func namespaceManifest(t *testing.T, name string) placementv1beta1.Manifest {
	return manifestOf(t, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}})
}

func configMapManifest(t *testing.T, namespace, name string, data map[string]any) placementv1beta1.Manifest {
	return manifestOf(t, map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"data":     data,
	})
}

func deploymentManifest(t *testing.T, namespace, name string, replicas int) placementv1beta1.Manifest {
	labels := map[string]any{"app": name}
	return manifestOf(t, map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "app", "image": "registry.example/app:1"},
				}},
			},
		},
	})
}

func serviceManifest(t *testing.T, namespace, name, typ string) placementv1beta1.Manifest {
	return manifestOf(t, map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"type":     typ,
			"selector": map[string]any{"app": name},
			"ports":    []any{map[string]any{"port": 80}},
		},
	})
}

func newWork(name string, generation int64, manifests ...placementv1beta1.Manifest) *placementv1beta1.Work {
	return &placementv1beta1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flotilla-member-1", Generation: generation},
		Spec:       placementv1beta1.WorkSpec{Workload: placementv1beta1.WorkloadTemplate{Manifests: manifests}},
	}
}

// Reading the member cluster.

var (
	configMapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespacesGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	servicesGVR    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

// getObject returns an object of the member, or nil if it does not exist.
func getObject(t *testing.T, gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := dyn.Resource(gvr).Namespace(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("failed to get %s %s/%s: %v", gvr.Resource, namespace, name, err)
	}
	return obj
}

func mustGetObject(t *testing.T, gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	obj := getObject(t, gvr, namespace, name)
	if obj == nil {
		t.Fatalf("%s %s/%s does not exist", gvr.Resource, namespace, name)
	}
	return obj
}

// gone reports an error unless the object does not exist or is being deleted (envtest
// runs no namespace controller, so namespaces never finish terminating).
func gone(gvr schema.GroupVersionResource, namespace, name string) func() error {
	return func() error {
		obj, err := dyn.Resource(gvr).Namespace(namespace).Get(context.Background(), name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		case obj.GetDeletionTimestamp() != nil:
			return nil
		default:
			return fmt.Errorf("%s %s/%s still exists", gvr.Resource, namespace, name)
		}
	}
}

// createNamespace creates a namespace for a test, as someone other than the agent.
func createNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("failed to create namespace %s: %v", name, err)
	}
}

// createConfigMap creates a ConfigMap as someone other than the agent.
func createConfigMap(t *testing.T, namespace, name string, data map[string]string, owners ...metav1.OwnerReference) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, OwnerReferences: owners}, Data: data}
	if err := env.Client.Create(context.Background(), cm, client.FieldOwner("someone-else")); err != nil {
		t.Fatalf("failed to create ConfigMap %s/%s: %v", namespace, name, err)
	}
}

// Summaries of statuses, to compare without times.

// conditionSummary is a condition as status/reason, such as "True/Applied".
func conditionSummary(conds []metav1.Condition, typ string) string {
	for _, c := range conds {
		if c.Type == typ {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return "missing"
}

type manifestSummary struct {
	ID        placementv1beta1.WorkResourceIdentifier
	Applied   string
	Available string
}

type statusSummary struct {
	Applied   string
	Available string
	Manifests []manifestSummary
}

func summarize(s placementv1beta1.WorkStatus) statusSummary {
	out := statusSummary{Applied: conditionSummary(s.Conditions, placementv1beta1.ConditionApplied), Available: conditionSummary(s.Conditions, placementv1beta1.ConditionAvailable)}
	for _, mc := range s.ManifestConditions {
		out.Manifests = append(out.Manifests, manifestSummary{
			ID:        mc.Identifier,
			Applied:   conditionSummary(mc.Conditions, placementv1beta1.ConditionApplied),
			Available: conditionSummary(mc.Conditions, placementv1beta1.ConditionAvailable),
		})
	}
	return out
}

func checkSummary(t *testing.T, want statusSummary, got placementv1beta1.WorkStatus) {
	t.Helper()
	if diff := cmp.Diff(want, summarize(got)); diff != "" {
		t.Errorf("status mismatch (-want +got):\n%s", diff)
	}
}

// condition returns a condition of a list, failing the test if there is none.
func condition(t *testing.T, conds []metav1.Condition, typ string) metav1.Condition {
	t.Helper()
	for _, c := range conds {
		if c.Type == typ {
			return c
		}
	}
	t.Fatalf("no %s condition in %v", typ, conds)
	return metav1.Condition{}
}

func id(ordinal int, group, version, kind, resource, namespace, name string) placementv1beta1.WorkResourceIdentifier {
	return placementv1beta1.WorkResourceIdentifier{Ordinal: ordinal, Group: group, Version: version, Kind: kind, Resource: resource, Namespace: namespace, Name: name}
}

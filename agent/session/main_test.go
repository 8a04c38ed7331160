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

package session_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// env is the member cluster of the tests.
var env *testenv.Env

// kube is a clientset of env.
var kube kubernetes.Interface

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, testenv.Options{MemberCluster: true}, func(e *testenv.Env) (err error) {
		env = e
		kube, err = kubernetes.NewForConfig(env.Config)
		return err
	}))
}

// testContext returns a context that logs to the test and ends with it.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return logr.NewContext(ctx, testr.NewWithOptions(t, testr.Options{Verbosity: 1}))
}

// createNode creates a node with the given allocatable (= capacity) CPU and
// memory.
func createNode(t *testing.T, name, providerID, cpu, memory string) {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	node, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		node, err = kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		t.Fatalf("failed to create node %s: %v", name, err)
	}
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(memory),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node.Status.Capacity, node.Status.Allocatable = resources, resources
	if _, err := kube.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("failed to set the status of node %s: %v", name, err)
	}
}

func configMapWork(t *testing.T, name, namespace, configMap string, data map[string]string) *placementv1beta1.Work {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": configMap, "namespace": namespace},
		"data":     data,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &placementv1beta1.Work{
		TypeMeta:   metav1.TypeMeta{APIVersion: placementv1beta1.GroupVersion.String(), Kind: "Work"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flotilla-member-member-1", Generation: 1},
		Spec: placementv1beta1.WorkSpec{Workload: placementv1beta1.WorkloadTemplate{
			Manifests: []placementv1beta1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}},
		}},
	}
}

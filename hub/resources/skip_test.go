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

package resources

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

func obj(apiVersion, kind, namespace, name string, extra map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range extra {
		u.Object[k] = v
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func TestSkipObject(t *testing.T) {
	owned := obj("v1", "ConfigMap", "app", "owned", nil)
	owned.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "u", Controller: ptr.To(true)}})
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		skip bool
	}{
		{"a plain ConfigMap is copied", obj("v1", "ConfigMap", "app", "settings", nil), false},
		{"the cluster's root CA ConfigMap is not", obj("v1", "ConfigMap", "app", "kube-root-ca.crt", nil), true},
		{"a service-account token is not", obj("v1", "Secret", "app", "tok", map[string]any{"type": "kubernetes.io/service-account-token"}), true},
		{"an opaque Secret is", obj("v1", "Secret", "app", "creds", map[string]any{"type": "Opaque"}), false},
		{"the default ServiceAccount is not", obj("v1", "ServiceAccount", "app", "default", nil), true},
		{"another ServiceAccount is", obj("v1", "ServiceAccount", "app", "builder", nil), false},
		{"an object a controller made is not", owned, true},
		{"kube-system is not", obj("v1", "Namespace", "", "kube-system", nil), true},
		{"a member's Work namespace is not", obj("v1", "Namespace", "", "flotilla-member-a", nil), true},
		{"any kube-* namespace is not", obj("v1", "Namespace", "", "kube-flannel", nil), true},
		{"an object in a kube-* namespace is not", obj("v1", "ConfigMap", "kube-flannel", "cfg", nil), true},
		{"flotilla-system is not", obj("v1", "Namespace", "", "flotilla-system", nil), true},
		{"an application namespace is", obj("v1", "Namespace", "", "app", nil), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, why := SkipObject(tc.obj); got != tc.skip {
				t.Errorf("SkipObject = %v (%s), want %v", got, why, tc.skip)
			}
		})
	}
}

func TestSanitizeDropsWhatEachClusterAllocates(t *testing.T) {
	svc := obj("v1", "Service", "app", "web", map[string]any{
		"spec":   map[string]any{"clusterIP": "10.0.0.1", "clusterIPs": []any{"10.0.0.1"}, "ports": []any{map[string]any{"port": int64(80), "nodePort": int64(30080)}}},
		"status": map[string]any{"loadBalancer": map[string]any{}},
	})
	svc.SetResourceVersion("42")
	svc.SetUID("uid")
	svc.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}", "keep": "me"})
	got := Sanitize(svc)
	if _, found, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "clusterIP"); found {
		t.Error("clusterIP kept")
	}
	ports, _, _ := unstructured.NestedSlice(got.Object, "spec", "ports")
	if _, ok := ports[0].(map[string]any)["nodePort"]; ok {
		t.Error("nodePort kept")
	}
	if got.GetResourceVersion() != "" || got.GetUID() != "" {
		t.Error("server metadata kept")
	}
	if _, ok := got.Object["status"]; ok {
		t.Error("status kept")
	}
	if a := got.GetAnnotations(); a["keep"] != "me" || len(a) != 1 {
		t.Errorf("annotations = %v", a)
	}
	if svc.GetResourceVersion() != "42" {
		t.Error("Sanitize changed its input")
	}
}

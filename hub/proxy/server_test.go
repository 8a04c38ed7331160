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

package proxy

import (
	"encoding/base64"
	"testing"

	"github.com/go-logr/logr/testr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func TestServerWritesItsCAIntoTheAPIService(t *testing.T) {
	ctx := t.Context()
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": APIServiceName},
		"spec": map[string]any{
			"group": "proxy.flotilla.io", "version": "v1beta1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"service": map[string]any{"namespace": "flotilla-system", "name": "flotilla-hub", "port": int64(8445)},
		},
	}}
	if err := env.Client.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, svc) })
	s := &Server{Client: env.Client, Log: testr.New(t)}

	for _, ca := range [][]byte{[]byte("first CA"), []byte("first CA"), []byte("rotated CA")} {
		if err := s.writeCABundle(ctx, ca); err != nil {
			t.Fatalf("writeCABundle: %v", err)
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(svc.GroupVersionKind())
		if err := env.Client.Get(ctx, types.NamespacedName{Name: APIServiceName}, got); err != nil {
			t.Fatal(err)
		}
		if b, _, _ := unstructured.NestedString(got.Object, "spec", "caBundle"); b != base64.StdEncoding.EncodeToString(ca) {
			t.Errorf("caBundle = %q, want %q", b, ca)
		}
	}

	// Without an APIService there is nothing to write, and no error.
	if err := env.Client.Delete(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if err := s.writeCABundle(ctx, []byte("x")); err != nil {
		t.Errorf("writeCABundle without the APIService: %v", err)
	}
}

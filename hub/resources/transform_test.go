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

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestCacheTransformKeepsWhatSelectionReads(t *testing.T) {
	withMeta := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		u.SetUID("uid-1")
		u.SetResourceVersion("7")
		u.SetLabels(map[string]string{"team": "a"})
		u.SetAnnotations(map[string]string{"note": "long text"})
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"manager": "kubectl"}}, "metadata", "managedFields")
		return u
	}
	identity := func(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
		u := obj(apiVersion, kind, namespace, name, nil)
		u.SetUID("uid-1")
		u.SetResourceVersion("7")
		u.SetLabels(map[string]string{"team": "a"})
		return u
	}
	data := map[string]any{"data": map[string]any{"key": "value"}}
	cases := []struct {
		name string
		in   *unstructured.Unstructured
		want *unstructured.Unstructured
	}{
		{"an object that may be selected loses only its managedFields",
			withMeta(obj("v1", "ConfigMap", "app", "settings", data)),
			func() *unstructured.Unstructured {
				u := withMeta(obj("v1", "ConfigMap", "app", "settings", data))
				unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
				return u
			}()},
		{"a Namespace that may be selected keeps its spec and annotations",
			withMeta(obj("v1", "Namespace", "", "app", map[string]any{"spec": map[string]any{"finalizers": []any{"kubernetes"}}})),
			func() *unstructured.Unstructured {
				u := withMeta(obj("v1", "Namespace", "", "app", map[string]any{"spec": map[string]any{"finalizers": []any{"kubernetes"}}}))
				unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
				return u
			}()},
		{"a member's Namespace keeps its identity and labels",
			withMeta(obj("v1", "Namespace", "", "flotilla-member-m1", map[string]any{"spec": map[string]any{"finalizers": []any{"kubernetes"}}})),
			identity("v1", "Namespace", "", "flotilla-member-m1")},
		{"an object in a member's namespace keeps its identity",
			withMeta(obj("v1", "ConfigMap", "flotilla-member-m1", "kube-root-ca.crt", data)),
			identity("v1", "ConfigMap", "flotilla-member-m1", "kube-root-ca.crt")},
		{"a bootstrap token Secret keeps its identity",
			withMeta(obj("v1", "Secret", "flotilla-system", "bootstrap-token-abc", data)),
			identity("v1", "Secret", "flotilla-system", "bootstrap-token-abc")},
		{"an object in kube-system keeps its identity",
			withMeta(obj("apps/v1", "Deployment", "kube-system", "coredns", map[string]any{"spec": map[string]any{"replicas": int64(2)}})),
			identity("apps/v1", "Deployment", "kube-system", "coredns")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cacheTransform(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got.(*unstructured.Unstructured).Object, tc.want.Object) {
				t.Errorf("cacheTransform =\n%v\nwant\n%v", got.(*unstructured.Unstructured).Object, tc.want.Object)
			}
			if skipIn, _ := SkipObject(tc.in); skipIn {
				if skipOut, _ := SkipObject(got.(*unstructured.Unstructured)); !skipOut {
					t.Errorf("the cached object is no longer skipped")
				}
			}
		})
	}
	t.Run("what is not an object passes as it is", func(t *testing.T) {
		if got, err := cacheTransform("x"); err != nil || got != "x" {
			t.Errorf("cacheTransform(\"x\") = %v, %v", got, err)
		}
	})
}

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

package v1beta1

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestPlacedNamespaces(t *testing.T) {
	raw := func(obj map[string]any) Manifest {
		b, _ := json.Marshal(obj)
		return Manifest{RawExtension: runtime.RawExtension{Raw: b}}
	}
	w := &Work{}
	w.Spec.Workload.Manifests = []Manifest{
		raw(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "b"}}),
		raw(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "namespace": "a"}}),
		raw(map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "r"}}),
		raw(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "y", "namespace": "b"}}),
		{RawExtension: runtime.RawExtension{Raw: []byte("{not json")}},
	}
	if got := w.PlacedNamespaces(); strings.Join(got, ",") != "a,b" {
		t.Errorf("PlacedNamespaces() = %v, want [a b]", got)
	}
}

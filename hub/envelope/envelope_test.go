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

package envelope

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func configMap(annotated bool, data map[string]string) []byte {
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "env", "namespace": "app"}, "data": data}
	if annotated {
		obj["metadata"].(map[string]any)["annotations"] = map[string]any{"placement.flotilla.io/envelope-configmap": "true"}
	}
	raw, _ := json.Marshal(obj)
	return raw
}

const quota = "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\n  namespace: app\nspec:\n  hard:\n    pods: \"5\"\n"

func TestUnwrap(t *testing.T) {
	tests := []struct {
		name      string
		manifests [][]byte
		wantKinds []string
		wantErr   string
	}{
		{
			name:      "a plain ConfigMap is kept",
			manifests: [][]byte{configMap(false, map[string]string{"q": quota})},
			wantKinds: []string{"ConfigMap"},
		},
		{
			name: "an envelope is replaced by its manifests in key order, YAML or JSON",
			manifests: [][]byte{[]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}`),
				configMap(true, map[string]string{"b-quota": quota, "a-role": `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"r"}}`})},
			wantKinds: []string{"Namespace", "ClusterRole", "ResourceQuota"},
		},
		{
			name: "a ClusterResourceEnvelope carries objects",
			manifests: [][]byte{[]byte(`{"apiVersion":"placement.flotilla.io/v1beta1","kind":"ClusterResourceEnvelope","metadata":{"name":"e"},
				"data":{"webhook":{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"w"}}}}`)},
			wantKinds: []string{"ValidatingWebhookConfiguration"},
		},
		{
			name: "a ResourceEnvelope puts its objects in its namespace",
			manifests: [][]byte{[]byte(`{"apiVersion":"placement.flotilla.io/v1beta1","kind":"ResourceEnvelope","metadata":{"name":"e","namespace":"app"},
				"data":{"quota":{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"}}}}`)},
			wantKinds: []string{"ResourceQuota"},
		},
		{
			name: "a ResourceEnvelope refuses an object of another namespace",
			manifests: [][]byte{[]byte(`{"apiVersion":"placement.flotilla.io/v1beta1","kind":"ResourceEnvelope","metadata":{"name":"e","namespace":"app"},
				"data":{"quota":{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q","namespace":"other"}}}}`)},
			wantErr: `ResourceEnvelope app/e key "quota": ResourceQuota is in namespace other`,
		},
		{
			name:      "a value that is not YAML names the envelope and the key",
			manifests: [][]byte{configMap(true, map[string]string{"bad": "kind: [unclosed"})},
			wantErr:   `envelope ConfigMap app/env key "bad": not a YAML or JSON manifest`,
		},
		{
			name:      "a value without a kind names the envelope and the key",
			manifests: [][]byte{configMap(true, map[string]string{"nokind": "metadata:\n  name: x\n"})},
			wantErr:   `envelope ConfigMap app/env key "nokind": not a Kubernetes object`,
		},
		{
			name:      "a value without a name is refused",
			manifests: [][]byte{configMap(true, map[string]string{"noname": "apiVersion: v1\nkind: Secret\n"})},
			wantErr:   `key "noname": Secret has no metadata.name`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Unwrap(tt.manifests)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Unwrap() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, m := range got {
				var o struct{ Kind string }
				if err := json.Unmarshal(m, &o); err != nil {
					t.Fatal(err)
				}
				kinds = append(kinds, o.Kind)
			}
			if diff := cmp.Diff(tt.wantKinds, kinds); diff != "" {
				t.Errorf("kinds (-want +got):\n%s", diff)
			}
		})
	}
}

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
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// installProfile creates the RBAC objects of manifests/agent/least-privilege.
func installProfile(t *testing.T) {
	t.Helper()
	for _, file := range []string{"rbac.yaml", "cluster-scoped-kinds.yaml"} {
		data, err := os.ReadFile("../../manifests/agent/least-privilege/" + file)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			obj := &unstructured.Unstructured{}
			if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("decode %s: %v", file, err)
			}
			if len(obj.Object) == 0 {
				continue
			}
			if err := env.Client.Create(context.Background(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("create %s %s from %s: %v", obj.GetKind(), obj.GetName(), file, err)
			}
		}
	}
}

// With the least-privilege profile the agent applies placed namespaces and what is
// in them, and the cluster-scoped kinds the profile lists; anything else fails with
// the API server's refusal, reported per manifest.
func TestLeastPrivilegeProfileAppliesPlacedNamespacesOnly(t *testing.T) {
	ctx := testContext(t)
	createNamespace(t, "flotilla-system")
	createNamespace(t, "lp-existing")
	installProfile(t)
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:flotilla-system:flotilla-agent"}
	a, err := New(cfg, Options{
		Namespace:      "flotilla-system",
		LeastPrivilege: &LeastPrivilege{ClusterRole: "flotilla-agent-namespaced", ServiceAccountNamespace: "flotilla-system", ServiceAccountName: "flotilla-agent"},
	})
	if err != nil {
		t.Fatal(err)
	}
	work := newWork("least-privilege", 1,
		namespaceManifest(t, "lp-app"),
		configMapManifest(t, "lp-app", "cm", map[string]any{"k": "v"}),
		configMapManifest(t, "lp-existing", "cm", map[string]any{"k": "v"}),
		manifestOf(t, map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "lp-role"}, "rules": []any{}}),
		manifestOf(t, map[string]any{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": map[string]any{"name": "lp-priority"}, "value": 10}),
	)
	status, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	want := []string{"True/Applied", "True/Applied", "False/ApplyFailed", "False/ApplyFailed", "True/Applied"}
	for i, w := range want {
		c := condition(t, status.ManifestConditions[i].Conditions, placementv1beta1.ConditionApplied)
		if got := string(c.Status) + "/" + c.Reason; got != w {
			t.Errorf("manifest %d: Applied = %s (%s), want %s", i, got, c.Message, w)
		}
		if w == "False/ApplyFailed" && !strings.Contains(c.Message, "forbidden") {
			t.Errorf("manifest %d: message %q does not carry the API server's refusal", i, c.Message)
		}
	}
	if rb := getObject(t, roleBindingGVR, "lp-app", GrantRoleBindingName); rb == nil {
		t.Errorf("no RoleBinding %s in the placed namespace", GrantRoleBindingName)
	}
	if err := a.Remove(ctx, "least-privilege"); err != nil {
		t.Errorf("Remove() failed: %v", err)
	}
}

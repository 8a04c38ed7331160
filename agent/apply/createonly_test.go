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
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

func createOnlyNamespaceManifest(t *testing.T, name string, labels map[string]any) placementv1beta1.Manifest {
	return manifestOf(t, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
		"name": name, "labels": labels, "annotations": map[string]any{placementv1beta1.AnnotationCreateOnly: "true"},
	}})
}

// A create-only Namespace (the one a ResourcePlacement brings) is created when the
// member lacks it, left exactly as it is when the member has it, never made the
// Work's, and stays when the Work is removed.
func TestCreateOnlyManifestsAreCreatedIfMissingAndNeverChangedOrRemoved(t *testing.T) {
	ctx := testContext(t)
	// With the watch (OnChange), as the agent runs: it sees only objects the agent
	// applied, never a create-only one.
	a, err := New(env.Config, Options{Namespace: "records-createonly", EstablishTimeout: 30 * time.Second, OnChange: func(string) {}})
	if err != nil {
		t.Fatalf("New() failed: %v", err)
	}
	t.Cleanup(a.Close)
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: "co-existing", Labels: map[string]string{"owner": "member"}}}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]any{"team": "a"}
	work := newWork("createonly", 1,
		createOnlyNamespaceManifest(t, "co-new", labels),
		configMapManifest(t, "co-new", "settings", map[string]any{"k": "v"}),
		createOnlyNamespaceManifest(t, "co-existing", labels),
		configMapManifest(t, "co-existing", "settings", map[string]any{"k": "v"}),
	)
	status, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	if c := condition(t, status.Conditions, placementv1beta1.ConditionApplied); c.Status != metav1.ConditionTrue {
		t.Fatalf("Applied is %s: %s", c.Status, c.Message)
	}
	created := mustGetObject(t, namespacesGVR, "", "co-new")
	if created.GetLabels()["team"] != "a" {
		t.Errorf("the created namespace has labels %v, want team=a", created.GetLabels())
	}
	existing := mustGetObject(t, namespacesGVR, "", "co-existing")
	if existing.GetLabels()["owner"] != "member" || existing.GetLabels()["team"] != "" {
		t.Errorf("the member's own namespace was changed: labels %v", existing.GetLabels())
	}
	for _, ns := range []string{"co-new", "co-existing"} {
		obj := mustGetObject(t, namespacesGVR, "", ns)
		if _, ok := obj.GetAnnotations()[AnnotationWork]; ok {
			t.Errorf("namespace %s carries the Work's annotation: the Work would own it", ns)
		}
		if _, ok := obj.GetAnnotations()[placementv1beta1.AnnotationCreateOnly]; ok {
			t.Errorf("namespace %s carries the create-only annotation", ns)
		}
	}
	// The status (from the watch where it can answer) finds both namespaces.
	eventually(t, 20*time.Second, func() error {
		st, err := a.Status(ctx, work)
		if err != nil {
			return err
		}
		for _, mc := range st.ManifestConditions {
			if mc.Identifier.Kind != "Namespace" {
				continue
			}
			if c := conditions.Get(mc.Conditions, placementv1beta1.ConditionAvailable); c == nil || c.Status != metav1.ConditionTrue {
				return fmt.Errorf("namespace %s: Available is %+v", mc.Identifier.Name, c)
			}
		}
		return nil
	})
	// Applying the unchanged Work again keeps everything applied.
	status, err = a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("second Apply() failed: %v", err)
	}
	if c := condition(t, status.Conditions, placementv1beta1.ConditionApplied); c.Status != metav1.ConditionTrue {
		t.Fatalf("Applied is %s after a second apply: %s", c.Status, c.Message)
	}

	if err := a.Remove(ctx, "createonly"); err != nil {
		t.Fatalf("Remove() failed: %v", err)
	}
	eventually(t, 10*time.Second, gone(configMapsGVR, "co-new", "settings"))
	eventually(t, 10*time.Second, gone(configMapsGVR, "co-existing", "settings"))
	for _, ns := range []string{"co-new", "co-existing"} {
		if obj := getObject(t, namespacesGVR, "", ns); obj == nil || obj.GetDeletionTimestamp() != nil {
			t.Errorf("namespace %s was removed with the Work", ns)
		}
	}
}

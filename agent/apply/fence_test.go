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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func replicasOf(t *testing.T, ns, name string) int64 {
	t.Helper()
	obj := mustGetObject(t, deploymentsGVR, ns, name)
	n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	return n
}

// ScaleToZero scales the Work's Deployment to zero and leaves its other
// objects; the next Apply of the same spec restores the replicas.
func TestFenceScalesTheWorkloadsToZeroAndTheNextApplyRestoresThem(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-fence-scale")
	const ns = "fence-scale"
	work := newWork("fence-scale", 1,
		namespaceManifest(t, ns),
		configMapManifest(t, ns, "settings", map[string]any{"color": "blue"}),
		deploymentManifest(t, ns, "web", 3),
	)
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	fenced, err := a.Fence(ctx, "fence-scale", placementv1beta1.FencingScaleToZero)
	if err != nil {
		t.Fatalf("Fence() failed: %v", err)
	}
	if len(fenced.Stopped) != 1 || fenced.Stopped[0].Kind != "Deployment" {
		t.Errorf("Fence() stopped %v, want the Deployment only", fenced.Stopped)
	}
	if got := replicasOf(t, ns, "web"); got != 0 {
		t.Errorf("replicas after fencing = %d, want 0", got)
	}
	mustGetObject(t, configMapsGVR, ns, "settings")
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() after fencing failed: %v", err)
	}
	if got := replicasOf(t, ns, "web"); got != 3 {
		t.Errorf("replicas after the hub's Work was applied again = %d, want 3", got)
	}
}

// Remove deletes the objects the Work created but not its Namespace, nor an
// object it took over; the next Apply creates them again.
func TestFenceRemovesOnlyWhatTheWorkCreated(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-fence-remove")
	const ns = "fence-remove"
	// An object that exists before the Work: the Work takes it over.
	if _, err := dyn.Resource(namespacesGVR).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(configMapsGVR).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "existing"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	work := newWork("fence-remove", 1,
		namespaceManifest(t, ns),
		configMapManifest(t, ns, "existing", map[string]any{"color": "red"}),
		deploymentManifest(t, ns, "web", 2),
	)
	work.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverAlways}
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	fenced, err := a.Fence(ctx, "fence-remove", placementv1beta1.FencingRemove)
	if err != nil {
		t.Fatalf("Fence() failed: %v", err)
	}
	if len(fenced.Stopped) != 1 || fenced.Stopped[0].Kind != "Deployment" {
		t.Errorf("Fence() stopped %v, want the Deployment only", fenced.Stopped)
	}
	eventually(t, 10*time.Second, gone(deploymentsGVR, ns, "web"))
	mustGetObject(t, configMapsGVR, ns, "existing")
	mustGetObject(t, namespacesGVR, "", ns)
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() after fencing failed: %v", err)
	}
	if got := replicasOf(t, ns, "web"); got != 2 {
		t.Errorf("replicas after the hub's Work was applied again = %d, want 2", got)
	}
}

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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Two Works apply one ConfigMap (co-owned); the later one's annotation is on
// it. When the ConfigMap is deleted on the member, the earlier Work is woken
// too, so that it applies the object again or reports it gone instead of
// keeping Applied/Available True with nothing there.
func TestDeletingASharedObjectWakesTheWorkWithoutItsAnnotation(t *testing.T) {
	ctx := testContext(t)
	a, changed := watchingApplier(t, "records-watch-shared")
	const ns = "watch-shared"
	createNamespace(t, ns)
	coOwned := &placementv1beta1.ApplyStrategy{AllowCoOwnership: true, WhenToTakeOver: placementv1beta1.WhenToTakeOverAlways}
	first := newWork("shared-first", 1, configMapManifest(t, ns, "settings", map[string]any{"k": "v"}))
	first.Spec.ApplyStrategy = coOwned
	second := newWork("shared-second", 1, configMapManifest(t, ns, "settings", map[string]any{"k": "v"}))
	second.Spec.ApplyStrategy = coOwned
	for _, w := range []*placementv1beta1.Work{first, second} {
		if _, err := a.Apply(ctx, w); err != nil {
			t.Fatalf("Apply(%s) failed: %v", w.Name, err)
		}
	}
	if got := mustGetObject(t, configMapsGVR, ns, "settings").GetAnnotations()[AnnotationWork]; got != second.Name {
		t.Fatalf("the shared ConfigMap has %s=%q, want %q", AnnotationWork, got, second.Name)
	}
	changed().Clear()
	if err := dyn.Resource(configMapsGVR).Namespace(ns).Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForChange(t, changed, second.Name)
	waitForChange(t, changed, first.Name)
}

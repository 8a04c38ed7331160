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

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// withProvenance stamps a manifest as the hub's work generator does.
func withProvenance(t *testing.T, m placementv1beta1.Manifest, placement, index string) placementv1beta1.Manifest {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(m.Raw); err != nil {
		t.Fatal(err)
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[placementv1beta1.AnnotationHub] = "test-hub"
	ann[placementv1beta1.AnnotationPlacement] = placement
	ann[placementv1beta1.AnnotationResourceIndex] = index
	obj.SetAnnotations(ann)
	return manifestOf(t, obj.Object)
}

// provenanceOf returns the provenance annotations an object carries.
func provenanceOf(t *testing.T, gvr schema.GroupVersionResource, namespace, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range mustGetObject(t, gvr, namespace, name).GetAnnotations() {
		for _, p := range placementv1beta1.ProvenanceAnnotations {
			if k == p {
				out[k] = v
			}
		}
	}
	return out
}

func wantProvenance(placement, index, work string) map[string]string {
	return map[string]string{
		placementv1beta1.AnnotationHub:           "test-hub",
		placementv1beta1.AnnotationPlacement:     placement,
		placementv1beta1.AnnotationResourceIndex: index,
		placementv1beta1.AnnotationWork:          work,
	}
}

func TestAppliedObjectsCarryTheProvenanceAndFollowANewResourceIndexWithoutADrift(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-provenance")
	const ns, crp = "provenance", "ClusterResourcePlacement/web"
	work := func(generation int64, index string) *placementv1beta1.Work {
		w := newWork("web-work", generation,
			withProvenance(t, namespaceManifest(t, ns), crp, index),
			withProvenance(t, configMapManifest(t, ns, "settings", map[string]any{"color": "blue"}), crp, index),
		)
		// Any drift would turn Applied False (FoundDrifts) rather than be corrected.
		w.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{
			WhenToApply: placementv1beta1.WhenToApplyIfNotDrifted, ComparisonOption: placementv1beta1.FullComparison,
		}
		return w
	}
	drifts := testutil.ToFloat64(driftsTotal.WithLabelValues(driftReported)) + testutil.ToFloat64(driftsTotal.WithLabelValues(driftCorrected))

	for _, step := range []struct {
		name       string
		generation int64
		index      string
	}{
		{name: "the first snapshot", generation: 1, index: "0"},
		{name: "a new snapshot with the same content", generation: 2, index: "1"},
	} {
		status, err := a.Apply(ctx, work(step.generation, step.index))
		if err != nil {
			t.Fatalf("%s: Apply() failed: %v", step.name, err)
		}
		if got := conditionSummary(status.Conditions, placementv1beta1.ConditionApplied); got != "True/Applied" {
			t.Errorf("%s: Work Applied = %s, want True/Applied", step.name, got)
		}
		for i, mc := range status.ManifestConditions {
			if mc.DriftDetails != nil || mc.DriftCorrections != nil {
				t.Errorf("%s: manifest %d reports a drift: %+v %+v", step.name, i, mc.DriftDetails, mc.DriftCorrections)
			}
		}
		want := wantProvenance(crp, step.index, "web-work")
		if diff := cmp.Diff(want, provenanceOf(t, namespacesGVR, "", ns)); diff != "" {
			t.Errorf("%s: provenance of the Namespace (-want +got):\n%s", step.name, diff)
		}
		if diff := cmp.Diff(want, provenanceOf(t, configMapsGVR, ns, "settings")); diff != "" {
			t.Errorf("%s: provenance of the ConfigMap (-want +got):\n%s", step.name, diff)
		}
	}
	if got := testutil.ToFloat64(driftsTotal.WithLabelValues(driftReported)) + testutil.ToFloat64(driftsTotal.WithLabelValues(driftCorrected)) - drifts; got != 0 {
		t.Errorf("drifts counted: %v, want 0", got)
	}
}

func TestAnUnchangedWorkRestampsAnObjectWhoseProvenanceWasChangedOnTheMember(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-provenance-edit")
	const ns, rp = "provenance-edit", "ResourcePlacement/provenance-edit/web"
	createNamespace(t, ns)
	work := newWork("rp-work", 1, withProvenance(t, configMapManifest(t, ns, "settings", nil), rp, "7"))
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	patch := []byte(`{"metadata":{"annotations":{"placement.flotilla.io/resource-index":"6"}}}`)
	if _, err := dyn.Resource(configMapsGVR).Namespace(ns).Patch(ctx, "settings", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	status, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("second Apply() failed: %v", err)
	}
	if diff := cmp.Diff(wantProvenance(rp, "7", "rp-work"), provenanceOf(t, configMapsGVR, ns, "settings")); diff != "" {
		t.Errorf("provenance after the second apply (-want +got):\n%s", diff)
	}
	if c := status.ManifestConditions[0].DriftCorrections; c != nil {
		t.Errorf("restamping the provenance counted as a drift: %+v", c)
	}
}

func TestProvenanceIsNeitherADifferenceNorInTheWayOfATakeOver(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-provenance-diff")
	const ns, crp = "provenance-diff", "ClusterResourcePlacement/web"
	createNamespace(t, ns)
	createConfigMap(t, ns, "reported", map[string]string{"k": "v"})
	createConfigMap(t, ns, "taken", map[string]string{"k": "v"})

	diffWork := newWork("diff-work", 1, withProvenance(t, configMapManifest(t, ns, "reported", map[string]any{"k": "v"}), crp, "0"))
	diffWork.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeReportDiff}
	status, err := a.Apply(ctx, diffWork)
	if err != nil {
		t.Fatalf("Apply(ReportDiff) failed: %v", err)
	}
	if d := status.ManifestConditions[0].DiffDetails; d != nil {
		t.Errorf("ReportDiff reports the provenance as a difference: %+v", d)
	}

	takeWork := newWork("take-work", 1, withProvenance(t, configMapManifest(t, ns, "taken", map[string]any{"k": "v"}), crp, "0"))
	takeWork.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverIfNoDiff}
	status, err = a.Apply(ctx, takeWork)
	if err != nil {
		t.Fatalf("Apply(IfNoDiff) failed: %v", err)
	}
	if got := conditionSummary(status.ManifestConditions[0].Conditions, placementv1beta1.ConditionApplied); got != "True/Applied" {
		t.Errorf("take-over IfNoDiff of an object that differs only in provenance: Applied = %s, want True/Applied", got)
	}
	if diff := cmp.Diff(wantProvenance(crp, "0", "take-work"), provenanceOf(t, configMapsGVR, ns, "taken")); diff != "" {
		t.Errorf("provenance of the object taken over (-want +got):\n%s", diff)
	}
}

func TestAnAbandonedObjectLosesItsProvenance(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-provenance-abandon")
	const ns = "provenance-abandon"
	createNamespace(t, ns)
	work := newWork("abandon-work", 1, withProvenance(t, configMapManifest(t, ns, "kept", nil), "ClusterResourcePlacement/web", "0"))
	work.Spec.DeleteStrategy = &placementv1beta1.DeleteStrategy{PropagationPolicy: placementv1beta1.DeletePropagationPolicyAbandon}
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	if err := a.Remove(ctx, "abandon-work"); err != nil {
		t.Fatalf("Remove() failed: %v", err)
	}
	if diff := cmp.Diff(map[string]string{}, provenanceOf(t, configMapsGVR, ns, "kept")); diff != "" {
		t.Errorf("provenance of the abandoned object (-want +got):\n%s", diff)
	}
}

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
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// setDeploymentStatus writes the status a deployment controller would write when
// available of the Deployment's replicas are available (envtest runs no controllers).
func setDeploymentStatus(t *testing.T, namespace, name string, available int32) {
	t.Helper()
	ctx := context.Background()
	var d appsv1.Deployment
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &d); err != nil {
		t.Fatalf("failed to get Deployment %s/%s: %v", namespace, name, err)
	}
	replicas := *d.Spec.Replicas
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            replicas,
		UpdatedReplicas:     replicas,
		ReadyReplicas:       available,
		AvailableReplicas:   available,
		UnavailableReplicas: replicas - available,
	}
	if err := env.Client.Status().Update(ctx, &d); err != nil {
		t.Fatalf("failed to write the status of Deployment %s/%s: %v", namespace, name, err)
	}
}

func TestApplyAppliesEveryManifestWithTheNamespaceFirstAndTracksAvailability(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-basic")
	const ns = "basic"
	// The Namespace is listed last: the others would fail without it.
	work := newWork("basic", 1,
		configMapManifest(t, ns, "settings", map[string]any{"color": "blue"}),
		deploymentManifest(t, ns, "web", 3),
		namespaceManifest(t, ns),
	)

	status, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	checkSummary(t, statusSummary{
		Applied:   "True/Applied",
		Available: "False/NotAvailableYet",
		Manifests: []manifestSummary{
			{ID: id(0, "", "v1", "ConfigMap", "configmaps", ns, "settings"), Applied: "True/Applied", Available: "True/Available"},
			{ID: id(1, "apps", "v1", "Deployment", "deployments", ns, "web"), Applied: "True/Applied", Available: "False/NotAvailableYet"},
			{ID: id(2, "", "v1", "Namespace", "namespaces", "", ns), Applied: "True/Applied", Available: "True/Available"},
		},
	}, status)
	for _, c := range status.Conditions {
		if c.ObservedGeneration != 1 {
			t.Errorf("condition %s has observedGeneration %d, want 1", c.Type, c.ObservedGeneration)
		}
	}
	if got, want := condition(t, status.Conditions, placementv1beta1.ConditionApplied).Message, "all 3 manifests are applied"; got != want {
		t.Errorf("Applied message = %q, want %q", got, want)
	}
	if got, want := condition(t, status.ManifestConditions[1].Conditions, placementv1beta1.ConditionAvailable).Message, "the controller has not observed generation 1 yet (observed 0)"; got != want {
		t.Errorf("Available message of the Deployment = %q, want %q", got, want)
	}

	for _, o := range []*unstructured.Unstructured{
		mustGetObject(t, namespacesGVR, "", ns),
		mustGetObject(t, configMapsGVR, ns, "settings"),
		mustGetObject(t, deploymentsGVR, ns, "web"),
	} {
		if got := o.GetAnnotations()[AnnotationWork]; got != "basic" {
			t.Errorf("%s %s has annotation %s=%q, want %q", o.GetKind(), o.GetName(), AnnotationWork, got, "basic")
		}
	}

	// The Deployment makes progress: 2 of 3, then 3 of 3 replicas available.
	setDeploymentStatus(t, ns, "web", 2)
	status, err = a.Status(ctx, work)
	if err != nil {
		t.Fatalf("Status() failed: %v", err)
	}
	if got := conditionSummary(status.Conditions, placementv1beta1.ConditionAvailable); got != "False/NotAvailableYet" {
		t.Errorf("Work Available = %s, want False/NotAvailableYet", got)
	}
	wantMsg := "1 of 3 manifests is not available yet: Deployment.apps basic/web (manifest 1): 2/3 replicas available, 3/3 updated, 1 unavailable"
	if got := condition(t, status.Conditions, placementv1beta1.ConditionAvailable).Message; got != wantMsg {
		t.Errorf("Work Available message = %q, want %q", got, wantMsg)
	}

	setDeploymentStatus(t, ns, "web", 3)
	eventually(t, 10*time.Second, func() error {
		status, err = a.Status(ctx, work)
		if err != nil {
			return err
		}
		if got := conditionSummary(status.Conditions, placementv1beta1.ConditionAvailable); got != "True/Available" {
			return fmt.Errorf("work Available = %s", got)
		}
		return nil
	})
	if got := conditionSummary(status.ManifestConditions[1].Conditions, placementv1beta1.ConditionAvailable); got != "True/Available" {
		t.Errorf("Deployment Available = %s, want True/Available", got)
	}
}

func TestApplyUpdatesChangedManifestsAndDeletesThoseNoLongerListed(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-update")
	const ns = "update"
	work := newWork("update", 1,
		namespaceManifest(t, ns),
		configMapManifest(t, ns, "settings", map[string]any{"color": "blue"}),
		configMapManifest(t, ns, "extra", map[string]any{"k": "v"}),
	)
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}

	// Change the ConfigMap's data.
	work = newWork("update", 2,
		namespaceManifest(t, ns),
		configMapManifest(t, ns, "settings", map[string]any{"color": "green", "size": "L"}),
		configMapManifest(t, ns, "extra", map[string]any{"k": "v"}),
	)
	status, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() of the changed Work failed: %v", err)
	}
	if got := conditionSummary(status.Conditions, placementv1beta1.ConditionApplied); got != "True/Applied" {
		t.Errorf("Work Applied = %s, want True/Applied", got)
	}
	data, _, _ := unstructured.NestedStringMap(mustGetObject(t, configMapsGVR, ns, "settings").Object, "data")
	if diff := cmp.Diff(map[string]string{"color": "green", "size": "L"}, data); diff != "" {
		t.Errorf("ConfigMap data mismatch (-want +got):\n%s", diff)
	}

	// Drop a manifest.
	removed := testutil.ToFloat64(manifestsRemovedTotal)
	work = newWork("update", 3,
		namespaceManifest(t, ns),
		configMapManifest(t, ns, "settings", map[string]any{"color": "green", "size": "L"}),
	)
	status, err = a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() of the shrunk Work failed: %v", err)
	}
	if len(status.ManifestConditions) != 2 {
		t.Errorf("status has %d manifest conditions, want 2", len(status.ManifestConditions))
	}
	if obj := getObject(t, configMapsGVR, ns, "extra"); obj != nil {
		t.Errorf("the ConfigMap the Work no longer lists still exists")
	}
	if got := testutil.ToFloat64(manifestsRemovedTotal) - removed; got != 1 {
		t.Errorf("flotilla_agent_manifests_removed_total grew by %v, want 1", got)
	}
	rec, err := a.getRecord(ctx, "update")
	if err != nil {
		t.Fatal(err)
	}
	want := &Record{
		WorkName: "update", Hash: SpecHash(work), DeletePolicy: placementv1beta1.DeletePropagationPolicyDelete, TakenOverPolicy: placementv1beta1.TakenOverPolicyRelease, AllApplied: true,
		Applied: []ObjectRef{
			{Version: "v1", Kind: "Namespace", Resource: "namespaces", Name: ns, Created: true},
			{Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: ns, Name: "settings", Created: true},
		},
		Work: recordedWork(work),
	}
	// The UIDs are the objects' own: created by this Work, so recorded.
	if diff := cmp.Diff(want, rec, cmpopts.IgnoreFields(ObjectRef{}, "UID")); diff != "" {
		t.Errorf("record mismatch (-want +got):\n%s", diff)
	}
}

func TestApplyReportsManifestsThatCannotApplyAndAppliesTheOthers(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-failing")
	const ns = "failing"
	createNamespace(t, ns)
	bogusService := serviceManifest(t, ns, "bad", "Bogus")
	work := newWork("failing", 1,
		bogusService,
		manifestOf(t, map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g", "namespace": ns}}),
		configMapManifest(t, ns, "fine", map[string]any{"k": "v"}),
		placementv1beta1.Manifest{},
	)

	status, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	checkSummary(t, statusSummary{
		Applied:   "False/ApplyFailed",
		Available: "Unknown/NotApplied",
		Manifests: []manifestSummary{
			{ID: id(0, "", "v1", "Service", "services", ns, "bad"), Applied: "False/ApplyFailed", Available: "Unknown/NotApplied"},
			{ID: id(1, "example.com", "v1", "Gadget", "", ns, "g"), Applied: "False/ApplyFailed", Available: "Unknown/NotApplied"},
			{ID: id(2, "", "v1", "ConfigMap", "configmaps", ns, "fine"), Applied: "True/Applied", Available: "True/Available"},
			{ID: id(3, "", "", "", "", "", ""), Applied: "False/ApplyFailed", Available: "Unknown/NotApplied"},
		},
	}, status)
	mustGetObject(t, configMapsGVR, ns, "fine")

	// The message of the Service is the API server's, as it answers the same request.
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(bogusService.Raw); err != nil {
		t.Fatal(err)
	}
	obj.SetAnnotations(map[string]string{AnnotationWork: "failing"})
	_, apiErr := dyn.Resource(servicesGVR).Namespace(ns).Apply(ctx, "bad", obj, metav1.ApplyOptions{FieldManager: DefaultFieldManager, Force: true})
	if apiErr == nil {
		t.Fatal("the API server accepted a Service of type Bogus")
	}
	gotMsg := condition(t, status.ManifestConditions[0].Conditions, placementv1beta1.ConditionApplied).Message
	if gotMsg != apiErr.Error() || !strings.Contains(gotMsg, `Unsupported value: "Bogus"`) {
		t.Errorf("Service Applied message = %q, want the API server's %q", gotMsg, apiErr.Error())
	}
	gotMsg = condition(t, status.ManifestConditions[1].Conditions, placementv1beta1.ConditionApplied).Message
	if !strings.Contains(gotMsg, `no matches for kind "Gadget" in version "example.com/v1"`) {
		t.Errorf("Gadget Applied message = %q, want it to say the kind is unknown", gotMsg)
	}
	gotMsg = condition(t, status.ManifestConditions[3].Conditions, placementv1beta1.ConditionApplied).Message
	if want := "failed to decode the manifest: the manifest is empty"; gotMsg != want {
		t.Errorf("empty manifest Applied message = %q, want %q", gotMsg, want)
	}
	wantPrefix := "3 of 4 manifests are not applied; the first is Service failing/bad (manifest 0): Service \"bad\" is invalid"
	if got := condition(t, status.Conditions, placementv1beta1.ConditionApplied).Message; !strings.HasPrefix(got, wantPrefix) {
		t.Errorf("Work Applied message = %q, want it to start with %q", got, wantPrefix)
	}

	// The failed manifests are tried again at the next apply of the same spec.
	failedBefore := testutil.ToFloat64(applyTotal.WithLabelValues(resultFailed))
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("second Apply() failed: %v", err)
	}
	if got := testutil.ToFloat64(applyTotal.WithLabelValues(resultFailed)) - failedBefore; got != 1 {
		t.Errorf("failed applies grew by %v, want 1", got)
	}
}

func TestApplyDoesNotWriteAnUnchangedWorkAgain(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-unchanged")
	const ns = "unchanged"
	work := newWork("unchanged", 1,
		namespaceManifest(t, ns),
		configMapManifest(t, ns, "settings", map[string]any{"color": "blue"}),
		deploymentManifest(t, ns, "web", 1),
	)
	first, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	versions := func() map[string]string {
		return map[string]string{
			"namespace":  mustGetObject(t, namespacesGVR, "", ns).GetResourceVersion(),
			"configmap":  mustGetObject(t, configMapsGVR, ns, "settings").GetResourceVersion(),
			"deployment": mustGetObject(t, deploymentsGVR, ns, "web").GetResourceVersion(),
			"record":     mustGetObject(t, configMapsGVR, "records-unchanged", recordName("unchanged")).GetResourceVersion(),
		}
	}
	before := versions()
	unchanged := testutil.ToFloat64(applyTotal.WithLabelValues(resultUnchanged))

	// The same spec again, as the hub would send it after a reconnect: a new object,
	// with the status the agent reported.
	again := newWork("unchanged", 1, work.Spec.Workload.Manifests...)
	again.Status = first
	second, err := a.Apply(ctx, again)
	if err != nil {
		t.Fatalf("second Apply() failed: %v", err)
	}
	if diff := cmp.Diff(before, versions()); diff != "" {
		t.Errorf("resourceVersions changed by a second apply of the same spec (-want +got):\n%s", diff)
	}
	if got := testutil.ToFloat64(applyTotal.WithLabelValues(resultUnchanged)) - unchanged; got != 1 {
		t.Errorf("unchanged applies grew by %v, want 1", got)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("status of the second apply differs (-first +second):\n%s", diff)
	}

	// An object deleted on the member is applied again, even though the spec is the same.
	if err := dyn.Resource(configMapsGVR).Namespace(ns).Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Apply(ctx, again); err != nil {
		t.Fatalf("third Apply() failed: %v", err)
	}
	mustGetObject(t, configMapsGVR, ns, "settings")
	if got := testutil.ToFloat64(applyTotal.WithLabelValues(resultUnchanged)) - unchanged; got != 1 {
		t.Errorf("unchanged applies grew by %v, want still 1", got)
	}
}

func TestRemoveDeletesEverythingTheWorkAppliedAndItsRecord(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-remove")
	const ns = "remove"
	work := newWork("remove", 1,
		namespaceManifest(t, ns),
		configMapManifest(t, ns, "settings", map[string]any{"color": "blue"}),
		deploymentManifest(t, ns, "web", 1),
	)
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	if err := a.Remove(ctx, "remove"); err != nil {
		t.Fatalf("Remove() failed: %v", err)
	}
	eventually(t, 10*time.Second, gone(configMapsGVR, ns, "settings"))
	eventually(t, 10*time.Second, gone(deploymentsGVR, ns, "web"))
	eventually(t, 10*time.Second, gone(namespacesGVR, "", ns))
	if obj := getObject(t, configMapsGVR, "records-remove", recordName("remove")); obj != nil {
		t.Errorf("the record of the removed Work still exists")
	}
	records, err := a.Inventory(ctx)
	if err != nil {
		t.Fatalf("Inventory() failed: %v", err)
	}
	if len(records) != 0 {
		t.Errorf("Inventory() = %v, want no records", records)
	}
	// Removing again is harmless.
	if err := a.Remove(ctx, "remove"); err != nil {
		t.Errorf("second Remove() failed: %v", err)
	}
}

func TestRemoveLeavesTheObjectsWithDeleteStrategyAbandon(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-abandon")
	const ns = "abandon"
	work := newWork("abandon", 1,
		namespaceManifest(t, ns),
		configMapManifest(t, ns, "settings", map[string]any{"color": "blue"}),
		configMapManifest(t, ns, "dropped", map[string]any{"k": "v"}),
	)
	work.Spec.DeleteStrategy = &placementv1beta1.DeleteStrategy{PropagationPolicy: placementv1beta1.DeletePropagationPolicyAbandon}
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	// A manifest dropped from the Work is abandoned too.
	work.Spec.Workload.Manifests = work.Spec.Workload.Manifests[:2]
	work.Generation = 2
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() of the shrunk Work failed: %v", err)
	}
	if err := a.Remove(ctx, "abandon"); err != nil {
		t.Fatalf("Remove() failed: %v", err)
	}
	for _, o := range []*unstructured.Unstructured{
		mustGetObject(t, namespacesGVR, "", ns),
		mustGetObject(t, configMapsGVR, ns, "settings"),
		mustGetObject(t, configMapsGVR, ns, "dropped"),
	} {
		if o.GetDeletionTimestamp() != nil {
			t.Errorf("%s %s is being deleted", o.GetKind(), o.GetName())
		}
		if v, ok := o.GetAnnotations()[AnnotationWork]; ok {
			t.Errorf("%s %s still carries %s=%q", o.GetKind(), o.GetName(), AnnotationWork, v)
		}
	}
	if obj := getObject(t, configMapsGVR, "records-abandon", recordName("abandon")); obj != nil {
		t.Errorf("the record of the removed Work still exists")
	}
}

func TestInventoryListsTheWorksWithTheHashOfTheSpecLastApplied(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-inventory")
	const ns = "inventory"
	createNamespace(t, ns)

	// Before anything is applied there are no records, and no record namespace.
	records, err := a.Inventory(ctx)
	if err != nil {
		t.Fatalf("Inventory() failed: %v", err)
	}
	if len(records) != 0 {
		t.Errorf("Inventory() = %v, want none", records)
	}

	one := newWork("one", 1, configMapManifest(t, ns, "one", map[string]any{"k": "1"}))
	two := newWork("two", 1, configMapManifest(t, ns, "two", map[string]any{"k": "2"}), serviceManifest(t, ns, "two", "ClusterIP"))
	two.Spec.DeleteStrategy = &placementv1beta1.DeleteStrategy{PropagationPolicy: placementv1beta1.DeletePropagationPolicyAbandon}
	for _, w := range []*placementv1beta1.Work{two, one} {
		if _, err := a.Apply(ctx, w); err != nil {
			t.Fatalf("Apply(%s) failed: %v", w.Name, err)
		}
	}
	records, err = a.Inventory(ctx)
	if err != nil {
		t.Fatalf("Inventory() failed: %v", err)
	}
	want := []Record{
		{
			WorkName: "one", Hash: SpecHash(one), DeletePolicy: placementv1beta1.DeletePropagationPolicyDelete, TakenOverPolicy: placementv1beta1.TakenOverPolicyRelease, AllApplied: true,
			Applied: []ObjectRef{{Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: ns, Name: "one", Created: true}},
			Work:    recordedWork(one),
		},
		{
			WorkName: "two", Hash: SpecHash(two), DeletePolicy: placementv1beta1.DeletePropagationPolicyAbandon, TakenOverPolicy: placementv1beta1.TakenOverPolicyRelease, AllApplied: true,
			Applied: []ObjectRef{
				{Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: ns, Name: "two", Created: true},
				{Version: "v1", Kind: "Service", Resource: "services", Namespace: ns, Name: "two", Created: true},
			},
			Work: recordedWork(two),
		},
	}
	if diff := cmp.Diff(want, records, cmpopts.IgnoreFields(ObjectRef{}, "UID")); diff != "" {
		t.Errorf("Inventory() mismatch (-want +got):\n%s", diff)
	}
	ns0 := mustGetObject(t, namespacesGVR, "", "records-inventory")
	if got := ns0.GetLabels()[labelManagedBy]; got != managedByAgent {
		t.Errorf("the record namespace has %s=%q, want %q", labelManagedBy, got, managedByAgent)
	}
}

func TestApplyTakesOverExistingObjectsAsTheStrategySays(t *testing.T) {
	const ns = "takeover"
	createNamespace(t, ns)
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "parent", UID: "0a0a0a0a-0000-0000-0000-000000000001"}
	tests := []struct {
		name     string
		existing map[string]string // data of the ConfigMap someone else created; nil for none
		owners   []metav1.OwnerReference
		strategy *placementv1beta1.ApplyStrategy
		want     map[string]string // the data on the member afterwards
		applied  string
		// wantDiffs are the differences reported, if any.
		wantDiffs []placementv1beta1.PatchDetail
		// wantMessage is contained in the manifest's Applied message.
		wantMessage string
	}{
		{
			name:     "Always takes over an object that differs",
			existing: map[string]string{"k": "theirs"},
			strategy: &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverAlways},
			want:     map[string]string{"k": "ours"},
			applied:  "True/Applied",
		},
		{
			name:     "IfNoDiff takes over an object that does not differ",
			existing: map[string]string{"k": "ours"},
			strategy: &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverIfNoDiff},
			want:     map[string]string{"k": "ours"},
			applied:  "True/Applied",
		},
		{
			name:     "IfNoDiff with partial comparison ignores fields the manifest does not set",
			existing: map[string]string{"k": "ours", "other": "theirs"},
			strategy: &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverIfNoDiff},
			want:     map[string]string{"k": "ours", "other": "theirs"},
			applied:  "True/Applied",
		},
		{
			name:        "IfNoDiff does not take over an object that differs and reports the difference",
			existing:    map[string]string{"k": "theirs"},
			strategy:    &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverIfNoDiff},
			want:        map[string]string{"k": "theirs"},
			applied:     "False/NotTakenOver",
			wantDiffs:   []placementv1beta1.PatchDetail{{Path: "/data/k", ValueInMember: "theirs", ValueInHub: "ours"}},
			wantMessage: "differs from the hub in 1 field (first: /data/k); applyStrategy.whenToTakeOver is IfNoDiff",
		},
		{
			name:     "IfNoDiff with full comparison does not take over an object with extra fields",
			existing: map[string]string{"k": "ours", "other": "theirs"},
			strategy: &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverIfNoDiff, ComparisonOption: placementv1beta1.FullComparison},
			want:     map[string]string{"k": "ours", "other": "theirs"},
			applied:  "False/NotTakenOver",
			wantDiffs: []placementv1beta1.PatchDetail{
				{Path: "/data/other", ValueInMember: "theirs"},
			},
		},
		{
			name:        "Never does not take over an object, even one that does not differ",
			existing:    map[string]string{"k": "ours"},
			strategy:    &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverNever},
			want:        map[string]string{"k": "ours"},
			applied:     "False/NotTakenOver",
			wantMessage: "already exists on the member cluster and was not created by Flotilla; applyStrategy.whenToTakeOver is Never",
		},
		{
			name:     "Never creates an object that does not exist",
			existing: nil,
			strategy: &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverNever},
			want:     map[string]string{"k": "ours"},
			applied:  "True/Applied",
		},
		{
			name:        "an object owned by something else is not applied without co-ownership",
			existing:    map[string]string{"k": "theirs"},
			owners:      []metav1.OwnerReference{owner},
			want:        map[string]string{"k": "theirs"},
			applied:     "False/ApplyFailed",
			wantMessage: "is owned by ConfigMap/parent on the member cluster; set applyStrategy.allowCoOwnership to apply it anyway",
		},
		{
			name:     "an object owned by something else is applied with co-ownership",
			existing: map[string]string{"k": "theirs"},
			owners:   []metav1.OwnerReference{owner},
			strategy: &placementv1beta1.ApplyStrategy{AllowCoOwnership: true, WhenToTakeOver: placementv1beta1.WhenToTakeOverAlways},
			want:     map[string]string{"k": "ours"},
			applied:  "True/Applied",
		},
		{
			name:        "the default (IfNoDiff) reports an object that differs instead of overwriting it",
			existing:    map[string]string{"k": "theirs"},
			strategy:    nil,
			want:        map[string]string{"k": "theirs"},
			applied:     "False/NotTakenOver",
			wantDiffs:   []placementv1beta1.PatchDetail{{Path: "/data/k", ValueInMember: "theirs", ValueInHub: "ours"}},
			wantMessage: "applyStrategy.whenToTakeOver is IfNoDiff",
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			a := newApplier(t, "records-takeover")
			name := fmt.Sprintf("cm-%d", i)
			if tt.existing != nil {
				createConfigMap(t, ns, name, tt.existing, tt.owners...)
			}
			work := newWork(fmt.Sprintf("takeover-%d", i), 1, configMapManifest(t, ns, name, map[string]any{"k": "ours"}))
			work.Spec.ApplyStrategy = tt.strategy

			status, err := a.Apply(ctx, work)
			if err != nil {
				t.Fatalf("Apply() failed: %v", err)
			}
			mc := status.ManifestConditions[0]
			if got := conditionSummary(mc.Conditions, placementv1beta1.ConditionApplied); got != tt.applied {
				t.Errorf("Applied = %s, want %s (%s)", got, tt.applied, condition(t, mc.Conditions, placementv1beta1.ConditionApplied).Message)
			}
			if got := conditionSummary(status.Conditions, placementv1beta1.ConditionApplied); got != tt.applied {
				t.Errorf("Work Applied = %s, want %s", got, tt.applied)
			}
			if msg := condition(t, mc.Conditions, placementv1beta1.ConditionApplied).Message; !strings.Contains(msg, tt.wantMessage) {
				t.Errorf("Applied message = %q, want it to contain %q", msg, tt.wantMessage)
			}
			var gotDiffs []placementv1beta1.PatchDetail
			if mc.DiffDetails != nil {
				gotDiffs = mc.DiffDetails.ObservedDiffs
			}
			if diff := cmp.Diff(tt.wantDiffs, gotDiffs); diff != "" {
				t.Errorf("diffs mismatch (-want +got):\n%s", diff)
			}
			live := mustGetObject(t, configMapsGVR, ns, name)
			data, _, _ := unstructured.NestedStringMap(live.Object, "data")
			if diff := cmp.Diff(tt.want, data); diff != "" {
				t.Errorf("data on the member mismatch (-want +got):\n%s", diff)
			}
			_, annotated := live.GetAnnotations()[AnnotationWork]
			if wantAnnotated := tt.applied == "True/Applied"; annotated != wantAnnotated {
				t.Errorf("object annotated = %v, want %v", annotated, wantAnnotated)
			}
		})
	}
}

func TestApplyNeverDeletesAnObjectAnotherWorkTookOver(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-contested")
	const ns = "contested"
	createNamespace(t, ns)
	first := newWork("first", 1, configMapManifest(t, ns, "shared", map[string]any{"k": "first"}), configMapManifest(t, ns, "own", nil))
	if _, err := a.Apply(ctx, first); err != nil {
		t.Fatalf("Apply(first) failed: %v", err)
	}
	second := newWork("second", 1, configMapManifest(t, ns, "shared", map[string]any{"k": "second"}))
	second.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverAlways}
	if _, err := a.Apply(ctx, second); err != nil {
		t.Fatalf("Apply(second) failed: %v", err)
	}
	if err := a.Remove(ctx, "first"); err != nil {
		t.Fatalf("Remove(first) failed: %v", err)
	}
	shared := mustGetObject(t, configMapsGVR, ns, "shared")
	if got := shared.GetAnnotations()[AnnotationWork]; got != "second" {
		t.Errorf("the shared ConfigMap has %s=%q, want %q", AnnotationWork, got, "second")
	}
	eventually(t, 10*time.Second, gone(configMapsGVR, ns, "own"))
}

func TestRemovingOneOfTwoWorksThatShareAnObjectKeepsItForTheOther(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-shared")
	const ns = "shared-by-two"
	createNamespace(t, ns)
	coOwned := &placementv1beta1.ApplyStrategy{AllowCoOwnership: true, WhenToTakeOver: placementv1beta1.WhenToTakeOverAlways}
	first := newWork("first", 1, configMapManifest(t, ns, "shared", map[string]any{"k": "v"}))
	first.Spec.ApplyStrategy = coOwned
	second := newWork("second", 1, configMapManifest(t, ns, "shared", map[string]any{"k": "v"}), configMapManifest(t, ns, "own", nil))
	second.Spec.ApplyStrategy = coOwned
	for _, w := range []*placementv1beta1.Work{first, second} {
		if _, err := a.Apply(ctx, w); err != nil {
			t.Fatalf("Apply(%s) failed: %v", w.Name, err)
		}
	}
	if got := mustGetObject(t, configMapsGVR, ns, "shared").GetAnnotations()[AnnotationWork]; got != "second" {
		t.Fatalf("the shared ConfigMap has %s=%q after the second Work, want %q", AnnotationWork, got, "second")
	}

	if err := a.Remove(ctx, "second"); err != nil {
		t.Fatalf("Remove(second) failed: %v", err)
	}
	eventually(t, 10*time.Second, gone(configMapsGVR, ns, "own"))
	shared := mustGetObject(t, configMapsGVR, ns, "shared")
	if got := shared.GetAnnotations()[AnnotationWork]; got != "first" {
		t.Errorf("the shared ConfigMap has %s=%q after the second Work went, want it handed to %q", AnnotationWork, got, "first")
	}
	status, err := a.Apply(ctx, first)
	if err != nil {
		t.Fatalf("Apply(first) again failed: %v", err)
	}
	if got := conditionSummary(status.Conditions, placementv1beta1.ConditionApplied); got != "True/Applied" {
		t.Errorf("first Work Applied = %s, want True/Applied", got)
	}

	if err := a.Remove(ctx, "first"); err != nil {
		t.Fatalf("Remove(first) failed: %v", err)
	}
	eventually(t, 10*time.Second, gone(configMapsGVR, ns, "shared"))
}

func TestApplyAppliesACRDAndItsCustomResourcesInOneWork(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-crd")
	const ns = "crd"
	crd := manifestOf(t, map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com",
			"scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type":       "object",
					"properties": map[string]any{"spec": map[string]any{"type": "object", "properties": map[string]any{"size": map[string]any{"type": "integer"}}}},
				}},
			}},
		},
	})
	widget := manifestOf(t, map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": ns},
		"spec":     map[string]any{"size": 3},
	})
	// The custom resource comes first in the Work.
	work := newWork("crd", 1, widget, crd, namespaceManifest(t, ns))
	status, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	checkSummary(t, statusSummary{
		Applied:   "True/Applied",
		Available: "True/NotTrackable",
		Manifests: []manifestSummary{
			{ID: id(0, "example.com", "v1", "Widget", "widgets", ns, "w"), Applied: "True/Applied", Available: "True/NotTrackable"},
			{ID: id(1, "apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", "", "widgets.example.com"), Applied: "True/Applied", Available: "True/Available"},
			{ID: id(2, "", "v1", "Namespace", "namespaces", "", ns), Applied: "True/Applied", Available: "True/Available"},
		},
	}, status)

	// Removing the Work deletes the custom resource before its CRD.
	if err := a.Remove(ctx, "crd"); err != nil {
		t.Fatalf("Remove() failed: %v", err)
	}
	eventually(t, 20*time.Second, gone(crdGVR, "", "widgets.example.com"))
}

func TestApplyWithReportDiffReportsDifferencesAndChangesNothing(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-reportdiff")
	const ns = "reportdiff"
	createNamespace(t, ns)
	createConfigMap(t, ns, "differs", map[string]string{"k": "theirs"})
	createConfigMap(t, ns, "same", map[string]string{"k": "ours"})
	work := newWork("reportdiff", 1,
		configMapManifest(t, ns, "differs", map[string]any{"k": "ours"}),
		configMapManifest(t, ns, "same", map[string]any{"k": "ours"}),
		configMapManifest(t, ns, "missing", map[string]any{"k": "ours"}),
	)
	work.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeReportDiff}

	status, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	// ReportDiff uses DiffReported instead of Applied and Available.
	checkSummary(t, statusSummary{
		Applied:   "missing",
		Available: "missing",
		Manifests: []manifestSummary{
			{ID: id(0, "", "v1", "ConfigMap", "configmaps", ns, "differs"), Applied: "missing", Available: "missing"},
			{ID: id(1, "", "v1", "ConfigMap", "configmaps", ns, "same"), Applied: "missing", Available: "missing"},
			{ID: id(2, "", "v1", "ConfigMap", "configmaps", ns, "missing"), Applied: "missing", Available: "missing"},
		},
	}, status)
	for i, mc := range status.ManifestConditions {
		if got := conditionSummary(mc.Conditions, placementv1beta1.ConditionDiffReported); got != "True/DiffReported" {
			t.Errorf("manifest %d: DiffReported = %s, want True/DiffReported", i, got)
		}
	}
	if diff := cmp.Diff([]placementv1beta1.PatchDetail{{Path: "/data/k", ValueInMember: "theirs", ValueInHub: "ours"}}, status.ManifestConditions[0].DiffDetails.ObservedDiffs); diff != "" {
		t.Errorf("diffs of the differing ConfigMap mismatch (-want +got):\n%s", diff)
	}
	if d := status.ManifestConditions[1].DiffDetails; d != nil {
		t.Errorf("the ConfigMap that does not differ has diff details %+v", d)
	}
	if d := status.ManifestConditions[2].DiffDetails; d == nil || d.ObservedInMemberClusterGeneration != nil || len(d.ObservedDiffs) != 1 || d.ObservedDiffs[0].Path != "/" {
		t.Errorf("the missing ConfigMap has diff details %+v, want one for the whole object", d)
	}
	wantMsg := "applyStrategy.type is ReportDiff; 2 of 3 manifests differ on the member cluster; the first is ConfigMap reportdiff/differs (manifest 0): ConfigMap reportdiff/differs (manifest 0) on the member cluster differs from the hub in 1 field (first: /data/k)"
	if got := condition(t, status.Conditions, placementv1beta1.ConditionDiffReported); got.Message != wantMsg || got.Status != metav1.ConditionTrue {
		t.Errorf("Work DiffReported = %s %q, want True %q", got.Status, got.Message, wantMsg)
	}
	data, _, _ := unstructured.NestedStringMap(mustGetObject(t, configMapsGVR, ns, "differs").Object, "data")
	if diff := cmp.Diff(map[string]string{"k": "theirs"}, data); diff != "" {
		t.Errorf("ReportDiff changed the member (-want +got):\n%s", diff)
	}
	if obj := getObject(t, configMapsGVR, ns, "missing"); obj != nil {
		t.Errorf("ReportDiff created an object")
	}
}

func TestStatusWithoutAnApplyIsPendingOrComesFromTheRecord(t *testing.T) {
	ctx := testContext(t)
	const ns = "status"
	work := newWork("status", 1, namespaceManifest(t, ns), configMapManifest(t, ns, "settings", map[string]any{"k": "v"}))

	a := newApplier(t, "records-status")
	status, err := a.Status(ctx, work)
	if err != nil {
		t.Fatalf("Status() failed: %v", err)
	}
	checkSummary(t, statusSummary{
		Applied:   "Unknown/ApplyPending",
		Available: "Unknown/ApplyPending",
		Manifests: []manifestSummary{
			{ID: id(0, "", "v1", "Namespace", "namespaces", "", ns), Applied: "Unknown/ApplyPending", Available: "Unknown/ApplyPending"},
			{ID: id(1, "", "v1", "ConfigMap", "configmaps", ns, "settings"), Applied: "Unknown/ApplyPending", Available: "Unknown/ApplyPending"},
		},
	}, status)

	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	// A new Applier, as after a restart of the agent, knows the Work from its record.
	restarted := newApplier(t, "records-status")
	status, err = restarted.Status(ctx, work)
	if err != nil {
		t.Fatalf("Status() failed: %v", err)
	}
	checkSummary(t, statusSummary{
		Applied:   "True/Applied",
		Available: "True/Available",
		Manifests: []manifestSummary{
			{ID: id(0, "", "v1", "Namespace", "namespaces", "", ns), Applied: "True/Applied", Available: "True/Available"},
			{ID: id(1, "", "v1", "ConfigMap", "configmaps", ns, "settings"), Applied: "True/Applied", Available: "True/Available"},
		},
	}, status)

	// A changed spec is pending until applied.
	changed := newWork("status", 2, namespaceManifest(t, ns), configMapManifest(t, ns, "settings", map[string]any{"k": "w"}))
	status, err = restarted.Status(ctx, changed)
	if err != nil {
		t.Fatalf("Status() failed: %v", err)
	}
	if got := conditionSummary(status.Conditions, placementv1beta1.ConditionApplied); got != "Unknown/ApplyPending" {
		t.Errorf("Applied of a changed spec = %s, want Unknown/ApplyPending", got)
	}
}

func TestApplyKeepsTransitionTimesWhileStatusesDoNotChange(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-times")
	const ns = "times"
	work := newWork("times", 1, namespaceManifest(t, ns))
	first, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	// Let the clock move past the one-second resolution of condition times.
	before := condition(t, first.Conditions, placementv1beta1.ConditionApplied).LastTransitionTime
	eventually(t, 5*time.Second, func() error {
		if metav1.Now().Unix() == before.Unix() {
			return errors.New("the clock has not moved")
		}
		return nil
	})
	work.Generation = 2
	work.Spec.Workload.Manifests = append(work.Spec.Workload.Manifests, configMapManifest(t, ns, "x", nil))
	second, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("second Apply() failed: %v", err)
	}
	got := condition(t, second.Conditions, placementv1beta1.ConditionApplied)
	if !got.LastTransitionTime.Equal(&before) {
		t.Errorf("Applied lastTransitionTime moved from %v to %v without a status change", before, got.LastTransitionTime)
	}
	if got.ObservedGeneration != 2 {
		t.Errorf("Applied observedGeneration = %d, want 2", got.ObservedGeneration)
	}
}

func TestRemoveDeletesWhatAnInterruptedApplyCreated(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-interrupted")
	const ns = "interrupted"
	createNamespace(t, ns)
	work := newWork("interrupted", 1,
		configMapManifest(t, ns, "created", map[string]any{"k": "v"}),
		configMapManifest(t, ns, "never-created", map[string]any{"k": "v"}),
	)
	// The agent records what it is about to apply, applies one object and stops.
	s := &scope{work: work, hash: SpecHash(work), strategy: applyStrategyOf(work), manifests: decodeManifests(work)}
	if _, err := a.guardRecord(ctx, s); err != nil {
		t.Fatalf("guardRecord() failed: %v", err)
	}
	if err := a.resolve(ctx, s, s.manifests[0]); err != nil {
		t.Fatal(err)
	}
	if r := a.applyManifest(ctx, s, s.manifests[0]); r.applied != metav1.ConditionTrue {
		t.Fatalf("applyManifest() = %+v", r)
	}
	records, err := a.Inventory(ctx)
	if err != nil {
		t.Fatalf("Inventory() failed: %v", err)
	}
	if len(records) != 1 || records[0].Hash != "" || records[0].AllApplied {
		t.Errorf("Inventory() = %+v, want one record without a hash, not all applied", records)
	}

	// A restarted agent is told to remove the Work.
	if err := newApplier(t, "records-interrupted").Remove(ctx, "interrupted"); err != nil {
		t.Fatalf("Remove() failed: %v", err)
	}
	eventually(t, 10*time.Second, gone(configMapsGVR, ns, "created"))
	if obj := getObject(t, configMapsGVR, "records-interrupted", recordName("interrupted")); obj != nil {
		t.Errorf("the record of the removed Work still exists")
	}
}

func TestApplyOnTheHubRefusesTheHubsMachineryAndNeverTakesOverItsSources(t *testing.T) {
	ctx := testContext(t)
	a, err := New(env.Config, Options{Namespace: "records-onhub", OnHub: true})
	if err != nil {
		t.Fatalf("New() failed: %v", err)
	}
	t.Cleanup(a.Close)
	const ns = "hub-sources"
	createNamespace(t, ns)
	createConfigMap(t, ns, "source", map[string]string{"k": "ours"})
	work := newWork("onhub", 1,
		configMapManifest(t, "flotilla-system", "forged", map[string]any{"k": "v"}),
		configMapManifest(t, "flotilla-member-hub", "forged", map[string]any{"k": "v"}),
		configMapManifest(t, ns, "source", map[string]any{"k": "ours"}),
		configMapManifest(t, ns, "made", map[string]any{"k": "v"}),
	)
	work.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverAlways}

	status, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	want := []struct{ applied, message string }{
		{"False/ApplyFailed", "ConfigMap flotilla-system/forged (manifest 0) is refused: namespace flotilla-system is the hub's own (its CA, tokens and leases); the agent never applies the hub's own machinery, not even on the hub joined as a member"},
		{"False/ApplyFailed", "ConfigMap flotilla-member-hub/forged (manifest 1) is refused: namespace flotilla-member-hub is a member's Work namespace on the hub (flotilla-member-*)"},
		{"False/NotTakenOver", "already exists on the hub and was not created by Flotilla; the agent of the hub joined as a member never takes over an object no Work applied"},
		{"True/Applied", ""},
	}
	for i, w := range want {
		conds := status.ManifestConditions[i].Conditions
		if got := conditionSummary(conds, placementv1beta1.ConditionApplied); got != w.applied {
			t.Errorf("manifest %d Applied = %s, want %s", i, got, w.applied)
		}
		if msg := condition(t, conds, placementv1beta1.ConditionApplied).Message; !strings.Contains(msg, w.message) {
			t.Errorf("manifest %d Applied message = %q, want it to contain %q", i, msg, w.message)
		}
	}
	// The source stays as it was: not annotated, so removing the Work never deletes it.
	if _, annotated := mustGetObject(t, configMapsGVR, ns, "source").GetAnnotations()[AnnotationWork]; annotated {
		t.Error("the hub's source ConfigMap was taken over")
	}
	mustGetObject(t, configMapsGVR, ns, "made")
	for _, refused := range []string{"flotilla-system", "flotilla-member-hub"} {
		if _, err := dyn.Resource(configMapsGVR).Namespace(refused).Get(ctx, "forged", metav1.GetOptions{}); err == nil {
			t.Errorf("ConfigMap %s/forged exists, want it never created", refused)
		}
	}
}

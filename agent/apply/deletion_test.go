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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// objAt names an object of a deletion test.
type objAt struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

func cmAt(ns, name string) objAt     { return objAt{configMapsGVR, ns, name} }
func nsAt(name string) objAt         { return objAt{namespacesGVR, "", name} }
func deployAt(ns, name string) objAt { return objAt{deploymentsGVR, ns, name} }

// releasedSummary lists released objects as "Kind namespace/name: Reason".
func releasedSummary(rs []Released) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Object.Kind+" "+nameString(r.Object.Namespace, r.Object.Name)+": "+r.Reason)
	}
	return out
}

func ownedBy(t *testing.T, gvr schema.GroupVersionResource, ns, name string) metav1.OwnerReference {
	t.Helper()
	o := mustGetObject(t, gvr, ns, name)
	return metav1.OwnerReference{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Name: o.GetName(), UID: o.GetUID()}
}

func applyOK(ctx context.Context, t *testing.T, a *Applier, work *placementv1beta1.Work) placementv1beta1.WorkStatus {
	t.Helper()
	status, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	return status
}

func removeOK(ctx context.Context, t *testing.T, a *Applier, name string) []Released {
	t.Helper()
	released, err := a.RemoveWork(ctx, name)
	if err != nil {
		t.Fatalf("RemoveWork() failed: %v", err)
	}
	return released
}

// TestLettingGoFollowsTheDeletionRules checks each rule of decideRemoval against a
// real API server: what a Work created is deleted, what it took over is released,
// and a Namespace holding the member's own objects is never deleted.
func TestLettingGoFollowsTheDeletionRules(t *testing.T) {
	takenOverDelete := &placementv1beta1.DeleteStrategy{TakenOver: placementv1beta1.TakenOverPolicyDelete}
	tests := []struct {
		name string
		// member creates what the member cluster holds before the Work is applied.
		member func(t *testing.T)
		work   func(t *testing.T) *placementv1beta1.Work
		// act applies the Work (and whatever the case does next) and lets go of it.
		act          func(ctx context.Context, t *testing.T, a *Applier, work *placementv1beta1.Work) []Released
		wantKept     []objAt
		wantGone     []objAt
		wantReleased []string
		// wantMessage is in the message of the last object released.
		wantMessage string
	}{{
		name: "a removed Work releases the namespace and leaves the ConfigMaps the member had, and deletes what it created",
		member: func(t *testing.T) {
			createNamespace(t, "del-a")
			createConfigMap(t, "del-a", "mine", map[string]string{"k": "member"})
			createConfigMap(t, "del-a", "shared", map[string]string{"k": "member"})
		},
		work: func(t *testing.T) *placementv1beta1.Work {
			return newWork("del-a", 1, namespaceManifest(t, "del-a"),
				configMapManifest(t, "del-a", "shared", map[string]any{"k": "hub"}),
				configMapManifest(t, "del-a", "created", map[string]any{"k": "hub"}))
		},
		act: func(ctx context.Context, t *testing.T, a *Applier, work *placementv1beta1.Work) []Released {
			applyOK(ctx, t, a, work)
			return removeOK(ctx, t, a, work.Name)
		},
		wantKept:     []objAt{nsAt("del-a"), cmAt("del-a", "mine"), cmAt("del-a", "shared")},
		wantGone:     []objAt{cmAt("del-a", "created")},
		wantReleased: []string{"Namespace del-a: TakenOver"},
		wantMessage:  "deleteStrategy.takenOver",
	}, {
		name: "with takenOver Delete a taken-over ConfigMap is deleted, but its namespace holding the member's objects is released",
		member: func(t *testing.T) {
			createNamespace(t, "del-b")
			createConfigMap(t, "del-b", "mine", map[string]string{"k": "member"})
			createConfigMap(t, "del-b", "adopted", map[string]string{"k": "v"})
		},
		work: func(t *testing.T) *placementv1beta1.Work {
			w := newWork("del-b", 1, namespaceManifest(t, "del-b"), configMapManifest(t, "del-b", "adopted", map[string]any{"k": "v"}))
			w.Spec.DeleteStrategy = takenOverDelete
			return w
		},
		act: func(ctx context.Context, t *testing.T, a *Applier, work *placementv1beta1.Work) []Released {
			applyOK(ctx, t, a, work)
			return removeOK(ctx, t, a, work.Name)
		},
		wantKept:     []objAt{nsAt("del-b"), cmAt("del-b", "mine")},
		wantGone:     []objAt{cmAt("del-b", "adopted")},
		wantReleased: []string{"Namespace del-b: NamespaceInUse"},
		wantMessage:  "ConfigMap mine",
	}, {
		name: "with takenOver Delete a taken-over namespace left empty is deleted",
		member: func(t *testing.T) {
			createNamespace(t, "del-c")
		},
		work: func(t *testing.T) *placementv1beta1.Work {
			w := newWork("del-c", 1, namespaceManifest(t, "del-c"), configMapManifest(t, "del-c", "created", map[string]any{"k": "v"}))
			w.Spec.DeleteStrategy = takenOverDelete
			return w
		},
		act: func(ctx context.Context, t *testing.T, a *Applier, work *placementv1beta1.Work) []Released {
			applyOK(ctx, t, a, work)
			return removeOK(ctx, t, a, work.Name)
		},
		wantGone: []objAt{nsAt("del-c"), cmAt("del-c", "created")},
	}, {
		// The agent-side case TestRemovalNeverDeletesAnotherWorksOrTheMembersObjects
		// found (see TestNamespaceVerdict).
		name: "with takenOver Delete a taken-over namespace is released while it holds a ConfigMap another Work applies",
		member: func(t *testing.T) {
			createNamespace(t, "del-i")
		},
		work: func(t *testing.T) *placementv1beta1.Work {
			w := newWork("del-i", 1, namespaceManifest(t, "del-i"))
			w.Spec.DeleteStrategy = takenOverDelete
			return w
		},
		act: func(ctx context.Context, t *testing.T, a *Applier, work *placementv1beta1.Work) []Released {
			// The other Work does not take the member's namespace over, but
			// creates its ConfigMap in it.
			other := newWork("del-i-other", 1, namespaceManifest(t, "del-i"), configMapManifest(t, "del-i", "theirs", map[string]any{"k": "v"}))
			other.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverNever}
			applyOK(ctx, t, a, other)
			if got := mustGetObject(t, configMapsGVR, "del-i", "theirs").GetAnnotations()[AnnotationWork]; got != other.Name {
				t.Fatalf("the other Work's ConfigMap carries %s=%q, want %q", AnnotationWork, got, other.Name)
			}
			applyOK(ctx, t, a, work)
			released := removeOK(ctx, t, a, work.Name)
			if live := mustGetObject(t, configMapsGVR, "del-i", "theirs"); live.GetDeletionTimestamp() != nil {
				t.Errorf("the other Work's ConfigMap is being deleted")
			}
			return released
		},
		wantKept:     []objAt{nsAt("del-i")},
		wantReleased: []string{"Namespace del-i: NamespaceInUse"},
		wantMessage:  "holds 1 object other placements apply: ConfigMap theirs",
	}, {
		name: "a namespace the Work created is released when the member's users put objects of their own in it",
		work: func(t *testing.T) *placementv1beta1.Work {
			return newWork("del-d", 1, namespaceManifest(t, "del-d"),
				configMapManifest(t, "del-d", "created", map[string]any{"k": "v"}), deploymentManifest(t, "del-d", "web", 1))
		},
		act: func(ctx context.Context, t *testing.T, a *Applier, work *placementv1beta1.Work) []Released {
			applyOK(ctx, t, a, work)
			createConfigMap(t, "del-d", "user", map[string]string{"k": "member"})
			createConfigMap(t, "del-d", "owned", nil, ownedBy(t, deploymentsGVR, "del-d", "web"))
			return removeOK(ctx, t, a, work.Name)
		},
		wantKept:     []objAt{nsAt("del-d"), cmAt("del-d", "user")},
		wantGone:     []objAt{cmAt("del-d", "created"), deployAt("del-d", "web")},
		wantReleased: []string{"Namespace del-d: NamespaceInUse"},
		wantMessage:  "holds 1 object no placement applied: ConfigMap user;",
	}, {
		name: "a namespace the Work created is deleted when what is left in it belongs to the Work's objects",
		work: func(t *testing.T) *placementv1beta1.Work {
			return newWork("del-e", 1, namespaceManifest(t, "del-e"), deploymentManifest(t, "del-e", "web", 1))
		},
		act: func(ctx context.Context, t *testing.T, a *Applier, work *placementv1beta1.Work) []Released {
			applyOK(ctx, t, a, work)
			createConfigMap(t, "del-e", "owned", nil, ownedBy(t, deploymentsGVR, "del-e", "web"))
			createConfigMap(t, "del-e", "owned-twice", nil, ownedBy(t, configMapsGVR, "del-e", "owned"))
			return removeOK(ctx, t, a, work.Name)
		},
		wantGone: []objAt{nsAt("del-e"), deployAt("del-e", "web")},
	}, {
		name: "a taken-over ConfigMap dropped from the Work is released and a created one deleted",
		member: func(t *testing.T) {
			createNamespace(t, "del-f")
			createConfigMap(t, "del-f", "adopted", map[string]string{"k": "v"})
		},
		work: func(t *testing.T) *placementv1beta1.Work {
			return newWork("del-f", 1, configMapManifest(t, "del-f", "adopted", map[string]any{"k": "v"}),
				configMapManifest(t, "del-f", "created", map[string]any{"k": "v"}))
		},
		act: func(ctx context.Context, t *testing.T, a *Applier, work *placementv1beta1.Work) []Released {
			applyOK(ctx, t, a, work)
			work.Spec.Workload.Manifests = nil
			work.Generation = 2
			applyOK(ctx, t, a, work)
			return nil // dropped manifests are reported in logs and the metric
		},
		wantKept: []objAt{cmAt("del-f", "adopted")},
		wantGone: []objAt{cmAt("del-f", "created")},
	}, {
		name: "an object the Work created that someone deleted and created again is released",
		member: func(t *testing.T) {
			createNamespace(t, "del-g")
		},
		work: func(t *testing.T) *placementv1beta1.Work {
			return newWork("del-g", 1, configMapManifest(t, "del-g", "again", map[string]any{"k": "v"}))
		},
		act: func(ctx context.Context, t *testing.T, a *Applier, work *placementv1beta1.Work) []Released {
			applyOK(ctx, t, a, work)
			if err := dyn.Resource(configMapsGVR).Namespace("del-g").Delete(ctx, "again", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			createConfigMap(t, "del-g", "again", map[string]string{"k": "v"})
			// The object is not the Work's any more: it is applied again, taken over.
			if got := conditionSummary(applyOK(ctx, t, a, work).Conditions, placementv1beta1.ConditionApplied); got != "True/Applied" {
				t.Fatalf("Apply() after the object was created again: Applied %s, want True/Applied", got)
			}
			return removeOK(ctx, t, a, work.Name)
		},
		wantKept:     []objAt{cmAt("del-g", "again")},
		wantReleased: []string{"ConfigMap del-g/again: TakenOver"},
	}, {
		name: "an object of a record written before the agent recorded what it created is released",
		member: func(t *testing.T) {
			createNamespace(t, "del-h")
		},
		work: func(t *testing.T) *placementv1beta1.Work {
			return newWork("del-h", 1, configMapManifest(t, "del-h", "old", map[string]any{"k": "v"}))
		},
		act: func(ctx context.Context, t *testing.T, a *Applier, work *placementv1beta1.Work) []Released {
			applyOK(ctx, t, a, work)
			rec, err := a.getRecord(ctx, work.Name)
			if err != nil || rec == nil {
				t.Fatalf("getRecord() = %v, %v", rec, err)
			}
			for i := range rec.Applied {
				rec.Applied[i].Created, rec.Applied[i].UID, rec.Applied[i].GuardedAt = false, "", ""
			}
			if err := a.putRecord(ctx, rec); err != nil {
				t.Fatal(err)
			}
			// The old record had no takenOver either.
			patch := []byte(`{"data":{"takenOver":null}}`)
			if _, err := dyn.Resource(configMapsGVR).Namespace("records-deletion").Patch(ctx, recordName(work.Name), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			return removeOK(ctx, t, a, work.Name)
		},
		wantKept:     []objAt{cmAt("del-h", "old")},
		wantReleased: []string{"ConfigMap del-h/old: TakenOver"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			a := newApplier(t, "records-deletion")
			if tt.member != nil {
				tt.member(t)
			}
			work := tt.work(t)
			released := tt.act(ctx, t, a, work)
			if diff := cmp.Diff(tt.wantReleased, releasedSummary(released)); diff != "" {
				t.Errorf("released (-want +got):\n%s", diff)
			}
			if tt.wantMessage != "" && len(released) > 0 && !strings.Contains(released[len(released)-1].Message, tt.wantMessage) {
				t.Errorf("the last release says %q, want it to contain %q", released[len(released)-1].Message, tt.wantMessage)
			}
			for _, o := range tt.wantGone {
				eventually(t, 10*time.Second, gone(o.gvr, o.namespace, o.name))
			}
			for _, o := range tt.wantKept {
				live := mustGetObject(t, o.gvr, o.namespace, o.name)
				if live.GetDeletionTimestamp() != nil {
					t.Errorf("%s %s is being deleted, want it kept", live.GetKind(), nameString(o.namespace, o.name))
				}
				if v, ok := live.GetAnnotations()[AnnotationWork]; ok {
					t.Errorf("%s %s still carries %s=%q", live.GetKind(), nameString(o.namespace, o.name), AnnotationWork, v)
				}
				if v, ok := live.GetLabels()[LabelAppliedBy]; ok {
					t.Errorf("%s %s still carries %s=%q", live.GetKind(), nameString(o.namespace, o.name), LabelAppliedBy, v)
				}
				for _, mf := range live.GetManagedFields() {
					if mf.Manager == DefaultFieldManager {
						t.Errorf("%s %s still has fields managed by %s", live.GetKind(), nameString(o.namespace, o.name), mf.Manager)
					}
				}
			}
		})
	}
}

// TestTheMemberKeepsItsOwnDataInAConfigMapTheWorkDidNotTakeOver checks the data of
// the member's ConfigMap named like the hub's is the member's after the removal.
func TestTheMemberKeepsItsOwnDataInAConfigMapTheWorkDidNotTakeOver(t *testing.T) {
	ctx := testContext(t)
	a := newApplier(t, "records-deletion-data")
	createNamespace(t, "del-data")
	createConfigMap(t, "del-data", "shared", map[string]string{"k": "member"})
	work := newWork("del-data", 1, namespaceManifest(t, "del-data"), configMapManifest(t, "del-data", "shared", map[string]any{"k": "hub"}))
	status := applyOK(ctx, t, a, work)
	if c := condition(t, status.ManifestConditions[1].Conditions, placementv1beta1.ConditionApplied); c.Reason != placementv1beta1.ReasonNotTakenOver {
		t.Fatalf("the member's ConfigMap: Applied reason %s, want %s", c.Reason, placementv1beta1.ReasonNotTakenOver)
	}
	removeOK(ctx, t, a, work.Name)
	// The API server of the tests runs no namespace controller: a namespace
	// being deleted keeps its objects here, while a real cluster deletes them.
	// So the namespace itself must not be being deleted.
	if ns := mustGetObject(t, namespacesGVR, "", "del-data"); ns.GetDeletionTimestamp() != nil {
		t.Errorf("the namespace holding the member's ConfigMap is being deleted, which deletes the ConfigMap on a real cluster")
	}
	live := mustGetObject(t, configMapsGVR, "del-data", "shared")
	if diff := cmp.Diff(map[string]any{"k": "member"}, live.Object["data"]); diff != "" {
		t.Errorf("the member's ConfigMap data (-want +got):\n%s", diff)
	}
}

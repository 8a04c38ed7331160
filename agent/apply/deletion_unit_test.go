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

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestDecideRemoval(t *testing.T) {
	const (
		del     = placementv1beta1.DeletePropagationPolicyDelete
		abandon = placementv1beta1.DeletePropagationPolicyAbandon
		release = placementv1beta1.TakenOverPolicyRelease
		delTO   = placementv1beta1.TakenOverPolicyDelete
	)
	tests := []struct {
		name       string
		facts      removalFacts
		wantAction removalAction
		wantReason string
	}{
		{"an object the Work created is deleted", removalFacts{deletePolicy: del, takenOverPolicy: release, created: true}, removalDelete, ""},
		{"an object the Work took over is released", removalFacts{deletePolicy: del, takenOverPolicy: release}, removalRelease, placementv1beta1.ReasonReleasedTakenOver},
		{"an unset takenOver releases what the Work took over", removalFacts{deletePolicy: del}, removalRelease, placementv1beta1.ReasonReleasedTakenOver},
		{"with takenOver Delete a taken-over object is deleted", removalFacts{deletePolicy: del, takenOverPolicy: delTO}, removalDelete, ""},
		{"Abandon releases what the Work created", removalFacts{deletePolicy: abandon, takenOverPolicy: delTO, created: true}, removalRelease, placementv1beta1.ReasonReleasedAbandon},
		{"a namespace in use is released though the Work created it", removalFacts{deletePolicy: del, takenOverPolicy: release, created: true, inUse: "holds x"}, removalRelease, placementv1beta1.ReasonReleasedNamespaceInUse},
		{"a namespace in use is released though takenOver is Delete", removalFacts{deletePolicy: del, takenOverPolicy: delTO, inUse: "holds x"}, removalRelease, placementv1beta1.ReasonReleasedNamespaceInUse},
		{"an object another Work's annotation names is left alone", removalFacts{workName: "a", owner: "b", deletePolicy: del, takenOverPolicy: delTO, created: true}, removalLeave, ""},
		{"an object a member user took (no annotation) is left alone", removalFacts{workName: "a", deletePolicy: del, created: true}, removalLeave, ""},
		{"an object another Work's record lists is handed over, not deleted", removalFacts{workName: "a", owner: "a", sharedWith: "b", deletePolicy: del, created: true}, removalHandOver, ""},
		{"an object another Work's record lists is handed over, not released, under Abandon", removalFacts{workName: "a", owner: "a", sharedWith: "b", deletePolicy: abandon}, removalHandOver, ""},
		{"a created object of the Work that no other Work lists is deleted", removalFacts{workName: "a", owner: "a", deletePolicy: del, created: true}, removalDelete, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			action, reason, _ := decideRemoval(tt.facts)
			if action != tt.wantAction || reason != tt.wantReason {
				t.Errorf("decideRemoval() = %v, %q; want %v, %q", action, reason, tt.wantAction, tt.wantReason)
			}
		})
	}
}

func TestCreatedBy(t *testing.T) {
	guarded := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	live := func(uid types.UID, created time.Time) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetUID(uid)
		u.SetCreationTimestamp(metav1.NewTime(created))
		return u
	}
	tests := []struct {
		name string
		ref  ObjectRef
		live *unstructured.Unstructured
		want bool
	}{
		{"the object the Work created", ObjectRef{Created: true, UID: "a"}, live("a", guarded), true},
		{"an object created again under the same name", ObjectRef{Created: true, UID: "a"}, live("b", guarded), false},
		{"an object the Work took over", ObjectRef{UID: "a"}, live("a", guarded), false},
		{"an object of an old record", ObjectRef{}, live("a", guarded), false},
		{"an object created after an interrupted apply was guarded", ObjectRef{GuardedAt: guarded.Format(time.RFC3339)}, live("a", guarded.Add(time.Second)), true},
		{"an object created in the second of the guard", ObjectRef{GuardedAt: guarded.Format(time.RFC3339)}, live("a", guarded), true},
		{"an object that existed before an interrupted apply was guarded", ObjectRef{GuardedAt: guarded.Format(time.RFC3339)}, live("a", guarded.Add(-time.Second)), false},
		{"a guard time that does not parse", ObjectRef{GuardedAt: "yesterday"}, live("a", guarded), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ref.createdBy(tt.live); got != tt.want {
				t.Errorf("createdBy() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestForeignObjects(t *testing.T) {
	// obj's owners are namespaced; clusterOwned's owner is cluster-scoped.
	obj := func(kind, name string, uid types.UID, owners ...types.UID) nsObject {
		o := nsObject{kind: kind, name: name, uid: uid}
		for _, u := range owners {
			o.owners = append(o.owners, nsOwner{uid: u, namespaced: true})
		}
		return o
	}
	clusterOwned := func(kind, name string, uid, owner types.UID) nsObject {
		return nsObject{kind: kind, name: name, uid: uid, owners: []nsOwner{{uid: owner}}}
	}
	applied := func(o nsObject) nsObject { o.work = "w"; return o }
	tests := []struct {
		name    string
		objs    []nsObject
		deleted map[types.UID]bool
		want    []string
	}{{
		name: "what every namespace has is not foreign",
		objs: []nsObject{
			obj("ServiceAccount", "default", "1"), obj("ConfigMap", "kube-root-ca.crt", "2"),
			{kind: "RoleBinding.rbac.authorization.k8s.io", name: GrantRoleBindingName, uid: "3", managedBy: managedByAgent},
		},
	}, {
		name: "objects owned by applied objects, at any depth and in any order, are not foreign",
		objs: []nsObject{
			obj("Pod", "web-1-a", "pod", "rs"), obj("ReplicaSet.apps", "web-1", "rs", "deploy"), applied(obj("Deployment.apps", "web", "deploy")),
			applied(obj("Service", "web", "svc")), obj("EndpointSlice.discovery.k8s.io", "web-x", "es", "svc"), obj("Endpoints", "web", "ep"),
		},
	}, {
		name:    "objects owned by objects this removal deleted are not foreign",
		objs:    []nsObject{obj("ReplicaSet.apps", "web-1", "rs", "gone"), obj("Pod", "web-1-a", "pod", "rs")},
		deleted: map[types.UID]bool{"gone": true},
	}, {
		name: "objects whose namespaced owners are all gone are being collected, not foreign",
		objs: []nsObject{obj("Pod", "web-1-a", "pod", "gone-rs"), obj("Pod", "web-1-b", "pod2", "gone-rs", "gone-other")},
	}, {
		name: "an object with one present owner of the member's stays foreign, though its other owner is gone",
		objs: []nsObject{obj("ConfigMap", "mine", "1"), obj("Pod", "shared", "2", "gone", "1")},
		want: []string{"ConfigMap mine", "Pod shared"},
	}, {
		name: "objects being deleted are not foreign",
		objs: []nsObject{{kind: "ConfigMap", name: "going", uid: "1", deleting: true}},
	}, {
		name: "the member's own objects are foreign, in order",
		objs: []nsObject{
			obj("ConfigMap", "mine", "1"), applied(obj("ConfigMap", "hub", "2")), obj("ServiceAccount", "robot", "3"),
			obj("Endpoints", "other", "4"), clusterOwned("Pod", "orphan", "5", "node"), obj("RoleBinding.rbac.authorization.k8s.io", GrantRoleBindingName, "6"),
		},
		want: []string{"ConfigMap mine", "ServiceAccount robot", "Endpoints other", "Pod orphan", "RoleBinding.rbac.authorization.k8s.io " + GrantRoleBindingName},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, o := range foreignObjects(tt.objs, tt.deleted) {
				got = append(got, o.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("foreignObjects() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNamespaceVerdict(t *testing.T) {
	cm := func(name, work string) nsObject {
		return nsObject{kind: "ConfigMap", name: name, uid: types.UID(name), work: work}
	}
	tests := []struct {
		name      string
		objs      []nsObject
		unchecked []string
		want      string
	}{{
		name: "a Namespace holding only what the Work letting go applied may be deleted",
		objs: []nsObject{cm("x", "w2")},
	}, {
		name: "a Namespace holding an object of the member's is in use",
		objs: []nsObject{cm("x", "w2"), cm("mine", "")},
		want: "namespace b holds 1 object no placement applied: ConfigMap mine",
	}, {
		// Found by TestRemovalNeverDeletesAnotherWorksOrTheMembersObjects: Work
		// w1 created ConfigMap b/y but was refused the take-over of the
		// member's Namespace b; Work w2 took b over with takenOver Delete, and
		// its removal deleted b, and w1's ConfigMap with it.
		name: "a Namespace holding an object another Work applies is in use",
		objs: []nsObject{cm("y", "w1")},
		want: "namespace b holds 1 object other placements apply: ConfigMap y",
	}, {
		name: "an object of another Work being deleted does not keep the Namespace",
		objs: []nsObject{{kind: "ConfigMap", name: "y", uid: "y", work: "w1", deleting: true}},
	}, {
		name:      "a Namespace the agent could not check is in use",
		unchecked: []string{"widgets.example.com (forbidden)"},
		want:      "the agent could not check every object in namespace b: widgets.example.com (forbidden)",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, namespaceVerdict("b", "w2", tt.objs, nil, tt.unchecked)); diff != "" {
				t.Errorf("namespaceVerdict() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRemovalOrderLetsGoOfNamespacesLast(t *testing.T) {
	ns := ObjectRef{Version: "v1", Kind: "Namespace", Name: "a"}
	cm := ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "c"}
	dep := ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "a", Name: "d"}
	ns2 := ObjectRef{Version: "v1", Kind: "Namespace", Name: "b"}
	got := removalOrder([]ObjectRef{ns, cm, ns2, dep})
	if diff := cmp.Diff([]ObjectRef{dep, cm, ns2, ns}, got); diff != "" {
		t.Errorf("removalOrder() (-want +got):\n%s", diff)
	}
}

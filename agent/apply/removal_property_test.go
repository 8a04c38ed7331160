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

// A generative test of what the agent deletes when a Work lets go of objects.
// A model member cluster holds objects (some the member's own, created before
// any Work or in between), Works apply random sets of Namespaces (as a
// ClusterResourcePlacement brings them, or create-only as a ResourcePlacement
// does) and ConfigMaps in them, are edited to drop some, and are removed. Every
// object a Work lets go of goes through the agent's own decisions: removalOrder,
// createdBy, decideRemoval and, for a Namespace, foreignObjects. Each time an
// object is deleted, directly or with its Namespace, these must hold:
//
//   - an object the record of another Work still lists is never deleted;
//   - an object the Work letting go of it did not create (the member's own, or
//     another Work's that it took over) is deleted only when its
//     deleteStrategy.takenOver is Delete;
//   - a Namespace is deleted only when nothing is left in it: no object of the
//     member's, none another Work applied, none this Work released.
//
// The model applies as the agent does (run.go applyManifest, appliedRefs and
// ensureExists): a missing object is created (and recorded as created), an
// existing one is taken over when the Work's strategy allows it, a create-only
// Namespace is only made to exist. As on the hub, a Work that places an object
// of a namespace places that Namespace too (a ClusterResourcePlacement selects
// the Namespace, a ResourcePlacement brings it create-only).

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

var (
	modelNamespaces = []string{"a", "b"}
	modelConfigMaps = []string{"x", "y"}
	modelWorkNames  = []string{"w1", "w2", "w3"}
)

// memberObj is an object of the model member cluster.
type memberObj struct {
	uid types.UID
	// owner is its AnnotationWork; "" if none.
	owner string
	// creator is the Work that created it; "" for the member's own.
	creator string
}

// modelManifest is one object a Work lists.
type modelManifest struct {
	ref        ObjectRef
	createOnly bool
}

type modelWork struct {
	manifests    []modelManifest
	deletePolicy placementv1beta1.DeletePropagationPolicy
	takenOver    placementv1beta1.TakenOverPolicy
	// takeOver is whether the apply strategy takes over existing objects.
	takeOver bool
	record   *Record
}

type memberModel struct {
	objects map[objectKey]*memberObj
	works   map[string]*modelWork
	uids    int
}

func namespaceRef(name string) ObjectRef {
	return ObjectRef{Version: "v1", Kind: "Namespace", Resource: "namespaces", Name: name}
}

func configMapRef(ns, name string) ObjectRef {
	return ObjectRef{Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: ns, Name: name}
}

func (m *memberModel) create(key objectKey, owner, creator string) *memberObj {
	m.uids++
	o := &memberObj{uid: types.UID(fmt.Sprintf("uid-%d", m.uids)), owner: owner, creator: creator}
	m.objects[key] = o
	return o
}

// live is the object as createdBy reads it.
func (o *memberObj) live() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetUID(o.uid)
	return u
}

func (m *memberModel) describe(key objectKey) string {
	o := m.objects[key]
	return fmt.Sprintf("%s %s/%s (annotation %q, created by %q)", key.kind, key.namespace, key.name, o.owner, o.creator)
}

// apply applies a Work's manifests, namespaces first, and then lets go of what
// its record holds that it no longer lists, as Applier.Apply does.
func (m *memberModel) apply(t *rapid.T, name string, w *modelWork) {
	recorded := func(key objectKey) ObjectRef {
		if w.record != nil {
			for _, r := range w.record.Applied {
				if r.key() == key {
					return r
				}
			}
		}
		return ObjectRef{}
	}
	ordered := slices.Clone(w.manifests)
	sort.SliceStable(ordered, func(i, j int) bool {
		return ordered[i].ref.Kind == "Namespace" && ordered[j].ref.Kind != "Namespace"
	})
	var applied []ObjectRef
	seen := map[objectKey]bool{}
	for _, man := range ordered {
		key := man.ref.key()
		if key.namespace != "" && m.objects[namespaceRef(key.namespace).key()] == nil {
			continue // the namespace is missing: the apply fails
		}
		live := m.objects[key]
		ref := man.ref
		switch {
		case man.createOnly:
			if live == nil {
				live = m.create(key, "", name)
			}
		case live == nil:
			live = m.create(key, name, name)
			ref.Created = true
		case live.owner != name && !w.takeOver:
			continue // not taken over
		default:
			ref.Created = live.owner == name && recorded(key).createdBy(live.live())
			live.owner = name
		}
		ref.UID = live.uid
		applied = append(applied, ref)
		seen[key] = true
	}
	listed := map[objectKey]bool{}
	for _, man := range w.manifests {
		listed[man.ref.key()] = true
	}
	var unlisted []ObjectRef
	if w.record != nil {
		for _, r := range w.record.Applied {
			switch {
			case listed[r.key()] && !seen[r.key()]:
				applied = append(applied, r)
			case !listed[r.key()]:
				unlisted = append(unlisted, r)
			}
		}
	}
	m.letGo(t, name, w.deletePolicy, w.takenOver, unlisted)
	w.record = &Record{WorkName: name, DeletePolicy: w.deletePolicy, TakenOverPolicy: w.takenOver, Applied: applied}
}

// remove removes a Work: it lets go of everything its record holds.
func (m *memberModel) remove(t *rapid.T, name string) {
	w := m.works[name]
	if w.record != nil {
		m.letGo(t, name, w.record.DeletePolicy, w.record.TakenOverPolicy, w.record.Applied)
	}
	delete(m.works, name)
}

// sharedWith is Applier.sharedWith over the model's records.
func (m *memberModel) sharedWith(name string) map[objectKey]string {
	out := map[objectKey]string{}
	for _, other := range sortedWorkNames(m.works) {
		rec := m.works[other].record
		if other == name || rec == nil {
			continue
		}
		for _, r := range rec.Applied {
			if _, ok := out[r.key()]; !ok {
				out[r.key()] = other
			}
		}
	}
	return out
}

// inUse is Applier.namespaceInUse over the model's objects: namespaceVerdict.
func (m *memberModel) inUse(ns, name string, deleted map[types.UID]bool) string {
	var objs []nsObject
	for _, key := range memberKeys(m.objects) {
		if key.namespace != ns {
			continue
		}
		o := m.objects[key]
		objs = append(objs, nsObject{kind: key.kind, name: key.name, uid: o.uid, work: o.owner})
	}
	return namespaceVerdict(ns, name, objs, deleted, nil)
}

// letGo is Applier.letGoOf over the model, checking the invariants at every
// deletion.
func (m *memberModel) letGo(t *rapid.T, name string, deletePolicy placementv1beta1.DeletePropagationPolicy, takenOver placementv1beta1.TakenOverPolicy, refs []ObjectRef) {
	shared := m.sharedWith(name)
	deleted := map[types.UID]bool{}
	for _, ref := range removalOrder(refs) {
		key := ref.key()
		live := m.objects[key]
		if live == nil {
			continue
		}
		facts := removalFacts{workName: name, owner: live.owner, sharedWith: shared[key], deletePolicy: deletePolicy, takenOverPolicy: takenOver, created: ref.createdBy(live.live())}
		if key.kind == "Namespace" && facts.needsNamespaceCheck() {
			facts.inUse = m.inUse(key.name, name, deleted)
		}
		action, _, _ := decideRemoval(facts)
		switch action {
		case removalLeave:
		case removalHandOver:
			live.owner = facts.sharedWith
		case removalRelease:
			live.owner = ""
		case removalDelete:
			m.checkDeletion(t, name, takenOver, key)
			deleted[live.uid] = true
			delete(m.objects, key)
			if key.kind == "Namespace" {
				for _, k := range memberKeys(m.objects) {
					if k.namespace == key.name {
						t.Fatalf("Work %s deleted Namespace %s, and with it %s", name, key.name, m.describe(k))
					}
				}
			}
		}
	}
}

func (m *memberModel) checkDeletion(t *rapid.T, name string, takenOver placementv1beta1.TakenOverPolicy, key objectKey) {
	for _, other := range sortedWorkNames(m.works) {
		rec := m.works[other].record
		if other == name || rec == nil {
			continue
		}
		if slices.ContainsFunc(rec.Applied, func(r ObjectRef) bool { return r.key() == key }) {
			t.Fatalf("Work %s deleted %s, which Work %s still applies", name, m.describe(key), other)
		}
	}
	if o := m.objects[key]; o.creator != name && takenOver != placementv1beta1.TakenOverPolicyDelete {
		t.Fatalf("Work %s (takenOver %q) deleted %s, which it did not create", name, takenOver, m.describe(key))
	}
}

func memberKeys(objs map[objectKey]*memberObj) []objectKey {
	out := make([]objectKey, 0, len(objs))
	for k := range objs {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return out
}

func sortedWorkNames(works map[string]*modelWork) []string {
	out := make([]string, 0, len(works))
	for k := range works {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// drawWork draws what a Work lists: for each namespace it places, the
// Namespace (create-only or not) and some of its ConfigMaps.
func drawWork(t *rapid.T) *modelWork {
	w := &modelWork{
		deletePolicy: rapid.SampledFrom([]placementv1beta1.DeletePropagationPolicy{
			placementv1beta1.DeletePropagationPolicyDelete, placementv1beta1.DeletePropagationPolicyAbandon}).Draw(t, "deletePolicy"),
		takenOver: rapid.SampledFrom([]placementv1beta1.TakenOverPolicy{
			placementv1beta1.TakenOverPolicyRelease, placementv1beta1.TakenOverPolicyDelete}).Draw(t, "takenOver"),
		takeOver: rapid.Bool().Draw(t, "takeOver"),
	}
	for _, ns := range modelNamespaces {
		if !rapid.Bool().Draw(t, "places "+ns) {
			continue
		}
		w.manifests = append(w.manifests, modelManifest{ref: namespaceRef(ns), createOnly: rapid.Bool().Draw(t, "createOnly "+ns)})
		for _, cm := range modelConfigMaps {
			if rapid.Bool().Draw(t, "places "+ns+"/"+cm) {
				w.manifests = append(w.manifests, modelManifest{ref: configMapRef(ns, cm)})
			}
		}
	}
	return w
}

func TestRemovalNeverDeletesAnotherWorksOrTheMembersObjects(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := &memberModel{objects: map[objectKey]*memberObj{}, works: map[string]*modelWork{}}
		memberCreate := func(t *rapid.T) {
			ns := rapid.SampledFrom(modelNamespaces).Draw(t, "namespace")
			nsKey := namespaceRef(ns).key()
			if m.objects[nsKey] == nil {
				m.create(nsKey, "", "")
			}
			if rapid.Bool().Draw(t, "and a ConfigMap") {
				key := configMapRef(ns, rapid.SampledFrom(modelConfigMaps).Draw(t, "configMap")).key()
				if m.objects[key] == nil {
					m.create(key, "", "")
				}
			}
		}
		// Some objects exist before any Work.
		for range rapid.IntRange(0, 3).Draw(t, "member objects") {
			memberCreate(t)
		}
		t.Repeat(map[string]func(*rapid.T){
			"apply a Work, new or edited": func(t *rapid.T) {
				name := rapid.SampledFrom(modelWorkNames).Draw(t, "work")
				w := drawWork(t)
				if old := m.works[name]; old != nil {
					w.record = old.record
				}
				m.works[name] = w
				m.apply(t, name, w)
			},
			"apply a Work again": func(t *rapid.T) {
				if len(m.works) == 0 {
					t.Skip("no Work")
				}
				name := rapid.SampledFrom(sortedWorkNames(m.works)).Draw(t, "work")
				m.apply(t, name, m.works[name])
			},
			"remove a Work": func(t *rapid.T) {
				if len(m.works) == 0 {
					t.Skip("no Work")
				}
				m.remove(t, rapid.SampledFrom(sortedWorkNames(m.works)).Draw(t, "work"))
			},
			"a member user creates objects": memberCreate,
			"a member user deletes a ConfigMap": func(t *rapid.T) {
				var cms []objectKey
				for _, k := range memberKeys(m.objects) {
					if k.kind == "ConfigMap" {
						cms = append(cms, k)
					}
				}
				if len(cms) == 0 {
					t.Skip("no ConfigMap")
				}
				delete(m.objects, rapid.SampledFrom(cms).Draw(t, "configMap"))
			},
		})
	})
}

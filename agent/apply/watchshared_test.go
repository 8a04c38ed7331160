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
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

func TestADeletedObjectWakesEveryWorkThatAppliedIt(t *testing.T) {
	var mu sync.Mutex
	var woken []string
	w := newWatcher(nil, func(work string) {
		mu.Lock()
		defer mu.Unlock()
		woken = append(woken, work)
	}, false)
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	ref := objectRef{gvr: gvr, namespace: "shop", name: "settings"}
	w.setApplied("first", []objectRef{ref})
	w.setApplied("second", []objectRef{ref, {gvr: gvr, namespace: "shop", name: "other"}})
	w.setApplied("third", []objectRef{{gvr: gvr, namespace: "shop", name: "other"}})
	obj := &unstructured.Unstructured{}
	obj.SetNamespace("shop")
	obj.SetName("settings")
	obj.SetAnnotations(map[string]string{AnnotationWork: "second"})
	take := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := woken
		woken = nil
		sort.Strings(out)
		return out
	}

	w.notifyDeleted(gvr, cache.DeletedFinalStateUnknown{Obj: obj})
	if diff := cmp.Diff([]string{"first", "second"}, take()); diff != "" {
		t.Errorf("deleting the shared ConfigMap woke (-want +got):\n%s", diff)
	}
	w.notify(obj)
	if diff := cmp.Diff([]string{"second"}, take()); diff != "" {
		t.Errorf("changing the shared ConfigMap woke (-want +got):\n%s", diff)
	}
	w.setApplied("first", nil)
	w.notifyDeleted(gvr, obj)
	if diff := cmp.Diff([]string{"second"}, take()); diff != "" {
		t.Errorf("deleting it after the first Work went woke (-want +got):\n%s", diff)
	}
}

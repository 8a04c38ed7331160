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

package resources

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/pkg/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, testenv.Options{}, func(e *testenv.Env) error { env = e; return nil }))
}

// A CRD installed on a running hub is watched as soon as it is Established, not
// at the next periodic rediscovery (set to an hour here): a placement that selects
// a namespace sees the new kind's objects in it at once.
func TestAnEstablishedCRDIsWatchedAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := NewWatcher(env.Config, testr.New(t), Options{RediscoveryInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[schema.GroupVersionKind]bool{}
	w.OnChange(func(c Change) {
		mu.Lock()
		defer mu.Unlock()
		seen[c.GVK] = true
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Start(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	<-w.started

	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.watcher.flotilla.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "watcher.flotilla.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
	scheme := testenv.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Create(t, c, crd)
	gadget := schema.GroupVersionKind{Group: "watcher.flotilla.io", Version: "v1", Kind: "Gadget"}
	testenv.Eventually(t, 30*time.Second, func() error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gadget)
		u.SetNamespace("default")
		u.SetName("g1")
		return client.IgnoreAlreadyExists(c.Create(ctx, u))
	})
	testenv.Eventually(t, 10*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		if !seen[gadget] {
			return fmt.Errorf("no change of a %s seen yet", gvkString(gadget))
		}
		return nil
	})
}

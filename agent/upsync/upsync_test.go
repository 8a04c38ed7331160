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

package upsync

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/flotilla-io/flotilla/agent/apply"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, testenv.Options{MemberCluster: true}, func(e *testenv.Env) error {
		env = e
		return nil
	}))
}

// recorder collects what a Syncer sends.
type recorder struct {
	mu   sync.Mutex
	sent []tunnel.Upsync
}

func (r *recorder) send(m tunnel.Upsync) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, m)
	return nil
}

// find returns a check that some message sent satisfies ok.
func (r *recorder) find(what string, ok func(tunnel.Upsync) bool) func() error {
	return func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, m := range r.sent {
			if ok(m) {
				return nil
			}
		}
		return fmt.Errorf("no %s sent yet (%d messages)", what, len(r.sent))
	}
}

func newSyncer(t *testing.T, rec *recorder) *Syncer {
	t.Helper()
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	s := New(dyn, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)), rec.send, testr.New(t))
	t.Cleanup(s.Close)
	return s
}

func manifest(t *testing.T, obj map[string]any) placementv1beta1.Manifest {
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return placementv1beta1.Manifest{RawExtension: runtimeRaw(raw)}
}

func TestObjectsBornOnTheMemberAreSentChangedAndRemoved(t *testing.T) {
	ctx := context.Background()
	const ns = "upsync"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	born := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "born", Labels: map[string]string{"upsync": "true"}}, Data: map[string]string{"k": "1"}}
	for _, cm := range []*corev1.ConfigMap{
		born,
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unlabelled"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "applied", Labels: map[string]string{"upsync": "true", apply.LabelAppliedBy: apply.AppliedByAgent}}},
	} {
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	work := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w"}}
	work.Spec.Workload.Manifests = []placementv1beta1.Manifest{manifest(t, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})}
	work.Spec.UpsyncSelectors = []placementv1beta1.UpsyncSelector{
		{Version: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"upsync": "true"}}},
		{Group: "example.com", Version: "v1", Kind: "Widget"},
	}
	rec := &recorder{}
	s := newSyncer(t, rec)
	s.Set(work)

	testenv.Eventually(t, 10*time.Second, rec.find("complete message listing only born, with the unserved kind", func(m tunnel.Upsync) bool {
		return m.Complete && len(m.Present) == 1 && m.Present[0].Name == "born" &&
			len(m.Problems) == 1 && strings.Contains(m.Problems[0], "example.com/v1 Widget: the member cluster does not serve it")
	}))
	born.Data["k"] = "2"
	if err := env.Client.Update(ctx, born); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, rec.find("the changed object", func(m tunnel.Upsync) bool {
		return len(m.Object) > 0 && strings.Contains(string(m.Object), `"k":"2"`) && !strings.Contains(string(m.Object), "managedFields")
	}))
	if err := env.Client.Delete(ctx, born); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, rec.find("the removal", func(m tunnel.Upsync) bool {
		return m.Deleted != nil && m.Deleted.Name == "born" && m.Deleted.Kind == "ConfigMap" && m.Deleted.Namespace == ns
	}))
	rec.mu.Lock()
	for _, m := range rec.sent {
		if strings.Contains(string(m.Object), `"name":"unlabelled"`) || strings.Contains(string(m.Object), `"name":"applied"`) {
			t.Errorf("sent an object no selector asks for, or one the agent applied: %s", m.Object)
		}
	}
	rec.sent = nil
	rec.mu.Unlock()

	// A new session gets everything again.
	s.Resync()
	testenv.Eventually(t, 10*time.Second, rec.find("a complete message after Resync", func(m tunnel.Upsync) bool { return m.Complete && len(m.Present) == 0 }))
}

func runtimeRaw(raw []byte) runtime.RawExtension { return runtime.RawExtension{Raw: raw} }

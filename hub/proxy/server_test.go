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

package proxy

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/pkg/poll"
)

// apiService is manifests/hub/proxy/apiservice.yaml.
func apiService() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": APIServiceName},
		"spec": map[string]any{
			"group": "proxy.flotilla.io", "version": "v1beta1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"service": map[string]any{"namespace": "flotilla-system", "name": "flotilla-hub", "port": int64(8445)},
		},
	}}
}

func TestServerWritesItsCAIntoTheAPIService(t *testing.T) {
	ctx := t.Context()
	svc := apiService()
	if err := env.Client.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, svc) })
	s := &Server{Client: env.Client, Log: testr.New(t)}

	for _, ca := range [][]byte{[]byte("first CA"), []byte("first CA"), []byte("rotated CA")} {
		if found, err := s.writeCABundle(ctx, APIServiceName, ca); err != nil || !found {
			t.Fatalf("writeCABundle = %v, %v; want found, no error", found, err)
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(svc.GroupVersionKind())
		if err := env.Client.Get(ctx, types.NamespacedName{Name: APIServiceName}, got); err != nil {
			t.Fatal(err)
		}
		if b, _, _ := unstructured.NestedString(got.Object, "spec", "caBundle"); b != base64.StdEncoding.EncodeToString(ca) {
			t.Errorf("caBundle = %q, want %q", b, ca)
		}
	}

	// Without an APIService there is nothing to write, and no error.
	if err := env.Client.Delete(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if found, err := s.writeCABundle(ctx, APIServiceName, []byte("x")); err != nil || found {
		t.Errorf("writeCABundle without the APIService = %v, %v; want not found, no error", found, err)
	}
}

// The how-to applies the APIService once the hub runs: the hub writes its CA
// into it within seconds, not at its next periodic check.
func TestServerWritesItsCAIntoAnAPIServiceAppliedAfterItStarted(t *testing.T) {
	ctx := t.Context()
	looked := &countingClient{Client: env.Client}
	s := &Server{Client: looked, Log: testr.New(t), CABundle: func() []byte { return []byte("the CA") }}
	go s.keepCABundle(ctx)
	poll.Eventually(t, 10*time.Second, 50*time.Millisecond, func() error {
		if looked.gets.Load() == 0 {
			return errors.New("the hub has not looked for the APIService yet")
		}
		return nil
	})
	svc := apiService()
	if err := env.Client.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), svc) })
	poll.Eventually(t, 3*caBundleRetry, 250*time.Millisecond, func() error {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(svc.GroupVersionKind())
		if err := env.Client.Get(ctx, types.NamespacedName{Name: APIServiceName}, got); err != nil {
			return err
		}
		if b, _, _ := unstructured.NestedString(got.Object, "spec", "caBundle"); b != base64.StdEncoding.EncodeToString([]byte("the CA")) {
			return fmt.Errorf("caBundle = %q, not yet the hub's CA", b)
		}
		return nil
	})
}

// countingClient counts the Gets that returned.
type countingClient struct {
	client.Client
	gets atomic.Int32
}

func (c *countingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	defer c.gets.Add(1)
	return c.Client.Get(ctx, key, obj, opts...)
}

func TestNextCABundleCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		found bool
		err   error
		want  time.Duration
	}{
		{"the CA is in the APIService: look again in a while", true, nil, caBundleCheck},
		{"no APIService yet: look again soon", false, nil, caBundleRetry},
		{"the write failed: try again soon", true, errors.New("conflict"), caBundleRetry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextCABundleCheck(tc.found, tc.err); got != tc.want {
				t.Errorf("nextCABundleCheck = %s, want %s", got, tc.want)
			}
		})
	}
}

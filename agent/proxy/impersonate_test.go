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
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
)

func TestImpersonate(t *testing.T) {
	cases := map[string]struct {
		in   http.Header
		id   Identity
		want http.Header
	}{
		"a user with groups is impersonated under the prefix": {
			in:   http.Header{"Accept": {"application/json"}},
			id:   Identity{User: "alice", Groups: []string{"devs", "system:authenticated"}},
			want: http.Header{"Accept": {"application/json"}, "Impersonate-User": {"p:alice"}, "Impersonate-Group": {"p:devs", "p:system:authenticated"}},
		},
		"credentials and identities a client sent are removed": {
			in: http.Header{
				"Authorization":            {"Bearer stolen"},
				"Proxy-Authorization":      {"Basic x"},
				"Impersonate-User":         {"admin"},
				"Impersonate-Group":        {"system:masters"},
				"Impersonate-Uid":          {"0"},
				"Impersonate-Extra-Scopes": {"all"},
				"X-Flotilla-Hub-User":      {"alice"},
				"X-Flotilla-Hub-Group":     {"devs"},
				"Content-Type":             {"application/json"},
			},
			id:   Identity{User: "alice"},
			want: http.Header{"Content-Type": {"application/json"}, "Impersonate-User": {"p:alice"}},
		},
		"headers not in canonical form are removed too": {
			in:   http.Header{"impersonate-user": {"admin"}, "authorization": {"Bearer x"}},
			id:   Identity{User: "bob"},
			want: http.Header{"Impersonate-User": {"p:bob"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := tc.in.Clone()
			Impersonate(h, tc.id, "p:")
			if diff := cmp.Diff(tc.want, h); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestsWithoutAHubUserAreForbidden(t *testing.T) {
	h, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, header := range map[string]http.Header{
		"no user":       {},
		"an empty user": {"X-Flotilla-Hub-User": {""}},
		"two users":     {"X-Flotilla-Hub-User": {"a", "b"}},
	} {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil)
			req.Header = header
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "X-Flotilla-Hub-User") {
				t.Errorf("got %d %s, want 403 naming the header", rec.Code, rec.Body.String())
			}
		})
	}
}

func TestNewRefusesABadPrefix(t *testing.T) {
	if _, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{IdentityPrefix: "system:x:"}); err == nil {
		t.Error("New accepted a prefix in system:")
	}
}

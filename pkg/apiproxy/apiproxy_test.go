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

package apiproxy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParsePath(t *testing.T) {
	type parsed struct {
		Member, Rest string
		OK           bool
	}
	cases := map[string]struct {
		path string
		want parsed
	}{
		"a member's API path":                      {"/apis/proxy.flotilla.io/v1beta1/memberclusters/m1/proxy/api/v1/pods", parsed{"m1", "/api/v1/pods", true}},
		"the proxy root is the member's root":      {"/apis/proxy.flotilla.io/v1beta1/memberclusters/m1/proxy", parsed{"m1", "/", true}},
		"the proxy root with a slash":              {"/apis/proxy.flotilla.io/v1beta1/memberclusters/m1/proxy/", parsed{"m1", "/", true}},
		"the member object itself is not proxied":  {"/apis/proxy.flotilla.io/v1beta1/memberclusters/m1", parsed{}},
		"another subresource is not proxied":       {"/apis/proxy.flotilla.io/v1beta1/memberclusters/m1/proxyx/api", parsed{}},
		"an empty member name is not proxied":      {"/apis/proxy.flotilla.io/v1beta1/memberclusters//proxy/api", parsed{}},
		"another group is not proxied":             {"/apis/cluster.flotilla.io/v1beta1/memberclusters/m1/proxy/api", parsed{}},
		"the path prefix of a member parses again": {PathPrefix("m-2") + "/apis/apps/v1", parsed{"m-2", "/apis/apps/v1", true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got parsed
			got.Member, got.Rest, got.OK = ParsePath(tc.path)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParsePath(%q) (-want +got):\n%s", tc.path, diff)
			}
		})
	}
}

func TestValidateIdentityPrefix(t *testing.T) {
	for prefix, ok := range map[string]bool{
		DefaultIdentityPrefix: true,
		"hub-a:":              true,
		"":                    false,
		"system:":             false,
		"system:hub:":         false,
	} {
		if err := ValidateIdentityPrefix(prefix); (err == nil) != ok {
			t.Errorf("ValidateIdentityPrefix(%q) = %v, want ok=%v", prefix, err, ok)
		}
	}
}

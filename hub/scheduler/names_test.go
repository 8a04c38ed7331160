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

package scheduler

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-io/flotilla/hub/pipeline"
)

func TestBindingName(t *testing.T) {
	long := strings.Repeat("a", 60)
	for _, tc := range []struct {
		name    string
		key     pipeline.PlacementKey
		group   string
		cluster string
		want    string
	}{
		{"a placement without '-' gets the readable name", pipeline.PlacementKey{Name: "web"}, "", "prod-1", "web-prod-1"},
		{"a placement with '-' gets a hashed name, as it could be read two ways", pipeline.PlacementKey{Name: "web-prod"}, "", "1", "web-prod-1.0864991295c6efc5"},
		{"a scheduling group's binding is hashed", pipeline.PlacementKey{Name: "web"}, "db", "prod-1", "web-db-prod-1.57c3ca79b7bd6733"},
		{"a ResourcePlacement's readable name leaves out its namespace", pipeline.PlacementKey{Namespace: "team-a", Name: "web"}, "", "prod-1", "web-prod-1"},
		{"a name past 63 characters is cut and hashed", pipeline.PlacementKey{Name: long}, "", "member-1", long[:46] + ".ccf42515614e3cd6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, BindingName(tc.key, tc.group, tc.cluster)); diff != "" {
				t.Errorf("BindingName (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBindingNamesNeverCollide(t *testing.T) {
	type tuple struct {
		key            pipeline.PlacementKey
		group, cluster string
	}
	long := strings.Repeat("x", 80)
	tuples := []tuple{
		// The collision of the old <placement>-<cluster> scheme.
		{pipeline.PlacementKey{Name: "web"}, "", "prod-1"},
		{pipeline.PlacementKey{Name: "web-prod"}, "", "1"},
		// A group against a placement with the group in its name.
		{pipeline.PlacementKey{Name: "web"}, "prod", "1"},
		{pipeline.PlacementKey{Name: "web"}, "", "prod"},
		// Same names in other namespaces.
		{pipeline.PlacementKey{Namespace: "a", Name: "web-prod"}, "", "1"},
		{pipeline.PlacementKey{Namespace: "b", Name: "web-prod"}, "", "1"},
		// Long names that share their first 46 characters.
		{pipeline.PlacementKey{Name: long}, "", "member-1"},
		{pipeline.PlacementKey{Name: long}, "", "member-2"},
		// A placement whose name ends like a hash.
		{pipeline.PlacementKey{Name: "web.0864991295c6efc5"}, "", "1"},
	}
	seen := map[string]tuple{}
	for _, tc := range tuples {
		for _, name := range []string{BindingName(tc.key, tc.group, tc.cluster), HashedBindingName(tc.key, tc.group, tc.cluster)} {
			if len(name) > 63 {
				t.Errorf("%+v: name %s is %d characters, more than a label value's 63", tc, name, len(name))
			}
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				t.Errorf("%+v: name %s is not a valid object name: %v", tc, name, errs)
			}
			if errs := validation.IsValidLabelValue(name); len(errs) > 0 {
				t.Errorf("%+v: name %s is not a valid label value: %v", tc, name, errs)
			}
			if other, ok := seen[name]; ok && other != tc {
				t.Errorf("%+v and %+v share the binding name %s", tc, other, name)
			}
			seen[name] = tc
		}
		// Namespaced bindings only meet in one namespace, but the names
		// differ anyway; the old scheme's name must never be a hashed one.
		old := tc.key.Name + "-" + tc.cluster
		if h := HashedBindingName(tc.key, tc.group, tc.cluster); h == old {
			t.Errorf("%+v: the hashed name %s is the old scheme's", tc, h)
		}
	}
}

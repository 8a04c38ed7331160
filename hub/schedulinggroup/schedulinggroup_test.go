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

package schedulinggroup

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

func manifest(raw string) placementv1beta1.Manifest {
	return placementv1beta1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(raw)}}
}

func names(ms []placementv1beta1.Manifest) []string {
	var out []string
	for _, m := range ms {
		var meta manifestMeta
		_ = json.Unmarshal(m.Raw, &meta)
		out = append(out, meta.Kind+"/"+meta.Metadata.Name)
	}
	return out
}

func TestFilter(t *testing.T) {
	ms := []placementv1beta1.Manifest{
		manifest(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}`),
		manifest(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"plain","namespace":"app"}}`),
		manifest(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"db","namespace":"app","annotations":{"placement.flotilla.io/scheduling-group":"database"}}}`),
		manifest(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"orphan","namespace":"app","annotations":{"placement.flotilla.io/scheduling-group":"nobody"}}}`),
	}
	for _, tc := range []struct {
		name  string
		group string
		want  []string
	}{
		{"the default group gets everything outside groups with selectors of their own", "", []string{"Namespace/app", "ConfigMap/plain", "ConfigMap/orphan"}},
		{"a group gets its objects and their namespaces", "database", []string{"Namespace/app", "ConfigMap/db"}},
		{"a group nothing belongs to gets nothing", "cache", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := names(Filter(ms, tc.group, []string{"cache", "database"}))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelectorsAndOwnGroups(t *testing.T) {
	crp := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		AnnotationDynamicSelectors: `[{"matchLabels":{"env":"dev"},"source":"PlacementWorkflow"},{"group":"database","matchLabels":{"tier":"db"}},{"group":"database","matchLabels":{"zone":"eu"}}]`,
	}}}
	sels, err := Selectors(crp)
	if err != nil {
		t.Fatal(err)
	}
	want := []framework.DynamicSelector{
		{MatchLabels: map[string]string{"env": "dev"}, Source: "PlacementWorkflow"},
		{Group: "database", MatchLabels: map[string]string{"tier": "db"}},
		{Group: "database", MatchLabels: map[string]string{"zone": "eu"}},
	}
	if diff := cmp.Diff(want, sels); diff != "" {
		t.Errorf("Selectors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"database"}, OwnGroups(sels)); diff != "" {
		t.Errorf("OwnGroups (-want +got):\n%s", diff)
	}
	crp.Annotations[AnnotationDynamicSelectors] = "not json"
	if _, err := Selectors(crp); err == nil {
		t.Error("a malformed annotation was accepted")
	}
}

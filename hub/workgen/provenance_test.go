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

package workgen

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

func TestStampProvenance(t *testing.T) {
	crp := provenance{hub: "fleet-a", placement: pipeline.PlacementKey{Name: "web"}, resourceIndex: "3"}
	tests := []struct {
		name string
		in   string
		p    provenance
		want string
	}{
		{
			name: "a ClusterResourcePlacement's manifest without annotations gets all three",
			in:   `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"}}`,
			p:    crp,
			want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"placement.flotilla.io/hub":"fleet-a","placement.flotilla.io/placement":"ClusterResourcePlacement/web","placement.flotilla.io/resource-index":"3"},"name":"c","namespace":"n"}}`,
		},
		{
			name: "a ResourcePlacement is named with its namespace and the resource's own annotations stay",
			in:   `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n","annotations":{"team":"a"}}}`,
			p:    provenance{hub: "fleet-a", placement: pipeline.PlacementKey{Namespace: "n", Name: "web"}, resourceIndex: "0"},
			want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"placement.flotilla.io/hub":"fleet-a","placement.flotilla.io/placement":"ResourcePlacement/n/web","placement.flotilla.io/resource-index":"0","team":"a"},"name":"c","namespace":"n"}}`,
		},
		{
			name: "provenance a selected resource carries from another placement is replaced",
			in:   `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","annotations":{"placement.flotilla.io/placement":"ClusterResourcePlacement/other","placement.flotilla.io/resource-index":"9"}}}`,
			p:    crp,
			want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"placement.flotilla.io/hub":"fleet-a","placement.flotilla.io/placement":"ClusterResourcePlacement/web","placement.flotilla.io/resource-index":"3"},"name":"c"}}`,
		},
		{
			name: "an empty hub name leaves the hub annotation out",
			in:   `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`,
			p:    provenance{placement: pipeline.PlacementKey{Name: "web"}, resourceIndex: "3"},
			want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"placement.flotilla.io/placement":"ClusterResourcePlacement/web","placement.flotilla.io/resource-index":"3"},"name":"c"}}`,
		},
		{
			name: "large integers keep every digit",
			in:   `{"apiVersion":"v1","kind":"X","metadata":{"name":"c"},"spec":{"n":9007199254740993}}`,
			p:    crp,
			want: `{"apiVersion":"v1","kind":"X","metadata":{"annotations":{"placement.flotilla.io/hub":"fleet-a","placement.flotilla.io/placement":"ClusterResourcePlacement/web","placement.flotilla.io/resource-index":"3"},"name":"c"},"spec":{"n":9007199254740993}}`,
		},
		{
			name: "a manifest that is not a JSON object is left for the agent to report",
			in:   `["not","an","object"]`,
			p:    crp,
			want: `["not","an","object"]`,
		},
		{
			name: "a manifest whose metadata is not an object is left for the agent to report",
			in:   `{"apiVersion":"v1","kind":"ConfigMap","metadata":"c"}`,
			p:    crp,
			want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":"c"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stampProvenance([]placementv1beta1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(tt.in)}}}, tt.p)
			if diff := cmp.Diff(tt.want, string(got[0].Raw)); diff != "" {
				t.Errorf("stampProvenance() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAWorkAHubBeforeProvenanceWroteIsKeptUntilItChanges(t *testing.T) {
	m := func(raw string) []placementv1beta1.Manifest {
		return []placementv1beta1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(raw)}}}
	}
	plain := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"},"data":{"a":"1"}}`
	reordered := `{"kind":"ConfigMap", "apiVersion":"v1","data":{"a":"1"},"metadata":{"namespace":"n","name":"c"}}`
	p := provenance{hub: "fleet-a", placement: pipeline.PlacementKey{Name: "web"}, resourceIndex: "1"}
	stamped := stampProvenance(m(plain), p)
	stampedOld := stampProvenance(m(plain), provenance{hub: "fleet-a", placement: pipeline.PlacementKey{Name: "web"}, resourceIndex: "0"})
	changed := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"},"data":{"a":"2"}}`
	existing := func(ms []placementv1beta1.Manifest) *placementv1beta1.Work {
		w := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.Now()}}
		w.Spec.Workload.Manifests = ms
		return w
	}
	for _, tc := range []struct {
		name string
		work *placementv1beta1.Work
		in   workSpec
		want []placementv1beta1.Manifest
	}{
		{"a new Work gets provenance", &placementv1beta1.Work{}, workSpec{manifests: stamped, unstamped: m(plain)}, stamped},
		{"a Work without provenance whose content is unchanged is kept as it is", existing(m(reordered)), workSpec{manifests: stamped, unstamped: m(plain)}, m(reordered)},
		{"a Work without provenance whose content changed gets provenance", existing(m(plain)), workSpec{manifests: stampProvenance(m(changed), p), unstamped: m(changed)}, stampProvenance(m(changed), p)},
		{"a Work with provenance of an older index gets the new index", existing(stampedOld), workSpec{manifests: stamped, unstamped: m(plain)}, stamped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := manifestsFor(tc.work, tc.in)
			if !sameManifests(got, tc.want) || !bytes.Equal(got[0].Raw, tc.want[0].Raw) {
				t.Errorf("manifestsFor = %s, want %s", got[0].Raw, tc.want[0].Raw)
			}
		})
	}
}

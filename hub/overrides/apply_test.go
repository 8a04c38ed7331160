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

package overrides

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

func member(name string, labels map[string]string) *clusterv1beta1.MemberCluster {
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	mc.Status.Properties = map[string]clusterv1beta1.PropertyValue{clusterv1beta1.PropertyNodeCount: {Value: "3"}}
	mc.Status.ResourceUsage.Available = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}
	return mc
}

func op(o placementv1beta1.JSONPatchOverrideOperator, path, value string) placementv1beta1.JSONPatchOverride {
	p := placementv1beta1.JSONPatchOverride{Operator: o, Path: path}
	if value != "" {
		p.Value = &apiextensionsv1.JSON{Raw: []byte(value)}
	}
	return p
}

func onLabels(l map[string]string) *placementv1beta1.ClusterSelector {
	return &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: l}}}}
}

func patchRule(sel *placementv1beta1.ClusterSelector, ops ...placementv1beta1.JSONPatchOverride) placementv1beta1.OverrideRule {
	return placementv1beta1.OverrideRule{ClusterSelector: sel, OverrideType: placementv1beta1.JSONPatchOverrideType, JSONPatchOverrides: ops}
}

func deleteRule(sel *placementv1beta1.ClusterSelector) placementv1beta1.OverrideRule {
	return placementv1beta1.OverrideRule{ClusterSelector: sel, OverrideType: placementv1beta1.DeleteOverrideType}
}

// ro is a ResourceOverride snapshot in ns app selecting ConfigMap app/cm.
func ro(name string, rules ...placementv1beta1.OverrideRule) Override {
	return Override{Snapshot: "app/" + name, Name: name, Namespace: "app",
		Selectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "cm"}}, Rules: rules}
}

const configMap = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"app","labels":{"app.kubernetes.io/name":"web"}},"data":{"a":"1"}}`

func TestApply(t *testing.T) {
	dev := member("member-1", map[string]string{"env": "dev", "zone": "us"})
	eu := member("member-2", map[string]string{"env": "prod", "zone": "eu"})
	tests := []struct {
		name        string
		overrides   []Override
		cluster     *clusterv1beta1.MemberCluster
		handOff     []placementv1beta1.HandOffValue
		wantData    map[string]string
		wantLabels  map[string]string
		wantDeleted bool
		wantApplied []string
		wantErr     string
	}{
		{
			name:      "an override that selects another object changes nothing",
			overrides: []Override{{Snapshot: "app/other", Namespace: "app", Selectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "other"}}, Rules: []placementv1beta1.OverrideRule{deleteRule(nil)}}},
			cluster:   dev, wantData: map[string]string{"a": "1"}, wantLabels: map[string]string{"app.kubernetes.io/name": "web"},
		},
		{
			name:      "a ClusterResourceOverride does not select a namespaced object",
			overrides: []Override{{Snapshot: "cro-0", Selectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "cm"}}, Rules: []placementv1beta1.OverrideRule{deleteRule(nil)}}},
			cluster:   dev, wantData: map[string]string{"a": "1"}, wantLabels: map[string]string{"app.kubernetes.io/name": "web"},
		},
		{
			name:      "add puts the member's name in a new key",
			overrides: []Override{ro("ro-0", patchRule(onLabels(map[string]string{"env": "dev"}), op("add", "/data/member", `"${MEMBER-CLUSTER-NAME}"`)))},
			cluster:   dev, wantData: map[string]string{"a": "1", "member": "member-1"}, wantLabels: map[string]string{"app.kubernetes.io/name": "web"},
			wantApplied: []string{"app/ro-0"},
		},
		{
			name:      "a rule whose selector does not match the cluster is skipped",
			overrides: []Override{ro("ro-0", patchRule(onLabels(map[string]string{"env": "dev"}), op("add", "/data/member", `"x"`)))},
			cluster:   eu, wantData: map[string]string{"a": "1"}, wantLabels: map[string]string{"app.kubernetes.io/name": "web"},
		},
		{
			name:      "replace and remove, with ~1 escaping a slash in a label key",
			overrides: []Override{ro("ro-0", patchRule(nil, op("replace", "/metadata/labels/app.kubernetes.io~1name", `"api"`), op("remove", "/data/a", "")))},
			cluster:   dev, wantData: map[string]string{}, wantLabels: map[string]string{"app.kubernetes.io/name": "api"},
			wantApplied: []string{"app/ro-0"},
		},
		{
			name: "label and property variables inside a longer string",
			overrides: []Override{ro("ro-0", patchRule(nil, op("add", "/data/where",
				`"${MEMBER-CLUSTER-LABEL-KEY-zone}-${MEMBER-CLUSTER-PROPERTY-flotilla.io/node-count}-${MEMBER-CLUSTER-PROPERTY-resources.flotilla.io/available-cpu}"`)))},
			cluster: eu, wantData: map[string]string{"a": "1", "where": "eu-3-1500m"}, wantLabels: map[string]string{"app.kubernetes.io/name": "web"},
			wantApplied: []string{"app/ro-0"},
		},
		{
			name:      "other ${...} text is left alone",
			overrides: []Override{ro("ro-0", patchRule(nil, op("add", "/data/script", `"echo ${HOME}"`)))},
			cluster:   dev, wantData: map[string]string{"a": "1", "script": "echo ${HOME}"}, wantLabels: map[string]string{"app.kubernetes.io/name": "web"},
			wantApplied: []string{"app/ro-0"},
		},
		{
			name:      "rules apply in order: a later rule sees an earlier one's result",
			overrides: []Override{ro("ro-0", patchRule(nil, op("add", "/data/b", `"2"`)), patchRule(nil, op("replace", "/data/b", `"3"`)))},
			cluster:   dev, wantData: map[string]string{"a": "1", "b": "3"}, wantLabels: map[string]string{"app.kubernetes.io/name": "web"},
			wantApplied: []string{"app/ro-0"},
		},
		{
			name:      "Delete keeps the object off the selected cluster",
			overrides: []Override{ro("ro-0", patchRule(nil, op("add", "/data/b", `"2"`)), deleteRule(onLabels(map[string]string{"zone": "eu"})))},
			cluster:   eu, wantDeleted: true, wantApplied: []string{"app/ro-0"},
		},
		{
			name:      "a missing label is an error naming it",
			overrides: []Override{ro("ro-0", patchRule(nil, op("add", "/data/b", `"${MEMBER-CLUSTER-LABEL-KEY-region}"`)))},
			cluster:   dev, wantErr: `override app/ro-0 rule 1 path /data/b on ConfigMap app/cm: variable ${MEMBER-CLUSTER-LABEL-KEY-region}: member cluster member-1 has no label "region"`,
		},
		{
			name:      "an unknown variable is an error naming it",
			overrides: []Override{ro("ro-0", patchRule(nil, op("add", "/data/b", `{"k":"${MEMBER-CLUSTER-REGION}"}`)))},
			cluster:   dev, wantErr: "unknown variable ${MEMBER-CLUSTER-REGION}",
		},
		{
			name:      "a property the cluster does not report is an error",
			overrides: []Override{ro("ro-0", patchRule(nil, op("add", "/data/b", `"${MEMBER-CLUSTER-PROPERTY-gpus}"`)))},
			cluster:   dev, wantErr: `does not report property "gpus"`,
		},
		{
			name:      "a hand-off variable is the value frozen on the binding",
			overrides: []Override{ro("ro-0", patchRule(nil, op("add", "/data/resume", `"from ${PLACEMENT-HANDOFF-ckpt}"`)))},
			cluster:   eu, handOff: []placementv1beta1.HandOffValue{{Name: "ckpt", Value: "ckpt-7", Cluster: "member-1"}},
			wantData: map[string]string{"a": "1", "resume": "from ckpt-7"}, wantLabels: map[string]string{"app.kubernetes.io/name": "web"},
			wantApplied: []string{"app/ro-0"},
		},
		{
			name:      "a hand-off variable frozen before any cluster reported is empty",
			overrides: []Override{ro("ro-0", patchRule(nil, op("add", "/data/resume", `"${PLACEMENT-HANDOFF-ckpt}"`)))},
			cluster:   dev, handOff: []placementv1beta1.HandOffValue{{Name: "ckpt"}},
			wantData: map[string]string{"a": "1", "resume": ""}, wantLabels: map[string]string{"app.kubernetes.io/name": "web"},
			wantApplied: []string{"app/ro-0"},
		},
		{
			name:      "a hand-off variable the binding does not carry is an error naming it",
			overrides: []Override{ro("ro-0", patchRule(nil, op("add", "/data/resume", `"${PLACEMENT-HANDOFF-epoch}"`)))},
			cluster:   dev, handOff: []placementv1beta1.HandOffValue{{Name: "ckpt"}},
			wantErr: `variable ${PLACEMENT-HANDOFF-epoch}: the binding to member-1 carries no hand-off value "epoch"`,
		},
		{
			name:      "a path that does not exist is an error with override, rule and path",
			overrides: []Override{ro("ro-0", patchRule(nil, op("add", "/data/b", `"2"`)), patchRule(nil, op("replace", "/spec/replicas", `3`)))},
			cluster:   dev, wantErr: "override app/ro-0 rule 2 path /spec/replicas on ConfigMap app/cm: ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply([]byte(configMap), tt.overrides, Target{Cluster: tt.cluster, HandOff: tt.handOff})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Apply() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply() error = %v", err)
			}
			if diff := cmp.Diff(tt.wantApplied, got.Applied); diff != "" {
				t.Errorf("Applied (-want +got):\n%s", diff)
			}
			if got.Deleted != tt.wantDeleted {
				t.Fatalf("Deleted = %v, want %v", got.Deleted, tt.wantDeleted)
			}
			if tt.wantDeleted {
				return
			}
			var cm corev1.ConfigMap
			if err := json.Unmarshal(got.Object, &cm); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantData, cm.Data); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLabels, cm.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSubstituteJSONEscapes(t *testing.T) {
	mc := member("m", map[string]string{"quote": `a"b\c`})
	got, err := substituteJSON([]byte(`{"v":"${MEMBER-CLUSTER-LABEL-KEY-quote}"}`), Target{Cluster: mc})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"v":"a\"b\\c"}`; string(got) != want {
		t.Errorf("substituteJSON() = %s, want %s", got, want)
	}
}

func TestApplicable(t *testing.T) {
	dev := member("member-1", map[string]string{"env": "dev"})
	objects := objectsOf(t, configMap)
	forOther := ro("ro-b", deleteRule(nil))
	forOther.Placement = "other"
	notDev := ro("ro-c", deleteRule(onLabels(map[string]string{"env": "prod"})))
	cro := Override{Snapshot: "cro-0", Name: "cro-0", Selectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "Namespace", Name: "app"}}, Rules: []placementv1beta1.OverrideRule{deleteRule(nil)}}
	got, err := Applicable([]Override{ro("ro-a", deleteRule(nil)), forOther, notDev, cro}, pipeline.PlacementKey{Name: "web"}, objects, dev)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, o := range got {
		names = append(names, o.Snapshot)
	}
	if diff := cmp.Diff([]string{"app/ro-a"}, names); diff != "" {
		t.Errorf("Applicable() (-want +got):\n%s", diff)
	}
	c, n := Refs(got)
	if diff := cmp.Diff([]placementv1beta1.NamespacedName{{Namespace: "app", Name: "ro-a"}}, n); diff != "" || c != nil {
		t.Errorf("Refs() = %v, %v", c, n)
	}
}

func TestSort(t *testing.T) {
	os := []Override{{Snapshot: "b/ro", Namespace: "b"}, {Snapshot: "z-cro"}, {Snapshot: "a/ro", Namespace: "a"}, {Snapshot: "a-cro"}}
	Sort(os)
	var got []string
	for _, o := range os {
		got = append(got, o.Snapshot)
	}
	if diff := cmp.Diff([]string{"a-cro", "z-cro", "a/ro", "b/ro"}, got); diff != "" {
		t.Errorf("Sort() (-want +got):\n%s", diff)
	}
}

func objectsOf(t *testing.T, manifests ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, m := range manifests {
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON([]byte(m)); err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

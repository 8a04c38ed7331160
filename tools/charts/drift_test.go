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

package charts

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func mustParse(t *testing.T, docs string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := Parse([]byte(docs))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

const manifestsSA = `apiVersion: v1
kind: Namespace
metadata: {name: flotilla-system}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: flotilla-hub
  namespace: flotilla-system
  labels: {app.kubernetes.io/name: flotilla-hub}
`

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chart string
		want  []string
	}{
		{
			name: "a chart that renders the manifests with Helm's labels and without the Namespace agrees",
			chart: `apiVersion: v1
kind: ServiceAccount
metadata:
  name: flotilla-hub
  namespace: flotilla-system
  labels:
    app.kubernetes.io/name: flotilla-hub
    helm.sh/chart: flotilla-hub-0.1.0
    app.kubernetes.io/managed-by: Helm
    app.kubernetes.io/instance: flotilla-hub
    app.kubernetes.io/version: dev
`,
		},
		{
			name: "a label of the chart's own is a difference",
			chart: `apiVersion: v1
kind: ServiceAccount
metadata:
  name: flotilla-hub
  namespace: flotilla-system
  labels: {app.kubernetes.io/name: flotilla-hub, team: a}
`,
			want: []string{"ServiceAccount flotilla-system/flotilla-hub differs"},
		},
		{
			name:  "an object the chart does not render is a difference",
			chart: "",
			want:  []string{"ServiceAccount flotilla-system/flotilla-hub: in the manifests, not rendered by the chart"},
		},
		{
			name: "an object only the chart renders is a difference",
			chart: `apiVersion: v1
kind: ServiceAccount
metadata:
  name: flotilla-hub
  namespace: flotilla-system
  labels: {app.kubernetes.io/name: flotilla-hub}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: flotilla-hub, namespace: flotilla-system}
`,
			want: []string{"PodDisruptionBudget.policy flotilla-system/flotilla-hub: rendered by the chart, not in the manifests"},
		},
		{
			name: "the same name in another namespace is another object",
			chart: `apiVersion: v1
kind: ServiceAccount
metadata:
  name: flotilla-hub
  namespace: other
  labels: {app.kubernetes.io/name: flotilla-hub}
`,
			want: []string{
				"ServiceAccount flotilla-system/flotilla-hub: in the manifests, not rendered by the chart",
				"ServiceAccount other/flotilla-hub: rendered by the chart, not in the manifests",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diffs := Diff(mustParse(t, manifestsSA), mustParse(t, tc.chart))
			// A field-level difference is reported with cmp's diff after its
			// first line; compare the first lines.
			var got []string
			for _, d := range diffs {
				got = append(got, strings.SplitN(d, " (-manifests +chart)", 2)[0])
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Diff (-want +got):\n%s\nfull: %q", d, diffs)
			}
		})
	}
}

func TestParseReadsNumbersAlikeFromAnyYAML(t *testing.T) {
	a := mustParse(t, "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {ports: [{port: 8443}]}\n")
	b, err := canonical(mustParse(t, "{\"apiVersion\": \"v1\", \"kind\": \"Service\", \"metadata\": {\"name\": \"a\"}, \"spec\": {\"ports\": [{\"port\": 8443}]}}\n---\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(a[0].Object, b[0].Object); d != "" || len(b) != 1 {
		t.Errorf("(-yaml +json):\n%s (%d objects)", d, len(b))
	}
}

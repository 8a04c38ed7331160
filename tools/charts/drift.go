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
	"fmt"
	"sort"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// HelmLabels are the labels the charts put on every object's metadata besides
// the manifests' own (charts/*/templates/_helpers.tpl, helmLabels).
var HelmLabels = []string{
	"helm.sh/chart",
	"app.kubernetes.io/managed-by",
	"app.kubernetes.io/instance",
	"app.kubernetes.io/version",
}

// Diff compares what manifests/ applies (manifests) with what a chart renders
// (chart) and returns one message per difference; none when they agree.
//
//   - A Namespace of the manifests is not expected from the chart: Helm
//     (--create-namespace) or `agent join` makes it before the chart is installed.
//   - HelmLabels on the metadata of the chart's objects are left out.
//   - Everything else is equal: every other object of the manifests is rendered,
//     field for field, and the chart renders nothing more.
//
// Objects are matched by group, kind, namespace and name; their order does not
// matter.
func Diff(manifests, chart []*unstructured.Unstructured) []string {
	want := map[string]*unstructured.Unstructured{}
	for _, o := range manifests {
		if o.GetAPIVersion() == "v1" && o.GetKind() == "Namespace" {
			continue
		}
		want[key(o)] = o
	}
	got := map[string]*unstructured.Unstructured{}
	for _, o := range chart {
		o = o.DeepCopy()
		labels := o.GetLabels()
		for _, l := range HelmLabels {
			delete(labels, l)
		}
		if len(labels) == 0 {
			unstructured.RemoveNestedField(o.Object, "metadata", "labels")
		} else {
			o.SetLabels(labels)
		}
		got[key(o)] = o
	}
	var diffs []string
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			diffs = append(diffs, k+": in the manifests, not rendered by the chart")
			continue
		}
		if d := cmp.Diff(w.Object, g.Object); d != "" {
			diffs = append(diffs, fmt.Sprintf("%s differs (-manifests +chart):\n%s", k, d))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, k+": rendered by the chart, not in the manifests")
		}
	}
	sort.Strings(diffs)
	return diffs
}

// key names an object by group, kind, namespace and name.
func key(o *unstructured.Unstructured) string {
	gk := o.GroupVersionKind().GroupKind().String()
	if ns := o.GetNamespace(); ns != "" {
		return gk + " " + ns + "/" + o.GetName()
	}
	return gk + " " + o.GetName()
}

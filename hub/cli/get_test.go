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

package cli

import (
	"bytes"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// podTable is a member's server-side table of pods, as kube-apiserver
// answers with includeObject=Metadata.
func podTable(rows ...[]any) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string"}, {Name: "Ready", Type: "string"}, {Name: "Status", Type: "string"},
		{Name: "Restarts", Type: "string"}, {Name: "Age", Type: "string"}, {Name: "IP", Type: "string", Priority: 1},
	}}
	for _, r := range rows {
		t.Rows = append(t.Rows, metav1.TableRow{Cells: r[1:], Object: runtime.RawExtension{Raw: []byte(`{"metadata":{"namespace":"` + r[0].(string) + `"}}`)}})
	}
	return t
}

// The fleet of the get golden tests: two members that answered, one that
// did not.
func fleetPods() []memberList {
	return []memberList{
		{Cluster: "member-1", Table: podTable(
			[]any{"web", "web-7d4b9c-abcde", "1/1", "Running", float64(0), "5m", "10.0.0.4"},
			[]any{"web", "web-7d4b9c-fghij", "1/1", "Running", float64(2), "5m", nil},
		)},
		{Cluster: "member-2", Error: `pods is forbidden: User "flotilla:hub:alice" cannot list resource "pods" in API group "" in the namespace "web"`},
		{Cluster: "member-3", Table: podTable([]any{"web", "web-5f6a7b-klmno", "0/1", "Pending", float64(0), "12s", ""})},
	}
}

func TestGetPrintsOneTableWithTheClusterFirst(t *testing.T) {
	for _, tc := range []struct {
		name, output  string
		allNamespaces bool
	}{
		{"get-pods", "", false},
		{"get-pods-all-namespaces-wide", "wide", true},
		{"get-pods-yaml", "yaml", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := fleetPods()
			if tc.output == "yaml" {
				// -o yaml and json ask for the objects, not tables.
				results[0].Table, results[0].Items = nil, []map[string]any{{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "web-7d4b9c-abcde", "namespace": "web"}}}
				results[2].Table, results[2].Items = nil, []map[string]any{}
			}
			var out bytes.Buffer
			if err := printMemberLists(&out, results, tc.output, tc.allNamespaces); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, out.String())
		})
	}
}

func TestGetFailsOnlyWhenEveryMemberFailed(t *testing.T) {
	// Against the test API server, which serves no proxy: every member fails.
	memberCluster(t, "get-unreachable", map[string]string{"fleet": "get"}, nil, metav1.ConditionTrue, metav1.ConditionTrue)
	out, err := runCommand(t, "get", "pods", "--clusters", "fleet=get", "--member-timeout", "5s")
	if err == nil {
		t.Fatalf("get succeeded with every member failing:\n%s", out)
	}
	if !bytes.Contains([]byte(out), []byte("get-unreachable   error: ")) {
		t.Errorf("the failed member is not listed with its error:\n%s", out)
	}
	if _, err := runCommand(t, "get", "pods", "--clusters", "fleet=none"); err == nil || err.Error() != "no member cluster has labels fleet=none" {
		t.Errorf("get with no member selected: %v, want no member cluster has labels fleet=none", err)
	}
}

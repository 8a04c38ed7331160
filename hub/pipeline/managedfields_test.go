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

package pipeline

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFieldPaths(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fieldsV1 string
		want     [][]string
	}{
		{
			name:     "a condition is named by its type and owns its fields",
			fieldsV1: `{"f:status":{"f:conditions":{"k:{\"type\":\"Scheduled\"}":{".":{},"f:reason":{},"f:status":{}}}}}`,
			want:     [][]string{{"status", "conditions", "Scheduled"}, {"status", "conditions", "Scheduled", "reason"}, {"status", "conditions", "Scheduled", "status"}},
		},
		{
			name:     "a finalizer is named by its value and the list by itself",
			fieldsV1: `{"f:metadata":{"f:finalizers":{".":{},"v:\"placement.flotilla.io/work-cleanup\"":{}}}}`,
			want:     [][]string{{"metadata", "finalizers"}, {"metadata", "finalizers", "placement.flotilla.io/work-cleanup"}},
		},
		{
			name:     "a label key with dots and slashes is one segment",
			fieldsV1: `{"f:metadata":{"f:labels":{"f:placement.flotilla.io/is-latest-snapshot":{}}}}`,
			want:     [][]string{{"metadata", "labels", "placement.flotilla.io/is-latest-snapshot"}},
		},
		{
			name:     "an item key of several fields is kept whole",
			fieldsV1: `{"f:spec":{"f:taints":{"k:{\"effect\":\"NoSchedule\",\"key\":\"k\"}":{}}}}`,
			want:     [][]string{{"spec", "taints", `{"effect":"NoSchedule","key":"k"}`}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FieldPaths([]byte(tc.fieldsV1))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FieldPaths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSplitPath(t *testing.T) {
	got := splitPath("metadata.finalizers[placement.flotilla.io/work-cleanup]")
	want := []string{"metadata", "finalizers", "placement.flotilla.io/work-cleanup"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("splitPath (-want +got):\n%s", diff)
	}
}

func TestViolations(t *testing.T) {
	entry := func(manager, fieldsV1 string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: metav1.NewFieldsV1(fieldsV1)}
	}
	isUser := func(m string) bool { return m == "kubectl" }
	for _, tc := range []struct {
		name    string
		kind    string
		entries []metav1.ManagedFieldsEntry
		want    []string
	}{
		{
			name: "each manager writing its own conditions is fine",
			kind: "ClusterResourceBinding",
			entries: []metav1.ManagedFieldsEntry{
				entry(ManagerScheduler, `{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"Scheduled\"}":{".":{},"f:status":{}}}}}`),
				entry(ManagerWorkGenerator, `{"f:status":{"f:conditions":{"k:{\"type\":\"Applied\"}":{".":{},"f:status":{}}},"f:failedPlacements":{}}}`),
			},
		},
		{
			name: "a manager writing another's condition is reported",
			kind: "ClusterResourceBinding",
			entries: []metav1.ManagedFieldsEntry{
				entry(ManagerFailover, `{"f:status":{"f:conditions":{"k:{\"type\":\"Scheduled\"}":{"f:status":{}}}}}`),
			},
			want: []string{
				"flotilla-failover (Update) owns status.conditions[Scheduled].status of a ClusterResourceBinding, which no row gives it",
			},
		},
		{
			name: "the namespaced kind has the cluster-scoped kind's rows",
			kind: "ResourceBinding",
			entries: []metav1.ManagedFieldsEntry{
				entry(ManagerWorkGenerator, `{"f:metadata":{"f:finalizers":{".":{},"v:\"placement.flotilla.io/work-cleanup\"":{}}}}`),
			},
		},
		{
			name: "a manager that writes nothing of the kind is reported, and users are not checked",
			kind: "Work",
			entries: []metav1.ManagedFieldsEntry{
				entry("kubectl", `{"f:spec":{},"f:status":{}}`),
				entry("app.test", `{"f:spec":{}}`),
			},
			want: []string{"app.test (Update) is no writer of a Work"},
		},
		{
			name: "a label the table gives is fine, another is reported",
			kind: "MemberCluster",
			entries: []metav1.ManagedFieldsEntry{
				entry(ManagerMembership, `{"f:metadata":{"f:labels":{".":{},"f:cluster.flotilla.io/name":{},"f:team":{}}}}`),
			},
			want: []string{"flotilla-membership (Update) owns metadata.labels[team] of a MemberCluster, which no row gives it"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := OwnershipOf(tc.kind)
			if k == nil {
				t.Fatalf("no table for %s", tc.kind)
			}
			if diff := cmp.Diff(tc.want, k.Violations(tc.entries, isUser)); diff != "" {
				t.Errorf("Violations (-want +got):\n%s", diff)
			}
		})
	}
}

// Every row names a writer the hub has (or the user) and a way of writing, and
// only a deletion has no field.
func TestOwnershipRowsAreWellFormed(t *testing.T) {
	writers := map[string]bool{WriterUser: true}
	for _, w := range Writers {
		writers[w.Manager] = true
	}
	for _, k := range Ownership {
		for _, r := range k.Rows {
			if !writers[r.Writer] {
				t.Errorf("%s %q: unknown writer %q", k.Kind, r.Field, r.Writer)
			}
			if (r.Field == "") != (r.How == HowDelete) {
				t.Errorf("%s %q by %s: only a deletion has no field", k.Kind, r.Field, r.Writer)
			}
			if (r.Writer == WriterUser) != (r.How == HowUser) {
				t.Errorf("%s %q by %s: only users write %q", k.Kind, r.Field, r.Writer, HowUser)
			}
		}
	}
}

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

package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReplaceSection(t *testing.T) {
	const begin, end = "<!-- BEGIN -->\n", "<!-- END -->\n"
	for _, tc := range []struct {
		name, page, want, wantErr string
	}{
		{
			name: "what lies between the markers is replaced and the rest kept",
			page: "intro\n<!-- BEGIN -->\nold\n<!-- END -->\noutro\n",
			want: "intro\n<!-- BEGIN -->\nnew\n<!-- END -->\noutro\n",
		},
		{
			name: "empty markers are filled",
			page: "<!-- BEGIN -->\n<!-- END -->\n",
			want: "<!-- BEGIN -->\nnew\n<!-- END -->\n",
		},
		{name: "a page without the markers is an error", page: "intro\n", wantErr: "no line"},
		{name: "a begin marker without an end is an error", page: "<!-- BEGIN -->\nold\n", wantErr: "no line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := replaceSection([]byte(tc.page), begin, end, "new\n")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("replaceSection (-want +got):\n%s", diff)
			}
		})
	}
}

// The generated tables name every kind of the table and every writer.
func TestOwnershipTablesNameEveryKindAndWriter(t *testing.T) {
	got := renderOwnership()
	for _, want := range []string{"### ClusterResourceBinding (and `ResourceBinding`)", "### MemberCluster", "### Work",
		"`flotilla-tunnelserver`", "`status.conditions[Scheduled]`", "JSON patch, conditional on spec.state"} {
		if !strings.Contains(got, want) {
			t.Errorf("the tables do not contain %q", want)
		}
	}
}

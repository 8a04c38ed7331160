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
)

func TestValuesTable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		values  string
		want    string
		wantErr string
	}{
		{
			name: "commented maps are walked into and uncommented ones are given whole",
			values: `# The chart's header, not a value's.

image:
  # Image repository.
  repository: flotilla-hub
  # Image tag. Empty: the chart's appVersion.
  tag: ""
# Hub replicas.
replicas: 2
# Resources of the hub
# container.
resources:
  limits: {memory: 1Gi}
# Extra flags, as ["--a|b"].
extraArgs: []
`,
			want: "| Value | Default | Description |\n| --- | --- | --- |\n" +
				"| `image.repository` | `\"flotilla-hub\"` | Image repository. |\n" +
				"| `image.tag` | `\"\"` | Image tag. Empty: the chart's appVersion. |\n" +
				"| `replicas` | `2` | Hub replicas. |\n" +
				"| `resources` | `{\"limits\":{\"memory\":\"1Gi\"}}` | Resources of the hub container. |\n" +
				"| `extraArgs` | `[]` | Extra flags, as [\"--a\\|b\"]. |\n",
		},
		{
			name:    "a value without a comment is an error naming it",
			values:  "image:\n  # Repository.\n  repository: a\n  tag: \"\"\n",
			wantErr: "value image.tag has no comment",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ValuesTable([]byte(tc.values))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ValuesTable (-want +got):\n%s", d)
			}
		})
	}
}

func TestReplaceTableKeepsWhatIsAroundTheMarkers(t *testing.T) {
	begin, end := Markers("flotilla-hub")
	doc := "# Helm\n\n" + begin + "old\n" + end + "\nmore\n"
	got, err := ReplaceTable(doc, "flotilla-hub", "new\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Helm\n\n" + begin + "new\n" + end + "\nmore\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := ReplaceTable("no markers", "flotilla-hub", "new\n"); err == nil {
		t.Error("a document without the markers: no error")
	}
}

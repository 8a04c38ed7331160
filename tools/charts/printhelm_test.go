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
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/agent/install"
)

func TestAgentJoinPrintHelmNamesTheImageAndProfile(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		image, profile, kubeconfig string
		want                       string
	}{
		{
			name:  "a tagged image from a registry with a port, least privilege, on a kubeconfig",
			image: "registry.example.com:5000/flotilla/flotilla-agent:v1.2.3", profile: "least-privilege", kubeconfig: "member 1.kubeconfig",
			want: "helm upgrade --install flotilla-agent charts/flotilla-agent --namespace flotilla-system --set image.repository=registry.example.com:5000/flotilla/flotilla-agent --set image.tag=v1.2.3 --set rbacProfile=least-privilege --kubeconfig 'member 1.kubeconfig'",
		},
		{
			name:  "an image by digest",
			image: "flotilla-agent@sha256:0123abcd",
			want:  "helm upgrade --install flotilla-agent charts/flotilla-agent --namespace flotilla-system --set image.repository=flotilla-agent --set image.digest=sha256:0123abcd --set rbacProfile=full",
		},
		{
			name:  "an image without a tag is latest, as for kubectl",
			image: "localhost:5000/flotilla-agent",
			want:  "helm upgrade --install flotilla-agent charts/flotilla-agent --namespace flotilla-system --set image.repository=localhost:5000/flotilla-agent --set image.tag=latest --set rbacProfile=full",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := install.HelmCommand(tc.image, tc.profile, tc.kubeconfig)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("HelmCommand (-want +got):\n%s", d)
			}
		})
	}
	if _, err := install.HelmCommand("", "admin", ""); err == nil || !strings.Contains(err.Error(), `unknown RBAC profile "admin"`) {
		t.Errorf("an unknown profile: error %v", err)
	}
}

// What `agent join --print-helm` prints installs what `agent join --install`
// applies with the same --image and --rbac-profile.
func TestAgentJoinPrintHelmInstallsWhatInstallApplies(t *testing.T) {
	bin, root := helm(t)
	for _, tc := range []struct{ image, profile string }{
		{"", install.ProfileFull},
		{"registry.example.com:5000/flotilla/flotilla-agent:v1.2.3", install.ProfileLeastPrivilege},
		{"flotilla-agent@sha256:0123abcd", install.ProfileFull},
	} {
		t.Run(tc.profile+" "+tc.image, func(t *testing.T) {
			command, err := install.HelmCommand(tc.image, tc.profile, "")
			if err != nil {
				t.Fatal(err)
			}
			r := Release{Helm: bin, Chart: filepath.Join(root, AgentChart)}
			fields := strings.Fields(command)
			for i := range fields {
				if fields[i] == "--set" {
					r.Set = append(r.Set, fields[i+1])
				}
			}
			got, err := Template(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			image := tc.image
			if image == "" {
				if image, err = install.DefaultImage(); err != nil {
					t.Fatal(err)
				}
			}
			objs, err := install.Render(tc.profile, image)
			if err != nil {
				t.Fatal(err)
			}
			want, err := canonical(objs)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range Diff(want, got) {
				t.Errorf("%s: %s", command, d)
			}
		})
	}
}

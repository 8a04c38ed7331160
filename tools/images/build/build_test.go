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

package build

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func binaries(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	for _, b := range []string{"hub", "agent"} {
		if err := os.WriteFile(filepath.Join(dir, b), []byte(content+b), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestImagesAreReproducible(t *testing.T) {
	bin := binaries(t, "v1 of ")
	first, err := Images(Options{BinDir: bin, OutDir: t.TempDir(), Tag: "t1", Version: "v1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := Images(Options{BinDir: bin, OutDir: t.TempDir(), Tag: "t1", Version: "v1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range first {
		if first[i].Digest != second[i].Digest || first[i].Ref != second[i].Ref {
			t.Errorf("%s: %s then %s from the same binaries", first[i].Ref, first[i].Digest, second[i].Digest)
		}
	}
	if first[0].Ref != "docker.io/library/flotilla-hub:t1" || first[1].Ref != "docker.io/library/flotilla-agent:t1" {
		t.Errorf("refs = %s, %s", first[0].Ref, first[1].Ref)
	}
	other, err := Images(Options{BinDir: binaries(t, "v2 of "), OutDir: t.TempDir(), Tag: "t1", Version: "v1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	if other[0].Digest == first[0].Digest {
		t.Error("other binaries gave the same hub digest")
	}
}

func TestImagesWithoutBinariesSaysWhatToBuild(t *testing.T) {
	_, err := Images(Options{BinDir: t.TempDir(), OutDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "static linux/amd64 binaries") {
		t.Fatalf("err = %v", err)
	}
}

func TestSetKustomizeTag(t *testing.T) {
	const base = `# comment kept
resources:
- deployment.yaml
images:
- name: other
  newTag: keep
- name: flotilla-hub
  newName: registry.example/flotilla-hub
  newTag: dev
`
	for _, tc := range []struct {
		name, image, tag string
		wantChanged      bool
		wantErr          string
		want             string
	}{
		{name: "a new tag replaces only that entry's", image: "flotilla-hub", tag: "v2", wantChanged: true,
			want: strings.Replace(base, "newTag: dev", "newTag: v2", 1)},
		{name: "the same tag changes nothing", image: "flotilla-hub", tag: "dev", want: base},
		{name: "an image without an entry is an error", image: "flotilla-agent", tag: "v2", wantErr: "no images entry named flotilla-agent", want: base},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "kustomization.yaml")
			if err := os.WriteFile(file, []byte(base), 0o644); err != nil {
				t.Fatal(err)
			}
			changed, err := SetKustomizeTag(file, tc.image, tc.tag)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
			got, _ := os.ReadFile(file)
			if string(got) != tc.want {
				t.Errorf("file:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestSetChartAppVersion(t *testing.T) {
	const base = "apiVersion: v2\nname: flotilla-hub\n# The tag the chart deploys.\nappVersion: \"dev\"\nversion: 0.1.0\n"
	for _, tc := range []struct {
		name, version string
		wantChanged   bool
		want          string
	}{
		{name: "a new version replaces appVersion only", version: "kind-abc", wantChanged: true, want: strings.Replace(base, `"dev"`, `"kind-abc"`, 1)},
		{name: "the same version changes nothing", version: "dev", want: base},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "Chart.yaml")
			if err := os.WriteFile(file, []byte(base), 0o644); err != nil {
				t.Fatal(err)
			}
			changed, err := SetChartAppVersion(file, tc.version)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(file)
			if changed != tc.wantChanged || string(got) != tc.want {
				t.Errorf("changed %v, file:\n%s\nwant %v:\n%s", changed, got, tc.wantChanged, tc.want)
			}
		})
	}
	file := filepath.Join(t.TempDir(), "Chart.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: v2\nname: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := SetChartAppVersion(file, "v1"); err == nil || !strings.Contains(err.Error(), "no line `appVersion: ...`") {
		t.Errorf("a chart without appVersion: err %v", err)
	}
}

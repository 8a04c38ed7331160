package build

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeBinaries writes stand-ins for the static hub and agent binaries.
func fakeBinaries(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"hub", "agent"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name+content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestImagesAreReproducible(t *testing.T) {
	bin := fakeBinaries(t, "-1")
	opts := Options{BinDir: bin, Tag: "t1", Version: "v1.0.0", Revision: "abc", Created: time.Unix(1700000000, 0)}

	opts.OutDir = t.TempDir()
	first, err := Images(opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.OutDir = t.TempDir()
	second, err := Images(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2 || len(second) != 2 {
		t.Fatalf("built %d and %d images, want 2 each", len(first), len(second))
	}
	for i := range first {
		if first[i].Ref != second[i].Ref || first[i].Digest != second[i].Digest {
			t.Errorf("same inputs, different images: %s %s and %s %s", first[i].Ref, first[i].Digest, second[i].Ref, second[i].Digest)
		}
	}
	wantRefs := []string{"docker.io/library/flotilla-hub:t1", "docker.io/library/flotilla-agent:t1"}
	gotRefs := []string{first[0].Ref, first[1].Ref}
	if diff := cmp.Diff(wantRefs, gotRefs); diff != "" {
		t.Errorf("refs (-want +got):\n%s", diff)
	}
	if filepath.Base(first[0].Archive) != "flotilla-hub-t1.oci.tar" {
		t.Errorf("hub archive %s, want flotilla-hub-t1.oci.tar", first[0].Archive)
	}

	// Another version label is another image.
	opts.Version = "v1.0.1"
	opts.OutDir = t.TempDir()
	third, err := Images(opts)
	if err != nil {
		t.Fatal(err)
	}
	if third[0].Digest == first[0].Digest {
		t.Errorf("a new version label kept the hub digest %s", first[0].Digest)
	}
}

func TestImagesWithoutBinaries(t *testing.T) {
	_, err := Images(Options{BinDir: t.TempDir(), OutDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "build the static linux/amd64 binaries first") {
		t.Errorf("error %v, want one saying the binaries are missing", err)
	}
}

func TestLabels(t *testing.T) {
	got := Labels("flotilla-hub", "the hub", "v1.2.3", "")
	if got["org.opencontainers.image.version"] != "v1.2.3" || got["org.opencontainers.image.title"] != "flotilla-hub" {
		t.Errorf("labels %v lack the version or title", got)
	}
	if _, ok := got["org.opencontainers.image.revision"]; ok {
		t.Errorf("an empty revision became a label: %v", got)
	}
	if got := Labels("a", "b", "v1", "abc")["org.opencontainers.image.revision"]; got != "abc" {
		t.Errorf("revision label %q, want abc", got)
	}
}

func TestSetKustomizeTag(t *testing.T) {
	const kustomization = `resources:
- deployment.yaml
# The image make images builds.
images:
- name: flotilla-hub
  newTag: dev
- name: other
  newName: registry.example/other
  newTag: v9
`
	for _, tc := range []struct {
		name        string
		in          string
		image, tag  string
		wantChanged bool
		want        string
		wantErr     string
	}{
		{
			name: "a new tag replaces the old one and keeps the rest", in: kustomization, image: "flotilla-hub", tag: "fleet-1",
			wantChanged: true, want: strings.Replace(kustomization, "newTag: dev", "newTag: fleet-1", 1),
		},
		{
			name: "an entry with newName before newTag is found", in: kustomization, image: "other", tag: "v10",
			wantChanged: true, want: strings.Replace(kustomization, "newTag: v9", "newTag: v10", 1),
		},
		{name: "the same tag changes nothing", in: kustomization, image: "flotilla-hub", tag: "dev", want: kustomization},
		{name: "an image with no entry is an error", in: kustomization, image: "flotilla-agent", tag: "dev", want: kustomization, wantErr: "has no images entry named flotilla-agent"},
		{name: "an entry in flow style is an error", in: "images: [{name: flotilla-hub, newTag: dev}]\n", image: "flotilla-hub", tag: "x", want: "images: [{name: flotilla-hub, newTag: dev}]\n", wantErr: "is not in the form"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "kustomization.yaml")
			if err := os.WriteFile(file, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			changed, err := SetKustomizeTag(file, tc.image, tc.tag)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
			got, _ := os.ReadFile(file)
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
		})
	}
}

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
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/tools/toolchain"
)

func TestValidateVersion(t *testing.T) {
	cases := map[string]struct {
		version string
		// says is part of the error; empty for a valid version.
		says string
	}{
		"a release tag is a version":                  {"v0.3.0", ""},
		"a prerelease tag is a version":               {"v1.0.0-rc.1", ""},
		"a major version alone is a version":          {"v2.0.0", ""},
		"no version is refused with the make command": {"", "make release VERSION=v0.3.0"},
		"a version without v is refused":              {"0.3.0", "is not a semantic version tag"},
		"two parts are refused":                       {"v0.3", "is not a semantic version tag"},
		"a git describe without a tag is refused":     {"428e200-dirty", "is not a semantic version tag"},
		"build metadata cannot be an image tag":       {"v0.3.0+build.1", "build metadata"},
		"v0.0.0 marks development builds":             {"v0.0.0", "development builds"},
		"the development default is refused":          {"v0.0.0-dev", "development builds"},
		"an empty prerelease identifier is refused":   {"v1.0.0-rc..1", "dot-separated identifiers"},
		"a prerelease with a slash is refused":        {"v1.0.0-rc/1", "dot-separated identifiers"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := ValidateVersion(tc.version)
			if tc.says == "" {
				if err != nil {
					t.Fatalf("ValidateVersion(%q) = %v, want nil", tc.version, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("ValidateVersion(%q) = %v, want an error saying %q", tc.version, err, tc.says)
			}
		})
	}
}

func TestValidateOptions(t *testing.T) {
	valid := func() Options {
		o := Options{Version: "v0.3.0", OutDir: "dist", Root: "/src", Commit: "abc", Time: time.Unix(1, 0)}
		o.Default()
		return o
	}
	cases := map[string]struct {
		change func(*Options)
		says   string
	}{
		"the defaults are valid":                       {func(*Options) {}, ""},
		"a platform of another OS is refused":          {func(o *Options) { o.Platforms = []Platform{{"windows", "amd64"}} }, "--platforms: windows/amd64 is not supported"},
		"a platform twice is refused":                  {func(o *Options) { o.Platforms = []Platform{{"linux", "amd64"}, {"linux", "amd64"}} }, "given twice"},
		"an image of a darwin platform is refused":     {func(o *Options) { o.ImagePlatforms = []Platform{{"darwin", "arm64"}} }, "--image-platforms"},
		"an image of a platform not built is refused":  {func(o *Options) { o.Platforms = []Platform{{"linux", "amd64"}} }, "--image-platforms: linux/arm64"},
		"a download base that is no URL is refused":    {func(o *Options) { o.DownloadBase = "releases/{version}" }, "--download-base"},
		"an image repository with a slash is refused":  {func(o *Options) { o.ImageRepository = "registry.example/flotilla/" }, "--image-repository"},
		"a build outside a git checkout is refused":    {func(o *Options) { o.Commit = "" }, "git checkout"},
		"a version that is not a release is refused":   {func(o *Options) { o.Version = "dev" }, "semantic version"},
		"an image repository with a registry is valid": {func(o *Options) { o.ImageRepository = "registry.example:5000/flotilla" }, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := valid()
			tc.change(&o)
			err := o.Validate()
			if tc.says == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Validate() = %v, want an error saying %q", err, tc.says)
			}
		})
	}
}

const changelog = `# Changelog

Intro.

## [Unreleased]

- Something coming.

## [v0.4.0] - 2026-12-01

### Added

- A feature.

## [0.3.1] - 2026-11-28

- A fix.

## v0.3.0

- The first.

## [v0.2.0] - 2026-11-01

[Unreleased]: https://example.com/compare/v0.4.0...HEAD
[v0.4.0]: https://example.com/releases/tag/v0.4.0
`

func TestChangelogSection(t *testing.T) {
	cases := map[string]struct {
		version, want, says string
	}{
		"a section runs to the next heading":                {"v0.4.0", "### Added\n\n- A feature.", ""},
		"a heading without the v names the same version":    {"v0.3.1", "- A fix.", ""},
		"a heading without brackets or date is a section":   {"v0.3.0", "- The first.", ""},
		"a version without a section is refused":            {"v0.5.0", "", "has no section for v0.5.0"},
		"an empty section is refused":                       {"v0.2.0", "", "section for v0.2.0 is empty"},
		"a version is not matched by a prefix of another":   {"v0.4", "", "has no section"},
		"the link definitions at the end are not the notes": {"v0.2.0", "", "is empty"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ChangelogSection(changelog, tc.version)
			if tc.says != "" {
				if err == nil || !strings.Contains(err.Error(), tc.says) {
					t.Fatalf("ChangelogSection(%s) = %q, %v; want an error saying %q", tc.version, got, err, tc.says)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTheChangelogHasTheFirstRelease(t *testing.T) {
	root, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ChangelogSection(string(data), "v0.3.0"); err != nil {
		t.Fatal(err)
	}
}

func TestKrewManifest(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	got, err := KrewManifest("v0.3.0", "https://downloads.example/flotilla/{version}/", []pluginArchive{
		{Platform{"linux", "amd64"}, "kubectl-flotilla_v0.3.0_linux_amd64.tar.gz", sum},
		{Platform{"darwin", "arm64"}, "kubectl-flotilla_v0.3.0_darwin_arm64.tar.gz", sum},
	})
	if err != nil {
		t.Fatal(err)
	}
	var p krewPlugin
	if err := yaml.UnmarshalStrict(got, &p); err != nil {
		t.Fatalf("the manifest does not read back: %v\n%s", err, got)
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" || p.Metadata.Name != "flotilla" || p.Spec.Version != "v0.3.0" {
		t.Errorf("header = %s %s %s %s", p.APIVersion, p.Kind, p.Metadata.Name, p.Spec.Version)
	}
	want := []krewPlatform{{
		Selector: krewSelector{MatchLabels: map[string]string{"os": "linux", "arch": "amd64"}},
		URI:      "https://downloads.example/flotilla/v0.3.0/kubectl-flotilla_v0.3.0_linux_amd64.tar.gz",
		SHA256:   sum, Bin: "kubectl-flotilla",
		Files: []krewFile{{"kubectl-flotilla", "."}, {"LICENSE", "."}},
	}, {
		Selector: krewSelector{MatchLabels: map[string]string{"os": "darwin", "arch": "arm64"}},
		URI:      "https://downloads.example/flotilla/v0.3.0/kubectl-flotilla_v0.3.0_darwin_arm64.tar.gz",
		SHA256:   sum, Bin: "kubectl-flotilla",
		Files: []krewFile{{"kubectl-flotilla", "."}, {"LICENSE", "."}},
	}}
	if diff := cmp.Diff(want, p.Spec.Platforms); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
	if _, err := KrewManifest("v0.3.0", DefaultDownloadBase, []pluginArchive{{Platform{"linux", "amd64"}, "a.tar.gz", "abc"}}); err == nil {
		t.Error("a digest that is not a SHA-256 was accepted")
	}
	if _, err := KrewManifest("v0.3.0", DefaultDownloadBase, nil); err == nil {
		t.Error("a manifest without platforms was accepted")
	}
}

func TestTarGzDependsOnlyOnItsEntriesAndTime(t *testing.T) {
	mtime := time.Date(2026, 11, 26, 23, 10, 0, 0, time.UTC)
	a, err := tarGz([]entry{{"hub", []byte("binary"), 0o755}, {"LICENSE", []byte("licence"), 0o644}}, mtime)
	if err != nil {
		t.Fatal(err)
	}
	// Another order, another time zone for the same instant.
	b, err := tarGz([]entry{{"LICENSE", []byte("licence"), 0o644}, {"hub", []byte("binary"), 0o755}}, mtime.In(time.FixedZone("X", 3600)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("the same entries in another order gave another archive")
	}
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header name %q time %s, want neither", zr.Name, zr.ModTime)
	}
	var got []string
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.Name+" "+h.ModTime.UTC().Format(time.RFC3339)+" "+
			strings.Join([]string{strconv.Itoa(h.Uid), strconv.Itoa(h.Gid), h.Uname, h.Gname, strconv.FormatInt(h.Mode, 8)}, ":"))
	}
	want := []string{"LICENSE 2026-11-26T23:10:00Z 0:0:::644", "hub 2026-11-26T23:10:00Z 0:0:::755"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if _, err := tarGz([]entry{{"a", nil, 0o644}, {"a", nil, 0o644}}, mtime); err == nil {
		t.Error("two entries of one name were accepted")
	}
}

func TestSBOMDependsOnlyOnItsInputs(t *testing.T) {
	info := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Path:      "github.com/flotilla-io/flotilla/hub",
		Deps: []*debug.Module{
			{Path: "k8s.io/client-go", Version: "v0.37.2", Sum: "h1:abc="},
			{Path: "example.com/old", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/new", Version: "v1.1.0", Sum: "h1:def="}},
		},
		Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}},
	}
	subject := sbomSubject{File: "flotilla-hub_v0.3.0_linux_amd64.tar.gz", SHA256: strings.Repeat("0", 64), Name: "flotilla-hub",
		Type: cdx.ComponentTypeApplication, Platforms: []string{"linux/amd64"}, Builds: []*debug.BuildInfo{info}}
	when := time.Date(2026, 11, 26, 23, 10, 0, 0, time.FixedZone("X", 3600))
	a, err := SBOM(subject, "v0.3.0", "abc", when)
	if err != nil {
		t.Fatal(err)
	}
	b, err := SBOM(subject, "v0.3.0", "abc", when)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two SBOMs of the same inputs differ")
	}
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(a), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range *bom.Components {
		got = append(got, c.PackageURL)
	}
	want := []string{"pkg:golang/example.com/new@v1.1.0", "pkg:golang/k8s.io/client-go@v0.37.2", "pkg:golang/stdlib@go1.26.8"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("components, a replaced module as its replacement (-want +got):\n%s", diff)
	}
	if bom.Metadata.Timestamp != "2026-11-26T22:10:00Z" {
		t.Errorf("timestamp %s, want the commit time in UTC", bom.Metadata.Timestamp)
	}
	if !strings.HasPrefix(bom.SerialNumber, "urn:uuid:") || len(bom.SerialNumber) != len("urn:uuid:")+36 {
		t.Errorf("serial number %q is not a urn:uuid", bom.SerialNumber)
	}
	other := subject
	other.SHA256 = strings.Repeat("1", 64)
	c, err := SBOM(other, "v0.3.0", "abc", when)
	if err != nil {
		t.Fatal(err)
	}
	var otherBOM cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(c), cdx.BOMFileFormatJSON).Decode(&otherBOM); err != nil {
		t.Fatal(err)
	}
	if otherBOM.SerialNumber == bom.SerialNumber {
		t.Error("another artifact got the same serial number")
	}
}

func TestArchiveNames(t *testing.T) {
	p := Platform{"darwin", "arm64"}
	got := []string{ArchiveName("hub", "v0.3.0", p), ArchiveName("agent", "v0.3.0", p), ArchiveName(pluginBinary, "v0.3.0", p), ImageArchiveName("flotilla-hub", "v0.3.0")}
	want := []string{"flotilla-hub_v0.3.0_darwin_arm64.tar.gz", "flotilla-agent_v0.3.0_darwin_arm64.tar.gz", "kubectl-flotilla_v0.3.0_darwin_arm64.tar.gz", "flotilla-hub_v0.3.0.oci.tar"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestReleaseIsReproducible builds a release of one platform (linux/amd64,
// and the images' index of it) twice into two folders and wants the same
// SHA256SUMS, then checks that the version reached the binaries, the image
// labels, install.yaml, the SBOMs and the notes. `make release-check` does
// the same for every platform.
func TestReleaseIsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries twice")
	}
	root, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	commit, commitTime, err := gitCommit(root, true)
	if err != nil {
		t.Fatal(err)
	}
	linux := []Platform{{"linux", "amd64"}}
	opts := Options{Version: "v0.3.0", Root: root, Commit: commit, Time: commitTime, Platforms: linux, ImagePlatforms: linux,
		ImageRepository: "registry.example/flotilla", Go: os.Getenv("GO"), OutDir: "set below"}
	opts.Default()
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	var sums [2]string
	var dirs [2]string
	for i := range sums {
		o := opts
		o.OutDir = filepath.Join(t.TempDir(), "dist")
		dirs[i] = o.OutDir
		start := time.Now()
		var log bytes.Buffer
		if sums[i], err = Run(context.Background(), o, &log); err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		t.Logf("build %d: %s", i+1, time.Since(start).Round(time.Millisecond))
	}
	if diff := cmp.Diff(sums[0], sums[1]); diff != "" {
		t.Fatalf("two builds of one commit differ (-first +second):\n%s", diff)
	}
	dist := dirs[0]

	var files []string
	for _, line := range strings.Split(strings.TrimSpace(sums[0]), "\n") {
		files = append(files, strings.Fields(line)[1])
	}
	want := []string{
		"RELEASE_NOTES.md",
		"flotilla-agent_v0.3.0.oci.tar", "flotilla-agent_v0.3.0.oci.tar.cdx.json",
		"flotilla-agent_v0.3.0_linux_amd64.tar.gz", "flotilla-agent_v0.3.0_linux_amd64.tar.gz.cdx.json",
		"flotilla-hub_v0.3.0.oci.tar", "flotilla-hub_v0.3.0.oci.tar.cdx.json",
		"flotilla-hub_v0.3.0_linux_amd64.tar.gz", "flotilla-hub_v0.3.0_linux_amd64.tar.gz.cdx.json",
		"flotilla.yaml", "install.yaml",
		"kubectl-flotilla_v0.3.0_linux_amd64.tar.gz", "kubectl-flotilla_v0.3.0_linux_amd64.tar.gz.cdx.json",
	}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("SHA256SUMS lists (-want +got):\n%s", diff)
	}

	t.Run("every binary's --version names the release and commit", func(t *testing.T) {
		if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
			t.Skip("the binaries are linux/amd64")
		}
		for _, b := range binaries {
			bin := extract(t, filepath.Join(dist, ArchiveName(b.Name, "v0.3.0", linux[0])), b.Name)
			out, err := exec.Command(bin, "--version").CombinedOutput()
			if err != nil {
				t.Fatalf("%s --version: %v\n%s", b.Name, err, out)
			}
			wantPrefix := b.Name + " v0.3.0 (commit " + commit + ", " + commitTime.Format("2006-01-02T15:04:05Z") + ", go"
			if !strings.HasPrefix(string(out), wantPrefix) {
				t.Errorf("%s --version = %q, want it to start with %q", b.Name, out, wantPrefix)
			}
		}
	})

	t.Run("the agent announces the release in Hello and installs its image", func(t *testing.T) {
		// The agent's Hello carries pkg/version.Version (agent/app/run.go), the
		// variable --version prints (checked above); the linker stores what
		// -X sets as string data, so the binary holds both values.
		data, err := os.ReadFile(extract(t, filepath.Join(dist, ArchiveName("agent", "v0.3.0", linux[0])), "agent"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"v0.3.0", "registry.example/flotilla/flotilla-agent:v0.3.0", commit} {
			if !bytes.Contains(data, []byte(want)) {
				t.Errorf("the agent binary does not hold %q", want)
			}
		}
	})

	t.Run("the images carry the version and revision", func(t *testing.T) {
		for _, name := range []string{"flotilla-hub", "flotilla-agent"} {
			labels := imageConfigLabels(t, filepath.Join(dist, ImageArchiveName(name, "v0.3.0")))
			for k, v := range map[string]string{
				"org.opencontainers.image.version":  "v0.3.0",
				"org.opencontainers.image.revision": commit,
				"org.opencontainers.image.created":  commitTime.Format("2006-01-02T15:04:05Z"),
			} {
				if labels[k] != v {
					t.Errorf("%s label %s = %q, want %q", name, k, labels[k], v)
				}
			}
		}
	})

	t.Run("install.yaml deploys the release's hub image", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(dist, InstallFile))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "image: registry.example/flotilla/flotilla-hub:v0.3.0\n") {
			t.Error("install.yaml does not deploy registry.example/flotilla/flotilla-hub:v0.3.0")
		}
		for _, kind := range []string{"kind: CustomResourceDefinition", "kind: Deployment", "kind: Namespace"} {
			if !strings.Contains(string(data), kind) {
				t.Errorf("install.yaml has no %s", kind)
			}
		}
	})

	t.Run("the SBOMs name the artifact and its modules", func(t *testing.T) {
		name := ArchiveName("hub", "v0.3.0", linux[0])
		f, err := os.Open(filepath.Join(dist, name+SBOMSuffix))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var bom cdx.BOM
		if err := cdx.NewBOMDecoder(f, cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
			t.Fatal(err)
		}
		sum, err := fileSHA256(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		if c := bom.Metadata.Component; c.Name != "flotilla-hub" || c.Version != "v0.3.0" || (*c.Hashes)[0].Value != sum {
			t.Errorf("the SBOM describes %s %s %v, want flotilla-hub v0.3.0 with the archive's SHA-256 %s", c.Name, c.Version, *c.Hashes, sum)
		}
		found := map[string]bool{}
		for _, c := range *bom.Components {
			found[c.Name] = true
		}
		for _, m := range []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "stdlib"} {
			if !found[m] {
				t.Errorf("the SBOM lists no %s", m)
			}
		}
	})

	t.Run("the release notes are the changelog's section", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(dist, NotesFile))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), "# Flotilla v0.3.0\n\n") {
			t.Errorf("%s starts with %q", NotesFile, strings.SplitN(string(data), "\n", 2)[0])
		}
	})
}

// extract writes the file name of a tar.gz archive to a temporary folder.
func extract(t *testing.T, archive, name string) string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s has no %s: %v", archive, name, err)
		}
		if h.Name != name {
			continue
		}
		out := filepath.Join(t.TempDir(), name)
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, data, 0o755); err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// imageConfigLabels reads the labels of the first image of an OCI layout
// archive holding one image index.
func imageConfigLabels(t *testing.T, archive string) map[string]string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	blobs := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		blobs[h.Name] = data
	}
	type descriptor struct {
		Digest string `json:"digest"`
	}
	read := func(name string, into any) {
		t.Helper()
		data, ok := blobs[name]
		if !ok {
			t.Fatalf("%s has no %s", archive, name)
		}
		if err := json.Unmarshal(data, into); err != nil {
			t.Fatal(err)
		}
	}
	blob := func(d descriptor) string { return "blobs/sha256/" + strings.TrimPrefix(d.Digest, "sha256:") }
	var top, index struct{ Manifests []descriptor }
	read("index.json", &top)
	read(blob(top.Manifests[0]), &index)
	var manifest struct{ Config descriptor }
	read(blob(index.Manifests[0]), &manifest)
	var config struct {
		Config struct{ Labels map[string]string }
	}
	read(blob(manifest.Config), &config)
	return config.Config.Labels
}

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
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/flotilla-io/flotilla/tools/images/build"
	"github.com/flotilla-io/flotilla/tools/ociimage"
)

// binary is one program a release ships.
type binary struct {
	// Name of the binary; Package the Go package it is built from.
	Name, Package string
}

// pluginBinary is the kubectl plugin's binary name.
const pluginBinary = "kubectl-flotilla"

// binaries are the programs of a release.
var binaries = []binary{
	{"hub", "./hub"},
	{"agent", "./agent"},
	{pluginBinary, "./hub/kubectl-flotilla"},
}

// images are the images of a release: name and the binary it runs.
var images = []struct{ name, binary, title string }{
	{build.HubImage, "hub", "Flotilla hub: schedules placements onto member clusters and serves the agents' tunnels"},
	{build.AgentImage, "agent", "Flotilla agent: joins a member cluster to the hub and applies its Work"},
}

// InstallFile is the single-file install manifest of the hub.
const InstallFile = "install.yaml"

// ArchiveName is the file name of a binary's archive: flotilla-hub_v0.3.0_linux_amd64.tar.gz;
// the kubectl plugin keeps its own name (kubectl-flotilla_v0.3.0_linux_amd64.tar.gz).
func ArchiveName(bin, version string, p Platform) string {
	if !strings.Contains(bin, "flotilla") {
		bin = "flotilla-" + bin
	}
	return fmt.Sprintf("%s_%s_%s_%s.tar.gz", bin, version, p.OS, p.Arch)
}

// ImageArchiveName is the file name of an image's OCI layout archive.
func ImageArchiveName(image, version string) string {
	return fmt.Sprintf("%s_%s.oci.tar", image, version)
}

// ImageRef is the reference an image of the release is tagged as.
func (o *Options) ImageRef(image string) string {
	if o.ImageRepository == "" {
		return build.Ref(image, o.Version)
	}
	return o.ImageRepository + "/" + image + ":" + o.Version
}

// deployedImage is how the manifests name an image: repository/name:version,
// or name:version without a repository.
func (o *Options) deployedImage(image string) string {
	if o.ImageRepository == "" {
		return image + ":" + o.Version
	}
	return o.ImageRef(image)
}

// Run builds the release of opts (after Default and Validate) into
// opts.OutDir and returns its SHA256SUMS. log receives progress lines.
func Run(ctx context.Context, opts Options, log io.Writer) (string, error) {
	changelog := opts.Changelog
	if changelog == "" {
		changelog = filepath.Join(opts.Root, "CHANGELOG.md")
	}
	text, err := os.ReadFile(changelog)
	if err != nil {
		return "", fmt.Errorf("failed to read the changelog: %w", err)
	}
	notes, err := ChangelogSection(string(text), opts.Version)
	if err != nil {
		return "", err
	}
	if ents, err := os.ReadDir(opts.OutDir); err == nil && len(ents) > 0 {
		return "", fmt.Errorf("--out %s is not empty: remove it first (make release does)", opts.OutDir)
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return "", err
	}
	license, err := os.ReadFile(filepath.Join(opts.Root, "LICENSE"))
	if err != nil {
		return "", fmt.Errorf("failed to read LICENSE: %w", err)
	}
	work, err := os.MkdirTemp("", "flotilla-release-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)

	// Binaries, an archive and an SBOM each.
	var plugin []pluginArchive
	infos := map[string]*debug.BuildInfo{} // by "bin os/arch"
	for _, p := range opts.Platforms {
		dir := filepath.Join(work, p.OS+"_"+p.Arch)
		start := time.Now()
		if err := goBuild(ctx, opts, p, dir); err != nil {
			return "", err
		}
		fmt.Fprintf(log, "built %s in %s\n", p, time.Since(start).Round(time.Millisecond))
		start = time.Now()
		for _, b := range binaries {
			file := filepath.Join(dir, b.Name)
			data, err := os.ReadFile(file)
			if err != nil {
				return "", fmt.Errorf("go build left no %s for %s: %w", b.Name, p, err)
			}
			info, err := readBuildInfo(file)
			if err != nil {
				return "", err
			}
			infos[b.Name+" "+p.String()] = info
			archive, err := tarGz([]entry{{Name: b.Name, Data: data, Mode: 0o755}, {Name: "LICENSE", Data: license, Mode: 0o644}}, opts.Time)
			if err != nil {
				return "", err
			}
			name := ArchiveName(b.Name, opts.Version, p)
			sum, err := writeArtifact(opts.OutDir, name, archive)
			if err != nil {
				return "", err
			}
			if b.Name == pluginBinary {
				plugin = append(plugin, pluginArchive{Platform: p, Name: name, SHA256: sum})
			}
			component := b.Name
			if !strings.Contains(component, "flotilla") {
				component = "flotilla-" + component
			}
			if err := writeSBOM(opts, sbomSubject{File: name, SHA256: sum, Name: component, Type: cdx.ComponentTypeApplication,
				Platforms: []string{p.String()}, Builds: []*debug.BuildInfo{info}}); err != nil {
				return "", err
			}
		}
		fmt.Fprintf(log, "archived %s in %s\n", p, time.Since(start).Round(time.Millisecond))
	}

	// Images: an OCI layout archive per image, its index holding every image platform.
	for _, spec := range images {
		var imgs []ociimage.Image
		var platforms []string
		var builds []*debug.BuildInfo
		for _, p := range opts.ImagePlatforms {
			imgs = append(imgs, ociimage.Image{
				Ref: opts.ImageRef(spec.name),
				Layers: [][]ociimage.File{
					ociimage.BaseFiles(),
					{{Path: "/" + spec.binary, Source: filepath.Join(work, p.OS+"_"+p.Arch, spec.binary), Mode: 0o755}},
				},
				Entrypoint:   []string{"/" + spec.binary},
				User:         fmt.Sprintf("%d:%d", ociimage.NonRoot, ociimage.NonRoot),
				WorkingDir:   "/home/nonroot",
				Labels:       imageLabels(opts, spec.name, spec.title),
				Created:      opts.Time,
				OS:           p.OS,
				Architecture: p.Arch,
			})
			platforms = append(platforms, p.String())
			builds = append(builds, infos[spec.binary+" "+p.String()])
		}
		name := ImageArchiveName(spec.name, opts.Version)
		start := time.Now()
		res, err := ociimage.WriteIndexArchive(filepath.Join(opts.OutDir, name), opts.ImageRef(spec.name), imgs)
		if err != nil {
			return "", err
		}
		sum, err := fileSHA256(filepath.Join(opts.OutDir, name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(log, "image %s (%s) %s in %s\n", opts.ImageRef(spec.name), strings.Join(platforms, ", "), res.Digest, time.Since(start).Round(time.Millisecond))
		if err := writeSBOM(opts, sbomSubject{File: name, SHA256: sum, Name: spec.name, Type: cdx.ComponentTypeContainer,
			Platforms: platforms, Builds: builds}); err != nil {
			return "", err
		}
	}

	// The install manifest, the krew manifest and the notes.
	install, err := InstallManifest(opts)
	if err != nil {
		return "", err
	}
	if _, err := writeArtifact(opts.OutDir, InstallFile, install); err != nil {
		return "", err
	}
	if len(plugin) > 0 {
		krew, err := KrewManifest(opts.Version, opts.DownloadBase, plugin)
		if err != nil {
			return "", err
		}
		if _, err := writeArtifact(opts.OutDir, KrewFile, krew); err != nil {
			return "", err
		}
	}
	if _, err := writeArtifact(opts.OutDir, NotesFile, []byte(ReleaseNotes(opts.Version, notes))); err != nil {
		return "", err
	}
	return writeSums(opts.OutDir)
}

// imageLabels are the OCI labels of a release image.
func imageLabels(opts Options, name, title string) map[string]string {
	l := build.Labels(name, title, opts.Version, opts.Commit)
	l["org.opencontainers.image.created"] = opts.Time.UTC().Format("2006-01-02T15:04:05Z")
	return l
}

// writeArtifact writes a file of the release and returns its hex SHA-256.
func writeArtifact(dir, name string, data []byte) (string, error) {
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		return "", fmt.Errorf("failed to write %s: %w", name, err)
	}
	return sha256Hex(data), nil
}

func writeSBOM(opts Options, s sbomSubject) error {
	data, err := SBOM(s, opts.Version, opts.Commit, opts.Time)
	if err != nil {
		return err
	}
	_, err = writeArtifact(opts.OutDir, s.File+SBOMSuffix, data)
	return err
}

// versionPackage is where the binaries' version, commit and date live.
const versionPackage = "github.com/flotilla-io/flotilla/pkg/version"

// LDFlags are the linker flags of a release build: no symbol table or DWARF,
// and the version, commit and commit time stamped into pkg/version, and the
// agent image `agent join --install` deploys.
func LDFlags(opts Options) string {
	return strings.Join([]string{
		"-s", "-w",
		"-X", versionPackage + ".Version=" + opts.Version,
		"-X", versionPackage + ".Commit=" + opts.Commit,
		"-X", versionPackage + ".Date=" + opts.Time.UTC().Format("2006-01-02T15:04:05Z"),
		"-X", "github.com/flotilla-io/flotilla/agent/install.releaseImage=" + opts.deployedImage(build.AgentImage),
	}, " ")
}

// goBuild builds every binary for p into dir, with nothing of this machine
// in the output: no cgo, trimmed paths, no VCS stamp (the commit comes from
// the ldflags), the base instruction set of each architecture, and no
// GOFLAGS from the environment.
func goBuild(ctx context.Context, opts Options, p Platform, dir string) error {
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", LDFlags(opts), "-o", dir + string(filepath.Separator)}
	for _, b := range binaries {
		args = append(args, b.Package)
	}
	cmd := exec.CommandContext(ctx, opts.Go, args...)
	cmd.Dir = opts.Root
	env := make([]string, 0, len(os.Environ())+6)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOOS", "GOARCH", "CGO_ENABLED", "GOFLAGS", "GOAMD64", "GOARM64", "GOEXPERIMENT", "GO386", "GOARM":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GOOS="+p.OS, "GOARCH="+p.Arch, "CGO_ENABLED=0", "GOFLAGS=", "GOAMD64=v1", "GOARM64=v8.0")
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s failed: %w\n%s", p, err, out.String())
	}
	return nil
}

// InstallManifest renders manifests/hub (the CRDs, the hub and its RBAC) as
// one file, as `kubectl apply -k manifests/hub` would apply it, with the
// hub's image set to the release's.
func InstallManifest(opts Options) ([]byte, error) {
	kopts := krusty.MakeDefaultOptions()
	kopts.Reorder = krusty.ReorderOptionLegacy
	res, err := krusty.MakeKustomizer(kopts).Run(filesys.MakeFsOnDisk(), filepath.Join(opts.Root, "manifests", "hub"))
	if err != nil {
		return nil, fmt.Errorf("failed to build manifests/hub: %w", err)
	}
	image := opts.deployedImage(build.HubImage)
	set := 0
	for _, r := range res.Resources() {
		if r.GetKind() != "Deployment" {
			continue
		}
		containers, err := r.Pipe(kyaml.Lookup("spec", "template", "spec", "containers"))
		if err != nil || containers == nil {
			continue
		}
		elems, err := containers.Elements()
		if err != nil {
			return nil, err
		}
		for _, c := range elems {
			ref, err := c.Pipe(kyaml.Lookup("image"))
			if err != nil || ref == nil || imageName(kyaml.GetValue(ref)) != build.HubImage {
				continue
			}
			if err := c.PipeE(kyaml.SetField("image", kyaml.NewScalarRNode(image))); err != nil {
				return nil, err
			}
			set++
		}
	}
	if set == 0 {
		return nil, fmt.Errorf("manifests/hub has no container running the %s image", build.HubImage)
	}
	data, err := res.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("failed to print manifests/hub: %w", err)
	}
	header := fmt.Sprintf("# Flotilla hub %s, commit %s:\n# the CRDs, the hub and its RBAC, built from manifests/hub by `make release`.\n"+
		"# Install with\n#   kubectl apply -f install.yaml\n", opts.Version, opts.Commit)
	return append([]byte(header), data...), nil
}

// imageName is an image reference's last path element without tag or digest.
func imageName(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, "/"); i >= 0 {
		ref = ref[i+1:]
	}
	if i := strings.Index(ref, ":"); i >= 0 {
		ref = ref[:i]
	}
	return ref
}

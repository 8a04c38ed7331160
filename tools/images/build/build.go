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

// Package build makes the hub and agent images (see tools/ociimage) and keeps the
// tag the manifests deploy in step with them.
package build

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/tools/ociimage"
)

// Image names, as manifests/hub and manifests/agent name them.
const (
	HubImage   = "flotilla-hub"
	AgentImage = "flotilla-agent"
	// DefaultTag is the tag `make images` builds and the committed manifests deploy.
	DefaultTag = "dev"
)

// Ref is the full reference containerd stores name:tag under (what a kubelet
// looks up for the image "name:tag").
func Ref(name, tag string) string { return "docker.io/library/" + name + ":" + tag }

// ArchiveName is the file name of an image's archive.
func ArchiveName(name, tag string) string { return name + "-" + tag + ".oci.tar" }

// Options configure Images.
type Options struct {
	// BinDir holds the static linux/amd64 `hub` and `agent` binaries. Required.
	BinDir string
	// OutDir receives the archives. Required.
	OutDir string
	// Tag of both images. Default: DefaultTag.
	Tag string
	// Version and Revision go into the OCI labels. Version default: v0.0.0-dev.
	Version  string
	Revision string
	// Created is the images' creation time. Default: ociimage.Epoch.
	Created time.Time
}

// Built is one image written.
type Built struct {
	Ref     string
	Digest  string
	Archive string
	Size    int64
}

// Images builds the hub and agent images from opts.BinDir into opts.OutDir.
func Images(opts Options) ([]Built, error) {
	if opts.Tag == "" {
		opts.Tag = DefaultTag
	}
	if opts.Version == "" {
		opts.Version = "v0.0.0-dev"
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("failed to create %s: %w", opts.OutDir, err)
	}
	var out []Built
	for _, spec := range []struct{ name, binary, title string }{
		{HubImage, "hub", "Flotilla hub: schedules placements onto member clusters and serves the agents' tunnels"},
		{AgentImage, "agent", "Flotilla agent: joins a member cluster to the hub and applies its Work"},
	} {
		bin := filepath.Join(opts.BinDir, spec.binary)
		if _, err := os.Stat(bin); err != nil {
			return nil, fmt.Errorf("%s is missing: build the static linux/amd64 binaries first (make images does)", bin)
		}
		img := ociimage.Image{
			Ref: Ref(spec.name, opts.Tag),
			Layers: [][]ociimage.File{
				ociimage.BaseFiles(),
				{{Path: "/" + spec.binary, Source: bin, Mode: 0o755}},
			},
			Entrypoint: []string{"/" + spec.binary},
			User:       fmt.Sprintf("%d:%d", ociimage.NonRoot, ociimage.NonRoot),
			WorkingDir: "/home/nonroot",
			Labels:     Labels(spec.name, spec.title, opts.Version, opts.Revision),
			Created:    opts.Created,
		}
		archive := filepath.Join(opts.OutDir, ArchiveName(spec.name, opts.Tag))
		res, err := ociimage.WriteArchive(archive, img)
		if err != nil {
			return nil, fmt.Errorf("failed to build %s: %w", img.Ref, err)
		}
		out = append(out, Built{Ref: img.Ref, Digest: res.Digest, Archive: archive, Size: res.Size})
	}
	return out, nil
}

// Labels are the OCI annotations-as-labels every Flotilla image carries.
func Labels(name, description, version, revision string) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":       name,
		"org.opencontainers.image.description": description,
		"org.opencontainers.image.version":     version,
		"org.opencontainers.image.source":      "https://github.com/flotilla-io/flotilla",
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
	if revision != "" {
		l["org.opencontainers.image.revision"] = revision
	}
	return l
}

// SetKustomizeTag sets newTag of the images entry named image in a
// kustomization file, keeping the rest of the file (comments too) as it is. It
// reports whether the file changed.
func SetKustomizeTag(file, image, tag string) (bool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return false, fmt.Errorf("failed to read %s: %w", file, err)
	}
	var k struct {
		Images []struct {
			Name   string `json:"name"`
			NewTag string `json:"newTag"`
		} `json:"images"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return false, fmt.Errorf("failed to parse %s: %w", file, err)
	}
	found := false
	for _, i := range k.Images {
		if i.Name == image {
			found = true
			if i.NewTag == tag {
				return false, nil
			}
		}
	}
	if !found {
		return false, fmt.Errorf("%s has no images entry named %s with a newTag", file, image)
	}
	entry := regexp.MustCompile(`(?m)^(- name: ` + regexp.QuoteMeta(image) + `\n(?:  .*\n)*?  newTag: ).*$`)
	updated := entry.ReplaceAll(data, []byte("${1}"+tag))
	if bytes.Equal(updated, data) {
		return false, fmt.Errorf("%s: the images entry of %s is not in the form `- name: %s` followed by indented fields with newTag", file, image, image)
	}
	if err := os.WriteFile(file, updated, 0o644); err != nil {
		return false, fmt.Errorf("failed to write %s: %w", file, err)
	}
	return true, nil
}

// SetChartAppVersion sets appVersion in a Chart.yaml (the image tag the chart
// deploys by default), keeping the rest of the file as it is. It reports
// whether the file changed.
func SetChartAppVersion(file, version string) (bool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return false, fmt.Errorf("failed to read %s: %w", file, err)
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil {
		return false, fmt.Errorf("failed to parse %s: %w", file, err)
	}
	if chart.AppVersion == version {
		return false, nil
	}
	line := regexp.MustCompile(`(?m)^appVersion: .*$`)
	if !line.Match(data) {
		return false, fmt.Errorf("%s has no line `appVersion: ...`", file)
	}
	updated := line.ReplaceAll(data, []byte("appVersion: "+strconv.Quote(version)))
	if err := os.WriteFile(file, updated, 0o644); err != nil {
		return false, fmt.Errorf("failed to write %s: %w", file, err)
	}
	return true, nil
}

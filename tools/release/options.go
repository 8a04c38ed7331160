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
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/flotilla-io/flotilla/pkg/version"
)

// Platform is a GOOS/GOARCH pair.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// ParsePlatforms reads a comma-separated list of os/arch pairs.
func ParsePlatforms(s string) ([]Platform, error) {
	var out []Platform
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		os, arch, ok := strings.Cut(item, "/")
		if !ok || os == "" || arch == "" {
			return nil, fmt.Errorf("%q is not os/arch (such as linux/amd64)", item)
		}
		out = append(out, Platform{OS: os, Arch: arch})
	}
	return out, nil
}

// Defaults, documented once: the flags of main show them.
var (
	// DefaultPlatforms are what the binaries are built for.
	DefaultPlatforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}
	// DefaultImagePlatforms are the platforms of the images' index.
	DefaultImagePlatforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}}
)

// DefaultDownloadBase is where the krew manifest says the archives are;
// {version} is replaced by the release's version.
const DefaultDownloadBase = "https://github.com/flotilla-io/flotilla/releases/download/{version}"

// supported are the platforms a release can be built for.
var supported = []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

// Options configure a release.
type Options struct {
	// Version of the release, a semantic version tag such as v0.3.0. Required.
	Version string
	// OutDir receives the release; it must not exist or be empty. Required.
	OutDir string
	// Root is the repository checkout the release is built from. Required.
	Root string
	// Commit and Time are the commit the checkout is at and its time: the
	// binaries' --version and every time stamp in the release come from
	// them, never from the clock. Required.
	Commit string
	Time   time.Time
	// Platforms of the binaries. Default: DefaultPlatforms.
	Platforms []Platform
	// ImagePlatforms of the images; each must be a linux platform in
	// Platforms. Default: DefaultImagePlatforms.
	ImagePlatforms []Platform
	// ImageRepository is put before the image names (registry.example/flotilla
	// gives registry.example/flotilla/flotilla-hub:v0.3.0). Default: none, the
	// names alone, as manifests/ names them.
	ImageRepository string
	// DownloadBase is the URL the archives are published under, for the
	// krew manifest. Default: DefaultDownloadBase.
	DownloadBase string
	// Changelog is the file the release notes come from. Default:
	// CHANGELOG.md in Root.
	Changelog string
	// Go is the go command. Default: go.
	Go string
}

// prerelease is a semantic version's prerelease: dot-separated identifiers.
var prerelease = regexp.MustCompile(`^[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*$`)

// ValidateVersion accepts a release version: vMAJOR.MINOR.PATCH with an
// optional prerelease (v0.3.0, v1.0.0-rc.1), as it is tagged in git and used
// as the images' tag. It refuses build metadata (+...), which an image tag
// cannot hold, and v0.0.0, which marks development builds.
func ValidateVersion(v string) error {
	const want = "a semantic version tag such as v0.3.0 or v1.0.0-rc.1"
	if v == "" {
		return fmt.Errorf("VERSION is required: %s (make release VERSION=v0.3.0)", want)
	}
	s, ok := version.Parse(v)
	switch {
	case !ok:
		return fmt.Errorf("VERSION %q is not %s", v, want)
	case s.String() != v:
		return fmt.Errorf("VERSION %q is not %s: build metadata (+...) cannot be part of an image tag", v, want)
	case s.Major == 0 && s.Minor == 0 && s.Patch == 0:
		return fmt.Errorf("VERSION %q: v0.0.0 marks development builds; use %s", v, want)
	}
	if s.Prerelease != "" && !prerelease.MatchString(s.Prerelease) {
		return fmt.Errorf("VERSION %q is not %s: the prerelease %q must be dot-separated identifiers of [0-9A-Za-z-]", v, want, s.Prerelease)
	}
	return nil
}

// Default fills in the defaults.
func (o *Options) Default() {
	if len(o.Platforms) == 0 {
		o.Platforms = DefaultPlatforms
	}
	if len(o.ImagePlatforms) == 0 {
		o.ImagePlatforms = DefaultImagePlatforms
	}
	if o.DownloadBase == "" {
		o.DownloadBase = DefaultDownloadBase
	}
	if o.Go == "" {
		o.Go = "go"
	}
}

// Validate checks the options after Default, naming the flag to change.
func (o *Options) Validate() error {
	if err := ValidateVersion(o.Version); err != nil {
		return err
	}
	if o.OutDir == "" {
		return fmt.Errorf("--out is required")
	}
	if o.Root == "" {
		return fmt.Errorf("the repository root is unknown")
	}
	if o.Commit == "" || o.Time.IsZero() {
		return fmt.Errorf("the commit and its time are unknown: build from a git checkout")
	}
	seen := map[Platform]bool{}
	for _, p := range o.Platforms {
		if !slices.Contains(supported, p) {
			return fmt.Errorf("--platforms: %s is not supported (use linux or darwin, amd64 or arm64)", p)
		}
		if seen[p] {
			return fmt.Errorf("--platforms: %s is given twice", p)
		}
		seen[p] = true
	}
	imgSeen := map[Platform]bool{}
	for _, p := range o.ImagePlatforms {
		if p.OS != "linux" || !seen[p] {
			return fmt.Errorf("--image-platforms: %s must be a linux platform that --platforms builds", p)
		}
		if imgSeen[p] {
			return fmt.Errorf("--image-platforms: %s is given twice", p)
		}
		imgSeen[p] = true
	}
	u, err := url.Parse(strings.ReplaceAll(o.DownloadBase, "{version}", o.Version))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("--download-base %q is not an http(s) URL", o.DownloadBase)
	}
	if strings.HasSuffix(o.ImageRepository, "/") || (strings.Contains(o.ImageRepository, ":") && !strings.Contains(o.ImageRepository, "/")) {
		return fmt.Errorf("--image-repository %q: give a repository without a trailing slash or tag, such as registry.example/flotilla", o.ImageRepository)
	}
	return nil
}

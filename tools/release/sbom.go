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
	"crypto/sha256"
	"debug/buildinfo"
	"fmt"
	"runtime/debug"
	"sort"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// SBOMSuffix names an artifact's SBOM: the artifact's name and this.
const SBOMSuffix = ".cdx.json"

// modulePath is the main module's path.
const modulePath = "github.com/flotilla-io/flotilla"

// sbomSubject is an artifact an SBOM describes.
type sbomSubject struct {
	// File is the artifact's file name; SHA256 its hex digest.
	File, SHA256 string
	// Name is what it is ("flotilla-hub", "kubectl-flotilla"), Type what kind
	// (an application for a binary's archive, a container for an image).
	Name string
	Type cdx.ComponentType
	// Platforms it is for, os/arch.
	Platforms []string
	// Builds are the build information of the Go binaries it holds.
	Builds []*debug.BuildInfo
}

// readBuildInfo reads the build information Go embeds in a binary.
func readBuildInfo(binary string) (*debug.BuildInfo, error) {
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("failed to read the build information of %s: %w", binary, err)
	}
	return info, nil
}

// purl is a Go module's package URL.
func purl(path, version string) string {
	return "pkg:golang/" + path + "@" + version
}

// SBOM writes a CycloneDX (JSON) SBOM of s for release version: the artifact
// as the metadata's component (with its SHA-256 and platforms), the Go
// modules and standard library its binaries are built from (read from their
// build information, a replaced module as its replacement) as components,
// and the artifact depending on each. It depends only on its inputs: the
// time is the commit's, and the serial number is derived from the artifact's
// name and digest.
func SBOM(s sbomSubject, version, commit string, commitTime time.Time) ([]byte, error) {
	if len(s.Builds) == 0 {
		return nil, fmt.Errorf("%s: no build information", s.File)
	}
	mods := map[string]cdx.Component{}
	add := func(path, version, sum string) {
		ref := purl(path, version)
		c := cdx.Component{BOMRef: ref, Type: cdx.ComponentTypeLibrary, Name: path, Version: version, PackageURL: ref}
		if sum != "" {
			c.Properties = &[]cdx.Property{{Name: "go.sum", Value: sum}}
		}
		mods[ref] = c
	}
	for _, info := range s.Builds {
		add("stdlib", info.GoVersion, "")
		for _, d := range info.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			add(d.Path, d.Version, d.Sum)
		}
	}
	refs := make([]string, 0, len(mods))
	for ref := range mods {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	components := make([]cdx.Component, 0, len(refs))
	for _, ref := range refs {
		components = append(components, mods[ref])
	}

	mainRef := purl(modulePath, version) + "#" + s.File
	props := []cdx.Property{{Name: "flotilla.commit", Value: commit}}
	for _, p := range s.Platforms {
		props = append(props, cdx.Property{Name: "flotilla.platform", Value: p})
	}
	// How the binary was built (GOOS, GOARCH, CGO_ENABLED, -trimpath, ...):
	// for an archive of one binary; an image's platforms say the rest.
	if len(s.Builds) == 1 {
		for _, setting := range s.Builds[0].Settings {
			props = append(props, cdx.Property{Name: "go.build." + setting.Key, Value: setting.Value})
		}
	}
	bom := cdx.NewBOM()
	bom.SerialNumber = serialNumber(s.File, s.SHA256)
	bom.Version = 1
	bom.Metadata = &cdx.Metadata{
		Timestamp: commitTime.UTC().Format(time.RFC3339),
		Tools: &cdx.ToolsChoice{Components: &[]cdx.Component{{
			Type: cdx.ComponentTypeApplication, Name: "flotilla tools/release", Version: version,
		}}},
		Component: &cdx.Component{
			BOMRef:     mainRef,
			Type:       s.Type,
			Name:       s.Name,
			Version:    version,
			PackageURL: purl(modulePath, version),
			Hashes:     &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: s.SHA256}},
			Licenses:   &cdx.Licenses{{License: &cdx.License{ID: "Apache-2.0"}}},
			Properties: &props,
		},
	}
	bom.Components = &components
	bom.Dependencies = &[]cdx.Dependency{{Ref: mainRef, Dependencies: &refs}}
	var buf bytes.Buffer
	enc := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatJSON)
	enc.SetPretty(true)
	if err := enc.Encode(bom); err != nil {
		return nil, fmt.Errorf("failed to write the SBOM of %s: %w", s.File, err)
	}
	return buf.Bytes(), nil
}

// serialNumber is a urn:uuid derived from the artifact's name and digest
// (the form of a version 5 UUID), so that a rebuild gives the same SBOM.
func serialNumber(file, digest string) string {
	h := sha256.Sum256([]byte(file + "\n" + digest))
	u := h[:16]
	u[6] = (u[6] & 0x0f) | 0x50
	u[8] = (u[8] & 0x3f) | 0x80
	return fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

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
	"strings"

	"sigs.k8s.io/yaml"
)

// KrewFile is the krew plugin manifest of a release.
const KrewFile = "flotilla.yaml"

// krewPlugin is a krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2
// Plugin), the fields a plugin index needs.
type krewPlugin struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   krewMetadata   `json:"metadata"`
	Spec       krewPluginSpec `json:"spec"`
}

type krewMetadata struct {
	Name string `json:"name"`
}

type krewPluginSpec struct {
	Version          string         `json:"version"`
	Homepage         string         `json:"homepage"`
	ShortDescription string         `json:"shortDescription"`
	Description      string         `json:"description"`
	Platforms        []krewPlatform `json:"platforms"`
}

type krewPlatform struct {
	Selector krewSelector `json:"selector"`
	URI      string       `json:"uri"`
	SHA256   string       `json:"sha256"`
	Bin      string       `json:"bin"`
	Files    []krewFile   `json:"files"`
}

type krewSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

type krewFile struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// pluginArchive is one platform's archive of kubectl-flotilla.
type pluginArchive struct {
	Platform Platform
	// Name is the archive's file name; SHA256 its hex digest.
	Name, SHA256 string
}

// KrewManifest renders the krew plugin manifest of version: one platform
// entry per archive, in the order given, each downloaded from downloadBase
// ({version} replaced) and the archive's name, and checked against its
// SHA-256. The archive holds the plugin binary and LICENSE at its top.
func KrewManifest(version, downloadBase string, archives []pluginArchive) ([]byte, error) {
	if len(archives) == 0 {
		return nil, fmt.Errorf("no kubectl-flotilla archive to list in the krew manifest")
	}
	base := strings.TrimSuffix(strings.ReplaceAll(downloadBase, "{version}", version), "/")
	p := krewPlugin{
		APIVersion: "krew.googlecontainertools.github.com/v1alpha2",
		Kind:       "Plugin",
		Metadata:   krewMetadata{Name: "flotilla"},
		Spec: krewPluginSpec{
			Version:          version,
			Homepage:         "https://github.com/flotilla-io/flotilla",
			ShortDescription: "Inspect and operate Flotilla placements across a fleet",
			Description: "kubectl flotilla explains why a placement is, or is not, on a member\n" +
				"cluster, shows a placement's status as a tree, lists the fleet's\n" +
				"member clusters, approves staged update runs, and cordons, uncordons\n" +
				"and drains members of a Flotilla hub.\n",
		},
	}
	for _, a := range archives {
		if len(a.SHA256) != 64 {
			return nil, fmt.Errorf("%s: %q is not a hex SHA-256", a.Name, a.SHA256)
		}
		p.Spec.Platforms = append(p.Spec.Platforms, krewPlatform{
			Selector: krewSelector{MatchLabels: map[string]string{"os": a.Platform.OS, "arch": a.Platform.Arch}},
			URI:      base + "/" + a.Name,
			SHA256:   a.SHA256,
			Bin:      pluginBinary,
			Files:    []krewFile{{From: pluginBinary, To: "."}, {From: "LICENSE", To: "."}},
		})
	}
	out, err := yaml.Marshal(p)
	if err != nil {
		return nil, err
	}
	return out, nil
}

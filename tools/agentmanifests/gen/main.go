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

// Command gen writes manifests/agent/rendered/<profile>.yaml for every RBAC
// profile (package agentmanifests); `make manifests` runs it from the
// repository's root.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/flotilla-io/flotilla/tools/agentmanifests"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "agentmanifests: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	root := os.DirFS("manifests")
	out := filepath.Join("manifests", filepath.FromSlash(agentmanifests.RenderedDir))
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	profiles := make([]string, 0, len(agentmanifests.Profiles))
	for p := range agentmanifests.Profiles {
		profiles = append(profiles, p)
	}
	sort.Strings(profiles)
	for _, p := range profiles {
		data, err := agentmanifests.Build(root, p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, p+".yaml"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

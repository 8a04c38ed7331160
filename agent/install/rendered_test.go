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

package install

import (
	"io/fs"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/manifests"
	"github.com/flotilla-io/flotilla/tools/agentmanifests"
)

// The embedded manifests/agent/rendered files are what kustomize builds from
// manifests/agent now; `make manifests` refreshes them.
func TestRenderedManifestsAreFresh(t *testing.T) {
	for profile, file := range renderedFiles {
		want, err := agentmanifests.Build(os.DirFS("../../manifests"), profile)
		if err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		got, err := fs.ReadFile(manifests.Agent, file)
		if err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("manifests/%s is stale: run `make manifests` (-kustomize build +committed):\n%s", file, diff)
		}
	}
	if len(renderedFiles) != len(agentmanifests.Profiles) {
		t.Errorf("install knows %d profiles, tools/agentmanifests %d", len(renderedFiles), len(agentmanifests.Profiles))
	}
}

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

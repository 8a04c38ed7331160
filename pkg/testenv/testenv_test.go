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

package testenv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestReadPinnedVersions(t *testing.T) {
	tests := []struct {
		name              string
		goMod             string
		wantKube, wantEtc string
		wantErr           bool
	}{
		{
			name: "versions in a require block are found",
			goMod: `module example.com/tools

go 1.26.0

require (
	go.etcd.io/etcd/server/v3 v3.7.0
	k8s.io/kubernetes v1.37.1
)

require k8s.io/api v0.37.1 // indirect
`,
			wantKube: "v1.37.1",
			wantEtc:  "v3.7.0",
		},
		{
			name: "versions on require lines are found",
			goMod: `module example.com/tools
require k8s.io/kubernetes v1.36.0
require go.etcd.io/etcd/server/v3 v3.6.1
`,
			wantKube: "v1.36.0",
			wantEtc:  "v3.6.1",
		},
		{
			name:    "a go.mod without etcd is an error",
			goMod:   "module example.com/tools\nrequire k8s.io/kubernetes v1.36.0\n",
			wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "go.mod")
			if err := os.WriteFile(path, []byte(tc.goMod), 0o600); err != nil {
				t.Fatal(err)
			}
			kube, etcd, err := readPinnedVersions(path)
			if gotErr := err != nil; gotErr != tc.wantErr {
				t.Fatalf("got error %v, want an error: %t", err, tc.wantErr)
			}
			if kube != tc.wantKube || etcd != tc.wantEtc {
				t.Errorf("got kube %q and etcd %q, want %q and %q", kube, etcd, tc.wantKube, tc.wantEtc)
			}
		})
	}
}

func TestRepoRootHoldsTheModule(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if path, ok := readModulePath(filepath.Join(root, "go.mod")); !ok || path != ModulePath {
		t.Errorf("go.mod in %s declares %q, want %q", root, path, ModulePath)
	}
}

func TestDefaultAssetsDirectoryFollowsTheCache(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	got, err := defaultAssetsDirectory(root)
	if err != nil {
		t.Fatal(err)
	}
	if dir := filepath.Dir(got); dir != filepath.Join(cache, "flotilla", "bin") {
		t.Errorf("assets directory %s is not in %s", got, filepath.Join(cache, "flotilla", "bin"))
	}
	if base := filepath.Base(got); !strings.HasPrefix(base, "kube-v") || !strings.Contains(base, "-etcd-v") {
		t.Errorf("assets directory %s is not named kube-<version>-etcd-<version>", got)
	}
}

func TestStartWithoutBinariesSaysToRunMakeTools(t *testing.T) {
	_, err := Start(Options{BinaryAssetsDirectory: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "run `make tools`") {
		t.Fatalf("got error %v, want one that says to run `make tools`", err)
	}
}

func TestStartServesTheCRDs(t *testing.T) {
	env, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
		if err := env.Stop(); err != nil {
			t.Errorf("a second Stop failed: %v", err)
		}
	}()
	ctx := context.Background()
	if err := env.Client.List(ctx, &clusterv1beta1.MemberClusterList{}); err != nil {
		t.Errorf("failed to list member clusters: %v", err)
	}
	if err := env.Client.List(ctx, &placementv1beta1.ClusterResourcePlacementList{}); err != nil {
		t.Errorf("failed to list placements: %v", err)
	}
}

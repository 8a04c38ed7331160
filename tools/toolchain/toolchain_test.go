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

package toolchain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRequiredVersion(t *testing.T) {
	for _, tc := range []struct {
		name    string
		goMod   string
		module  string
		want    string
		wantErr bool
	}{
		{"a version in a require block is found", "module x\n\nrequire (\n\tgo.etcd.io/etcd/server/v3 v3.7.0\n\tk8s.io/kubernetes v1.37.1\n)\n", "k8s.io/kubernetes", "v1.37.1", false},
		{"a version on a require line is found", "module x\nrequire sigs.k8s.io/kwok v0.8.0\n", "sigs.k8s.io/kwok", "v0.8.0", false},
		{"a module that is not required is an error", "module x\nrequire k8s.io/kubernetes v1.36.0\n", "go.etcd.io/etcd/server/v3", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "go.mod")
			if err := os.WriteFile(path, []byte(tc.goMod), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := requiredVersion(path, tc.module)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("requiredVersion = (%q, %v), want %q (error: %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestKubeDirFollowsTheCacheAndThePins(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	got, err := KubeDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if dir := filepath.Dir(got); dir != filepath.Join(cache, "flotilla", "bin") {
		t.Errorf("%s is not in %s", got, filepath.Join(cache, "flotilla", "bin"))
	}
	if base := filepath.Base(got); !strings.HasPrefix(base, "kube-v") || !strings.Contains(base, "-etcd-v") {
		t.Errorf("%s is not named kube-<version>-etcd-<version>", got)
	}
}

func TestFindSaysToRunMakeToolsWhenBinariesAreMissing(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("FLOTILLA_KUBE_BIN", "")
	t.Setenv("FLOTILLA_KWOK_BIN", "")
	if _, err := Find(root); err == nil || !strings.Contains(err.Error(), "make tools") {
		t.Fatalf("Find = %v, want an error that says to run make tools", err)
	}
}

func TestHelmIsThePinnedVersionInTheCacheAndSaysToBuildItWhenMissing(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("FLOTILLA_HELM", "")
	version, err := HelmVersion(root)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cache, "flotilla", "bin", "helm-"+version, "helm")
	if _, err := Helm(root); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "make tools") {
		t.Errorf("Helm with no binary: error %v, want one naming %s and `make tools`", err, want)
	}
	if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(want, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Helm(root)
	if err != nil || got != want {
		t.Errorf("Helm = (%q, %v), want %q", got, err, want)
	}
}

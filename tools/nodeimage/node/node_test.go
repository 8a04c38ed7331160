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

package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/tools/toolchain"
)

// fakeRepo lays out the files InputsHash reads.
func fakeRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for file, content := range map[string]string{
		"tools/nodeimage/files/etc/containerd/config.toml": "sandbox = \"registry.k8s.io/pause:3.10.2\"\n",
		"tools/nodeimage/node/node.go":                     "package node\n",
		"tools/nodeimage/node/node_test.go":                "package node\n",
		"tools/ociimage/ociimage.go":                       "package ociimage\n",
		"tools/k8s/go.mod":                                 "module x\n",
	} {
		p := filepath.Join(root, file)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestInputsHashFollowsTheInputsButNotTheTests(t *testing.T) {
	root := fakeRepo(t)
	first, err := InputsHash(root)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := InputsHash(root); again != first {
		t.Fatalf("hash of unchanged inputs moved: %s, then %s", first, again)
	}
	if err := os.WriteFile(filepath.Join(root, "tools/nodeimage/node/node_test.go"), []byte("package node // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := InputsHash(root); got != first {
		t.Errorf("a test file changed the node image's name: %s, then %s", first, got)
	}
	if err := os.WriteFile(filepath.Join(root, "tools/nodeimage/files/etc/containerd/config.toml"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := InputsHash(root); got == first {
		t.Error("a changed node file kept the node image's name")
	}
}

func TestImageNameCarriesTheKubernetesVersion(t *testing.T) {
	root, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	v, err := ReadVersions(root)
	if err != nil {
		t.Fatal(err)
	}
	name, err := ImageName(root)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, Repository+":"+v.Kubernetes+"-") {
		t.Errorf("ImageName = %q, want %s:%s-<hash>", name, Repository, v.Kubernetes)
	}
	for what, got := range map[string]string{"etcd": v.Etcd, "containerd": v.Containerd, "CoreDNS": v.CoreDNS} {
		if !strings.HasPrefix(got, "v") {
			t.Errorf("%s version %q is not a module version", what, got)
		}
	}
}

func TestPauseImageIsTheSandboxContainerdPins(t *testing.T) {
	got, err := PauseImage(fakeRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	if got != "registry.k8s.io/pause:3.10.2" {
		t.Errorf("PauseImage = %q", got)
	}
	if _, err := PauseImage(t.TempDir()); err == nil {
		t.Error("a repository without the containerd config gave a pause image")
	}
}

func TestCheckVersionsRefusesWhatKubeadmDoesNotDeploy(t *testing.T) {
	root := fakeRepo(t)
	b := &Builder{opts: Options{RepoRoot: root}, versions: Versions{Kubernetes: "v1.37.1", Etcd: "v3.7.0", CoreDNS: "v1.14.6"}}
	refs := map[string]string{
		"coredns": "registry.k8s.io/coredns/coredns:v1.14.6",
		"etcd":    "registry.k8s.io/etcd:3.7.0-0",
		"pause":   "registry.k8s.io/pause:3.10.2",
	}
	if err := b.checkVersions(refs); err != nil {
		t.Fatalf("matching versions refused: %v", err)
	}
	for key, ref := range map[string]string{
		"coredns": "registry.k8s.io/coredns/coredns:v1.15.0",
		"etcd":    "registry.k8s.io/etcd:3.6.5-0",
		"pause":   "registry.k8s.io/pause:3.11",
	} {
		bad := map[string]string{}
		for k, v := range refs {
			bad[k] = v
		}
		bad[key] = ref
		if err := b.checkVersions(bad); err == nil {
			t.Errorf("kubeadm deploying %s was accepted", ref)
		}
	}
}

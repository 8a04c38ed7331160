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

// Package node builds Flotilla's kind node image on a machine that can pull no
// image: a Debian base from debootstrap with systemd, containerd v2, runc and the
// CNI plugins; kubelet, kubeadm and kubectl from the pinned Kubernetes source; and
// the control-plane, kube-proxy, etcd, CoreDNS and pause images, built from source
// as OCI archives that every node imports at boot.
//
// Each step's output is cached by version under the tool cache (like `make tools`),
// the image is named after the versions and a hash of its build inputs, and a
// second Build with the image present does nothing.
package node

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flotilla-io/flotilla/tools/toolchain"
)

// Repository is the podman image name of the node image (a local name: podman
// never tries to pull it).
const Repository = "localhost/flotilla-node"

// Versions are the pinned versions of what goes into the node image.
type Versions struct {
	Kubernetes string // tools/k8s/go.mod: k8s.io/kubernetes
	Etcd       string // tools/k8s/go.mod: go.etcd.io/etcd/server/v3
	Containerd string // tools/nodeimage/pins/containerd/go.mod
	CoreDNS    string // tools/nodeimage/pins/coredns/go.mod
}

// ReadVersions reads the pinned versions from the repository's go.mod files.
func ReadVersions(repoRoot string) (Versions, error) {
	var v Versions
	for _, p := range []struct {
		dst           *string
		gomod, module string
	}{
		{&v.Kubernetes, "tools/k8s/go.mod", "k8s.io/kubernetes"},
		{&v.Etcd, "tools/k8s/go.mod", "go.etcd.io/etcd/server/v3"},
		{&v.Containerd, "tools/nodeimage/pins/containerd/go.mod", "github.com/containerd/containerd/v2"},
		{&v.CoreDNS, "tools/nodeimage/pins/coredns/go.mod", "github.com/coredns/coredns"},
	} {
		ver, err := toolchain.RequiredVersion(filepath.Join(repoRoot, p.gomod), p.module)
		if err != nil {
			return Versions{}, err
		}
		*p.dst = ver
	}
	return v, nil
}

// inputs are the repository paths whose content decides the node image.
var inputs = []string{"tools/nodeimage", "tools/ociimage", "tools/k8s/go.mod"}

// InputsHash hashes every build input (file names and contents, tests excluded),
// so that a change to any of them names a new image.
func InputsHash(repoRoot string) (string, error) {
	var files []string
	for _, in := range inputs {
		err := filepath.WalkDir(filepath.Join(repoRoot, in), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && !strings.HasSuffix(p, "_test.go") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("failed to read the node image's inputs: %w", err)
		}
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		rel, _ := filepath.Rel(repoRoot, f)
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		in, err := os.Open(f)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, in)
		in.Close()
		if err != nil {
			return "", err
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// ImageName is the node image's name for this checkout:
// localhost/flotilla-node:<kubernetes version>-<inputs hash>.
func ImageName(repoRoot string) (string, error) {
	v, err := ReadVersions(repoRoot)
	if err != nil {
		return "", err
	}
	hash, err := InputsHash(repoRoot)
	if err != nil {
		return "", err
	}
	return Repository + ":" + v.Kubernetes + "-" + hash, nil
}

// PauseImage is the sandbox image every node carries (the one containerd's config
// pins), which also serves any pod that only needs to run: it sleeps until stopped.
func PauseImage(repoRoot string) (string, error) {
	file := filepath.Join(repoRoot, "tools/nodeimage/files/etc/containerd/config.toml")
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "sandbox = "); ok {
			return strings.Trim(v, `"`), nil
		}
	}
	return "", fmt.Errorf("%s pins no sandbox image", file)
}

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

// Package toolchain finds the Kubernetes binaries that `make tools` builds into the
// versioned cache, for the local fleet and the tests. The versions come from the
// pinning go.mod files under tools/k8s, exactly as the Makefile reads them.
package toolchain

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Dirs are the folders holding the pinned binaries.
type Dirs struct {
	// Kube holds kube-apiserver, kube-controller-manager, kube-scheduler, etcd and a
	// kubectl link: also what envtest's KUBEBUILDER_ASSETS points at.
	Kube string
	// Kwok holds kwok and kwokctl.
	Kwok string
}

// RepoRoot walks up from the working directory to the folder holding the main go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.HasPrefix(string(data), "module github.com/flotilla-io/flotilla\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("not inside the flotilla repository (no go.mod of github.com/flotilla-io/flotilla above the working directory)")
		}
		dir = parent
	}
}

// cacheDir is where `make tools` builds: $XDG_CACHE_HOME/flotilla/bin, or
// ~/.cache/flotilla/bin.
func cacheDir() (string, error) {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("failed to find the home folder: %w", err)
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "flotilla", "bin"), nil
}

// KubeDir is the cache folder of the pinned kube-apiserver, controller-manager,
// scheduler and etcd (also what envtest's KUBEBUILDER_ASSETS points at), named
// after the versions tools/k8s/go.mod pins.
func KubeDir(repoRoot string) (string, error) {
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	kube, err := requiredVersion(filepath.Join(repoRoot, "tools/k8s/go.mod"), "k8s.io/kubernetes")
	if err != nil {
		return "", err
	}
	etcd, err := requiredVersion(filepath.Join(repoRoot, "tools/k8s/go.mod"), "go.etcd.io/etcd/server/v3")
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "kube-"+kube+"-etcd-"+etcd), nil
}

// KwokDir is the cache folder of the pinned kwok and kwokctl.
func KwokDir(repoRoot string) (string, error) {
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	kwok, err := requiredVersion(filepath.Join(repoRoot, "tools/k8s/kwok/go.mod"), "sigs.k8s.io/kwok")
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "kwok-"+kwok), nil
}

// Find returns the tool folders: $FLOTILLA_KUBE_BIN and $FLOTILLA_KWOK_BIN when set
// (the Makefile sets them), else the cache folders for the pinned versions. It
// checks that the binaries are there and says to run `make tools` when not.
func Find(repoRoot string) (Dirs, error) {
	d := Dirs{Kube: os.Getenv("FLOTILLA_KUBE_BIN"), Kwok: os.Getenv("FLOTILLA_KWOK_BIN")}
	var err error
	if d.Kube == "" {
		if d.Kube, err = KubeDir(repoRoot); err != nil {
			return Dirs{}, err
		}
	}
	if d.Kwok == "" {
		if d.Kwok, err = KwokDir(repoRoot); err != nil {
			return Dirs{}, err
		}
	}
	for _, bin := range []string{
		filepath.Join(d.Kube, "kube-apiserver"), filepath.Join(d.Kube, "kube-controller-manager"),
		filepath.Join(d.Kube, "kube-scheduler"), filepath.Join(d.Kube, "etcd"),
		filepath.Join(d.Kwok, "kwok"), filepath.Join(d.Kwok, "kwokctl"),
	} {
		if _, err := os.Stat(bin); err != nil {
			return Dirs{}, fmt.Errorf("%s is missing: run `make tools` first (it builds the pinned Kubernetes binaries once)", bin)
		}
	}
	return d, nil
}

// requiredVersion reads the version of module from a go.mod's require lines.
func requiredVersion(gomod, module string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", fmt.Errorf("failed to read %s: %w", gomod, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == module {
			return fields[1], nil
		}
		if len(fields) >= 3 && fields[0] == "require" && fields[1] == module {
			return fields[2], nil
		}
	}
	return "", fmt.Errorf("%s does not require %s", gomod, module)
}

// HelmVersion is the Helm version tools/k8s/helm/go.mod pins.
func HelmVersion(repoRoot string) (string, error) {
	return requiredVersion(filepath.Join(repoRoot, "tools/k8s/helm/go.mod"), "helm.sh/helm/v4")
}

// Helm returns the pinned helm binary: $FLOTILLA_HELM when set (the Makefile sets
// it), else helm-<version>/helm in the cache. It says to run `make tools` when the
// binary is not there.
func Helm(repoRoot string) (string, error) {
	bin := os.Getenv("FLOTILLA_HELM")
	if bin == "" {
		cache, err := cacheDir()
		if err != nil {
			return "", err
		}
		version, err := HelmVersion(repoRoot)
		if err != nil {
			return "", err
		}
		bin = filepath.Join(cache, "helm-"+version, "helm")
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s is missing: run `make tools` (or make verify) first; it builds the pinned helm once", bin)
	}
	return bin, nil
}

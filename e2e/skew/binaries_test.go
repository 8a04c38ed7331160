//go:build skew

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

package skew

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/flotilla-io/flotilla/pkg/version"
)

// Versions the suite stamps into the binaries (-X pkg/version.Version), so
// that the skew rule sees N-1, N and a version beyond N+1: the base's from
// hack/skew-base, this tree one minor version later, and this tree again two
// minor versions past that (readBase sets them).
var (
	baseVersion    string // hack/skew-base
	currentVersion string // this tree
	tooNewVersion  string // this tree, stamped two minors past the hub
)

const versionPackage = "github.com/flotilla-io/flotilla/pkg/version.Version"

// binaries are a hub and an agent of one version, and that version's hub
// manifests (CRDs, RBAC).
type binaries struct {
	Hub, Agent, Manifests string
}

// readBase reads the pinned base commit and its version from hack/skew-base
// (a line "<commit> <version>") and sets the versions the suite stamps.
func readBase(root string) (string, error) {
	f, err := os.Open(filepath.Join(root, "hack", "skew-base"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return "", fmt.Errorf("hack/skew-base: want a line \"<commit> <version>\", got %q", line)
		}
		v, ok := version.Parse(fields[1])
		if !ok || v.Prerelease != "" {
			return "", fmt.Errorf("hack/skew-base: %q is not a release version such as v0.4.0", fields[1])
		}
		baseVersion = v.String()
		currentVersion = version.Semantic{Major: v.Major, Minor: v.Minor + 1}.String()
		tooNewVersion = version.Semantic{Major: v.Major, Minor: v.Minor + 3}.String()
		return fields[0], nil
	}
	return "", fmt.Errorf("hack/skew-base names no commit")
}

// cacheDir is where built base versions are kept, by commit.
func cacheDir() (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "flotilla", "skew"), nil
}

// buildBase builds the hub and agent of commit (checked out with `git
// worktree add` into a temporary folder) into the cache, keyed by the commit
// and the stamped version, with its manifests; a second run reuses them.
func buildBase(ctx context.Context, root, commit string, logf func(string, ...any)) (binaries, error) {
	cache, err := cacheDir()
	if err != nil {
		return binaries{}, err
	}
	dir := filepath.Join(cache, commit+"-"+baseVersion)
	b := binaries{Hub: filepath.Join(dir, "hub"), Agent: filepath.Join(dir, "agent"), Manifests: filepath.Join(dir, "manifests", "hub")}
	if _, err := os.Stat(filepath.Join(dir, "complete")); err == nil {
		logf("reusing the base %s built in %s", commit[:7], dir)
		return b, nil
	}
	logf("building the base %s (hub and agent) into %s", commit[:7], dir)
	tmp, err := os.MkdirTemp("", "flotilla-skew-base-")
	if err != nil {
		return binaries{}, err
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "tree")
	if err := command(ctx, root, "git", "worktree", "add", "--detach", tree, commit); err != nil {
		return binaries{}, err
	}
	defer func() { _ = command(context.WithoutCancel(ctx), root, "git", "worktree", "remove", "--force", tree) }()
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return binaries{}, err
	}
	if err := command(ctx, tree, "go", "build", "-ldflags", "-X "+versionPackage+"="+baseVersion, "-o", dir+"/", "./hub", "./agent"); err != nil {
		return binaries{}, err
	}
	if err := command(ctx, tree, "cp", "-r", filepath.Join(tree, "manifests"), dir+"/"); err != nil {
		return binaries{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "complete"), []byte(commit+"\n"), 0o644); err != nil {
		return binaries{}, err
	}
	return b, nil
}

// buildCurrent builds this tree's packages (./hub, ./agent) stamped version
// into dir.
func buildCurrent(ctx context.Context, root, dir, version string, packages ...string) (binaries, error) {
	args := append([]string{"build", "-ldflags", "-X " + versionPackage + "=" + version, "-o", dir + "/"}, packages...)
	if err := command(ctx, root, "go", args...); err != nil {
		return binaries{}, err
	}
	return binaries{Hub: filepath.Join(dir, "hub"), Agent: filepath.Join(dir, "agent"), Manifests: filepath.Join(root, "manifests", "hub")}, nil
}

func command(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

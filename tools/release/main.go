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

// Command release builds a Flotilla release into a folder (`make release
// VERSION=v0.3.0` runs it into dist/), with no container engine:
//
//   - hub, agent and kubectl-flotilla for linux and darwin on amd64 and arm64,
//     each a tar.gz with LICENSE (flotilla-hub_v0.3.0_linux_amd64.tar.gz);
//   - the hub and agent images as OCI image-layout archives, each an image
//     index over linux/amd64 and linux/arm64 (flotilla-hub_v0.3.0.oci.tar);
//   - install.yaml, the hub's single-file install manifest;
//   - a CycloneDX SBOM per archive (<archive>.cdx.json);
//   - flotilla.yaml, the krew plugin manifest; RELEASE_NOTES.md, the
//     CHANGELOG.md section of the version; SHA256SUMS over all of them.
//
// The release is reproducible: every time in it is the commit's, so the same
// commit gives the same SHA256SUMS. --check builds it twice and compares
// (`make release-check`).
//
//	go run ./tools/release --version v0.3.0 --out dist
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flotilla-io/flotilla/tools/toolchain"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	var opts Options
	var platforms, imagePlatforms string
	var allowDirty, check, coldCheck bool
	flag.StringVar(&opts.Version, "version", "", "Version of the release, a semantic version tag such as v0.3.0 (required).")
	flag.StringVar(&opts.OutDir, "out", "dist", "Folder the release is written to; it must not exist or be empty.")
	flag.StringVar(&platforms, "platforms", joinPlatforms(DefaultPlatforms), "Platforms of the binaries, os/arch, comma-separated.")
	flag.StringVar(&imagePlatforms, "image-platforms", joinPlatforms(DefaultImagePlatforms), "Platforms of the images' index, linux/arch, comma-separated; each must be in --platforms.")
	flag.StringVar(&opts.ImageRepository, "image-repository", "", "Repository put before the image names in their tags, install.yaml and the agent's default install image (registry.example/flotilla); default none, as manifests/ names them.")
	flag.StringVar(&opts.DownloadBase, "download-base", DefaultDownloadBase, "URL the archives are published under, for the krew manifest; {version} is replaced by the version.")
	flag.StringVar(&opts.Changelog, "changelog", "", "Changelog the release notes come from (default CHANGELOG.md).")
	flag.BoolVar(&allowDirty, "allow-dirty", false, "Build from a checkout with uncommitted changes (the commit is then recorded with -dirty; not for publishing).")
	flag.BoolVar(&check, "check", false, "Build the release twice, into --out/1 and --out/2, and fail unless their SHA256SUMS are identical.")
	flag.BoolVar(&coldCheck, "cold", false, "With --check: build the second time with an empty Go build cache, so that nothing is reused.")
	flag.Parse()

	var err error
	if opts.Platforms, err = ParsePlatforms(platforms); err != nil {
		return fmt.Errorf("--platforms: %w", err)
	}
	if opts.ImagePlatforms, err = ParsePlatforms(imagePlatforms); err != nil {
		return fmt.Errorf("--image-platforms: %w", err)
	}
	if err := ValidateVersion(opts.Version); err != nil {
		return err
	}
	if opts.Root, err = toolchain.RepoRoot(); err != nil {
		return err
	}
	if opts.Commit, opts.Time, err = gitCommit(opts.Root, allowDirty); err != nil {
		return err
	}
	opts.Default()
	if err := opts.Validate(); err != nil {
		return err
	}
	ctx := context.Background()
	if !check {
		start := time.Now()
		sums, err := Run(ctx, opts, os.Stdout)
		if err != nil {
			return err
		}
		fmt.Printf("%s\nrelease %s (commit %s) in %s: %d files, %s\n", sums, opts.Version, opts.Commit,
			time.Since(start).Round(time.Second), strings.Count(sums, "\n"), filepath.Join(opts.OutDir, SumsFile))
		return nil
	}
	var runs [2]string
	var coldCache string
	if coldCheck {
		if coldCache, err = os.MkdirTemp("", "flotilla-release-gocache-"); err != nil {
			return err
		}
		defer os.RemoveAll(coldCache)
	}
	for i := range runs {
		o := opts
		o.OutDir = filepath.Join(opts.OutDir, strconv.Itoa(i+1))
		if i == 1 && coldCheck {
			if err := os.Setenv("GOCACHE", coldCache); err != nil {
				return err
			}
		}
		start := time.Now()
		if runs[i], err = Run(ctx, o, os.Stdout); err != nil {
			return err
		}
		fmt.Printf("build %d of %s into %s: %s\n", i+1, opts.Version, o.OutDir, time.Since(start).Round(time.Second))
	}
	if runs[0] != runs[1] {
		return fmt.Errorf("the two builds differ:\n--- %s/1/%s\n%s--- %s/2/%s\n%s", opts.OutDir, SumsFile, runs[0], opts.OutDir, SumsFile, runs[1])
	}
	fmt.Printf("%s\nthe two builds are identical: %d files, SHA256SUMS %s\n", runs[0], strings.Count(runs[0], "\n"), sha256Hex([]byte(runs[0])))
	return nil
}

func joinPlatforms(ps []Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// gitCommit returns the commit the checkout at root is at and its time. A
// checkout with uncommitted changes is refused unless allowDirty, and then
// its commit is recorded with "-dirty".
func gitCommit(root string, allowDirty bool) (string, time.Time, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	commit, err := git("rev-parse", "HEAD")
	if err != nil {
		return "", time.Time{}, fmt.Errorf("a release is built from a git checkout: %w", err)
	}
	sec, err := git("log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return "", time.Time{}, err
	}
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("git gave the commit time %q: %w", sec, err)
	}
	status, err := git("status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return "", time.Time{}, err
	}
	if status != "" {
		if !allowDirty {
			return "", time.Time{}, fmt.Errorf("the checkout has uncommitted changes; commit them (a release is built from a commit) or pass --allow-dirty (ALLOW_DIRTY=1) for a trial build:\n%s", status)
		}
		commit += "-dirty"
	}
	return commit, time.Unix(n, 0).UTC(), nil
}

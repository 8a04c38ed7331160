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

// Command images packs the hub and agent binaries into minimal, non-root OCI
// image archives with no container engine (`make images` runs it), and sets the
// tag that manifests/hub and manifests/agent deploy.
//
//	go run ./tools/images --bin bin/linux-amd64 --out bin/images --tag dev --version v0.3.0 --set-manifests
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/flotilla-io/flotilla/tools/images/build"
	"github.com/flotilla-io/flotilla/tools/toolchain"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "images: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	opts := build.Options{}
	var setManifests bool
	var created string
	flag.StringVar(&opts.BinDir, "bin", "bin/linux-amd64", "Folder holding the static linux/amd64 hub and agent binaries.")
	flag.StringVar(&opts.OutDir, "out", "bin/images", "Folder the image archives are written to.")
	flag.StringVar(&opts.Tag, "tag", build.DefaultTag, "Tag of both images.")
	flag.StringVar(&opts.Version, "version", "v0.0.0-dev", "Version recorded in the images' org.opencontainers.image.version label.")
	flag.StringVar(&opts.Revision, "revision", "", "Source revision recorded in the org.opencontainers.image.revision label.")
	flag.StringVar(&created, "created", "", "Creation time of the images, Unix seconds (default: a fixed time, for reproducible builds).")
	flag.BoolVar(&setManifests, "set-manifests", false, "Also set the tag in manifests/hub and manifests/agent (kustomize images) and as the appVersion of charts/flotilla-hub and charts/flotilla-agent.")
	flag.Parse()
	if created != "" {
		sec, err := strconv.ParseInt(created, 10, 64)
		if err != nil {
			return fmt.Errorf("--created %q is not Unix seconds", created)
		}
		opts.Created = time.Unix(sec, 0).UTC()
	}
	built, err := build.Images(opts)
	if err != nil {
		return err
	}
	for _, b := range built {
		fmt.Printf("%s %s %s (%d bytes)\n", b.Ref, b.Digest, b.Archive, b.Size)
	}
	if !setManifests {
		return nil
	}
	root, err := toolchain.RepoRoot()
	if err != nil {
		return err
	}
	for _, k := range []struct{ dir, image string }{{"hub", build.HubImage}, {filepath.Join("agent", "base"), build.AgentImage}} {
		file := filepath.Join(root, "manifests", k.dir, "kustomization.yaml")
		changed, err := build.SetKustomizeTag(file, k.image, opts.Tag)
		if err != nil {
			return err
		}
		if changed {
			fmt.Printf("set %s:%s in %s\n", k.image, opts.Tag, file)
		}
	}
	// The charts deploy their appVersion as the image tag, as the manifests do.
	for _, chart := range []string{"flotilla-hub", "flotilla-agent"} {
		file := filepath.Join(root, "charts", chart, "Chart.yaml")
		changed, err := build.SetChartAppVersion(file, opts.Tag)
		if err != nil {
			return err
		}
		if changed {
			fmt.Printf("set appVersion %s in %s\n", opts.Tag, file)
		}
	}
	return nil
}

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

// Command drift fails when a chart in charts/, rendered with its default values
// by the pinned helm, differs from the manifests it must agree with (package
// charts, Checks); hack/verify-charts.sh runs it from the repository's root.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/flotilla-io/flotilla/tools/charts"
	"github.com/flotilla-io/flotilla/tools/toolchain"
)

func main() {
	helm := flag.String("helm", "", "The helm binary (default: $FLOTILLA_HELM, or the pinned one in the tool cache).")
	flag.Parse()
	if err := run(*helm); err != nil {
		fmt.Fprintf(os.Stderr, "drift: %v\n", err)
		os.Exit(1)
	}
}

func run(helm string) error {
	root, err := toolchain.RepoRoot()
	if err != nil {
		return err
	}
	if helm == "" {
		if helm, err = toolchain.Helm(root); err != nil {
			return err
		}
	}
	failed := 0
	for _, c := range charts.Checks(root) {
		c.Release.Helm = helm
		diffs, err := c.Run(context.Background())
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		if len(diffs) == 0 {
			fmt.Printf("%s: they agree\n", c.Name)
			continue
		}
		failed++
		fmt.Fprintf(os.Stderr, "%s: %d differences; change the chart or the manifests so that they agree:\n", c.Name, len(diffs))
		for _, d := range diffs {
			fmt.Fprintf(os.Stderr, "  %s\n", d)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of the charts' checks found differences", failed)
	}
	return nil
}

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

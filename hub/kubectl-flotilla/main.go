// Command kubectl-flotilla is the kubectl plugin `kubectl flotilla`: why a
// placement is (not) on a cluster, placement status as a tree, the fleet at a
// glance, approvals of staged update runs, and cordon/uncordon/drain. Put it on
// $PATH and run `kubectl flotilla --help`.
package main

import (
	"fmt"
	"os"

	"github.com/flotilla-io/flotilla/hub/cli"
)

func main() {
	if err := cli.NewCommand().Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "kubectl flotilla: %v\n", err)
		os.Exit(1)
	}
}

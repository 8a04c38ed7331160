// Command hub is Flotilla's control plane: it runs in one cluster, schedules
// placements onto member clusters and serves the agents' tunnels.
package main

import (
	"fmt"
	"os"

	"github.com/flotilla-io/flotilla/hub/app"
)

func main() {
	if err := app.NewCommand().Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "hub: %v\n", err)
		os.Exit(1)
	}
}

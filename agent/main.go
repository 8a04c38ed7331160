// Command agent runs in each member cluster: it joins the fleet, keeps one
// outbound tunnel to the hub, applies the Work it receives and reports status.
package main

import (
	"fmt"
	"os"

	"github.com/flotilla-io/flotilla/agent/app"
)

func main() {
	if err := app.NewCommand().Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "agent: %v\n", err)
		os.Exit(1)
	}
}

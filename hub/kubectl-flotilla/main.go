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

// Command kubectl-flotilla is the kubectl plugin `kubectl flotilla`: why a
// placement is (not) on a cluster, placement status as a tree, the fleet at a
// glance, approvals of staged update runs, and cordon/uncordon/drain. Put it on
// $PATH and run `kubectl flotilla --help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/flotilla-io/flotilla/hub/cli"
)

func main() {
	// Ctrl-C ends a long-running command (console, drain) cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.NewCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubectl flotilla: %v\n", err)
		os.Exit(1)
	}
}

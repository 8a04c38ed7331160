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

// Command nodeimage builds Flotilla's kind node image from source into podman
// (see package node); `make node-image` runs it. A second run is a no-op.
//
//	go run ./tools/nodeimage            # build what is missing, then the image
//	go run ./tools/nodeimage --name     # print the image name this checkout uses
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/flotilla-io/flotilla/tools/nodeimage/node"
	"github.com/flotilla-io/flotilla/tools/toolchain"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "nodeimage: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	printName := flag.Bool("name", false, "Print the node image's name and exit.")
	force := flag.Bool("force", false, "Rebuild the image even when podman has it (cached binaries are reused).")
	flag.Parse()
	root, err := toolchain.RepoRoot()
	if err != nil {
		return err
	}
	if *printName {
		name, err := node.ImageName(root)
		if err != nil {
			return err
		}
		fmt.Println(name)
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, err := node.NewBuilder(node.Options{RepoRoot: root, Force: *force})
	if err != nil {
		return err
	}
	return b.Build(ctx)
}

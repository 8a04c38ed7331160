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

// Command docgen writes the reference pages that are generated from the code, and
// checks the links of every Markdown page.
//
//	go run ./tools/docgen gen    # docs/reference/{cli,api}/, metrics.md, well-known.md (make docs)
//	go run ./tools/docgen links  # every relative link and #anchor resolves (make verify)
//
// What it generates, and from where:
//
//   - docs/reference/cli/<binary>.md: every command and flag of the hub, the agent
//     and kubectl-flotilla, from their cobra command trees (hub/app, agent/app,
//     hub/cli).
//   - docs/reference/api/: a page per kind, from the CRDs in manifests/crds (their
//     schemas carry the Go types' doc comments and validation), and the well-known
//     labels, annotations and taints from the constants in apis/*/v1beta1/well_known.go.
//   - docs/reference/metrics.md: every flotilla_ metric, found where the hub's and the
//     agent's packages construct their collectors.
//   - docs/concepts/pipeline.md, between its ownership markers only: who writes
//     which field of the pipeline's objects, from hub/pipeline.Ownership.
//
// The generated directories belong to docgen: it removes files there that it did
// not write in this run, so a removed kind or binary leaves no stale page.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/flotilla-io/flotilla/tools/docgen/links"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	root := fs.String("root", ".", "the repository's root")
	_ = fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "gen":
		err = generate(*root)
	case "links":
		var problems []string
		problems, err = links.Check(*root)
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, p)
		}
		if err == nil && len(problems) > 0 {
			err = fmt.Errorf("%d broken links (fix the link, or add a page written in a parallel change to Pending in tools/docgen/links/links.go)", len(problems))
		}
		if err == nil {
			fmt.Println("links: every relative link and anchor resolves")
		}
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "docgen %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: docgen gen|links [--root DIR]")
	os.Exit(2)
}

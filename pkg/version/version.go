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

// Package version holds the build version of the hub and agent binaries.
package version

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
)

// The build's identity, set at link time with -ldflags "-X
// github.com/flotilla-io/flotilla/pkg/version.Version=v0.3.0 -X ...Commit=...
// -X ...Date=..." (`make build` sets Version; `make release`, tools/release,
// sets all three).
var (
	// Version is the release (v0.3.0) or `git describe` of the build.
	Version = "v0.0.0-dev"
	// Commit is the git commit the build is from; empty when unknown.
	Commit = ""
	// Date is the commit's time, RFC 3339 in UTC (never the time of the
	// build, so that builds are reproducible); empty when unknown.
	Date = ""
)

// String describes the build for `version` and `--version` of every binary:
//
//	hub v0.3.0 (commit 2344da0c, 2026-11-26T23:10:00Z, go1.26.8, linux/amd64)
//
// The commit and date are left out when the build does not know them.
func String(binary string) string {
	parts := make([]string, 0, 4)
	if Commit != "" {
		parts = append(parts, "commit "+Commit)
	}
	if Date != "" {
		parts = append(parts, Date)
	}
	parts = append(parts, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
	return fmt.Sprintf("%s %s (%s)", binary, Version, strings.Join(parts, ", "))
}

// AddTo gives root, the root command of binary, a --version flag and a
// `version` command that both print String(binary).
func AddTo(root *cobra.Command, binary string) {
	root.Version = Version
	// A template, not text: cobra treats {{ as a template, and a version never
	// holds one, but the line is printed as is.
	root.SetVersionTemplate(strings.ReplaceAll(String(binary), "{{", "{{`{{`}}") + "\n")
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the " + binary + " version, commit and build date",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), String(binary))
		},
	})
}

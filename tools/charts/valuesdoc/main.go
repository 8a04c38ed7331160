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

// Command valuesdoc writes the values table of each chart in charts/ into
// docs/operations/helm.md, between the lines package charts' Markers names;
// `make manifests` runs it from the repository's root.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/flotilla-io/flotilla/tools/charts"
)

// Doc is the file the tables go in.
const Doc = "docs/operations/helm.md"

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "valuesdoc: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	data, err := os.ReadFile(Doc)
	if err != nil {
		return err
	}
	doc := string(data)
	for _, chart := range []string{charts.HubChart, charts.AgentChart} {
		values, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
		if err != nil {
			return err
		}
		table, err := charts.ValuesTable(values)
		if err != nil {
			return fmt.Errorf("%s/values.yaml: %w", chart, err)
		}
		if doc, err = charts.ReplaceTable(doc, filepath.Base(chart), table); err != nil {
			return fmt.Errorf("%s: %w", Doc, err)
		}
	}
	if doc == string(data) {
		return nil
	}
	return os.WriteFile(Doc, []byte(doc), 0o644)
}

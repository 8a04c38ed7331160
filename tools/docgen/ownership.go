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

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// The ownership section of docs/concepts/pipeline.md lies between these
// markers; the rest of the page is written by hand.
const (
	ownershipPage  = "docs/concepts/pipeline.md"
	ownershipBegin = "<!-- BEGIN GENERATED: ownership (tools/docgen from hub/pipeline/ownership.go; make docs) -->\n"
	ownershipEnd   = "<!-- END GENERATED: ownership -->\n"
)

// genOwnership writes the field-ownership tables (hub/pipeline.Ownership)
// between the markers of the pipeline page.
func genOwnership(root string) error {
	path := filepath.Join(root, ownershipPage)
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	updated, err := replaceSection(old, ownershipBegin, ownershipEnd, renderOwnership())
	if err != nil {
		return fmt.Errorf("%s: %w", ownershipPage, err)
	}
	if bytes.Equal(old, updated) {
		return nil
	}
	return os.WriteFile(path, updated, 0o644)
}

// replaceSection replaces what lies between the begin and end markers (each
// alone on its line) with body.
func replaceSection(page []byte, begin, end, body string) ([]byte, error) {
	s := string(page)
	i := strings.Index(s, begin)
	if i < 0 || (i > 0 && s[i-1] != '\n') {
		return nil, fmt.Errorf("no line %q", strings.TrimSpace(begin))
	}
	j := strings.Index(s[i:], end)
	if j < 0 || s[i+j-1] != '\n' {
		return nil, fmt.Errorf("no line %q after %q", strings.TrimSpace(end), strings.TrimSpace(begin))
	}
	j += i
	return []byte(s[:i+len(begin)] + body + s[j:]), nil
}

// renderOwnership writes the field managers and a table per kind.
func renderOwnership() string {
	var b strings.Builder
	b.WriteString("\n| field manager | writer |\n|---|---|\n")
	for _, w := range pipeline.Writers {
		fmt.Fprintf(&b, "| `%s` | %s |\n", w.Manager, cell(w.Component))
	}
	for _, k := range pipeline.Ownership {
		title := k.Kind
		if k.Also != "" {
			title += " (" + k.Also + ")"
		}
		fmt.Fprintf(&b, "\n### %s\n\n| field | writer | how | when, what |\n|---|---|---|---|\n", title)
		for _, r := range k.Rows {
			field := "`" + r.Field + "`"
			if r.Field == "" {
				field = "the object"
			}
			writer := "the user"
			if r.Writer != pipeline.WriterUser {
				writer = "`" + r.Writer + "`"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", field, writer, r.How, cell(r.Note))
		}
		if k.Note != "" {
			b.WriteString("\n" + k.Note + "\n")
		}
	}
	b.WriteString("\n")
	return b.String()
}

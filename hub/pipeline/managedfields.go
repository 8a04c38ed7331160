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

package pipeline

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Violations checks an object's managedFields against the kind's rows: it
// returns one line for each field a manager owns that no row gives it, and one
// for each manager that is neither a user (isUser) nor a writer of the kind.
// Users' fields are not checked. A manager owning a map or list that holds a
// field of its own (`status.conditions` for `status.conditions[Scheduled]`)
// is fine.
func (k *KindOwnership) Violations(entries []metav1.ManagedFieldsEntry, isUser func(manager string) bool) []string {
	var out []string
	for _, e := range entries {
		if isUser(e.Manager) {
			continue
		}
		var rows [][]string
		for _, r := range k.Rows {
			if r.Writer == e.Manager && r.Field != "" {
				rows = append(rows, splitPath(r.Field))
			}
		}
		if len(rows) == 0 {
			out = append(out, fmt.Sprintf("%s (%s) is no writer of a %s", e.Manager, e.Operation, k.Kind))
			continue
		}
		if e.FieldsV1 == nil {
			continue
		}
		paths, err := FieldPaths(e.FieldsV1.GetRawBytes())
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", e.Manager, err))
			continue
		}
		for _, p := range paths {
			if !coveredBy(p, rows) {
				out = append(out, fmt.Sprintf("%s (%s) owns %s of a %s, which no row gives it", e.Manager, e.Operation, joinPath(p), k.Kind))
			}
		}
	}
	sort.Strings(out)
	return out
}

// coveredBy reports whether a row is path or above it, or path holds a row
// (a map or list the manager created for its own entry).
func coveredBy(path []string, rows [][]string) bool {
	for _, r := range rows {
		n := min(len(r), len(path))
		match := true
		for i := 0; i < n; i++ {
			if r[i] != "*" && r[i] != path[i] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// FieldPaths turns a managedFields entry's fieldsV1 into the paths it owns,
// as segments: a field name, or the key of a list item (a condition's type, a
// finalizer, the one value of a single-key item key). A "." entry (the map or
// list itself) is the path of its parent.
func FieldPaths(fieldsV1 []byte) ([][]string, error) {
	var tree map[string]any
	if err := json.Unmarshal(fieldsV1, &tree); err != nil {
		return nil, fmt.Errorf("failed to decode fieldsV1: %w", err)
	}
	var out [][]string
	var walk func(prefix []string, node map[string]any) error
	walk = func(prefix []string, node map[string]any) error {
		if len(node) == 0 && len(prefix) > 0 {
			out = append(out, prefix)
			return nil
		}
		keys := make([]string, 0, len(node))
		for k := range node {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "." {
				if len(prefix) > 0 {
					out = append(out, prefix)
				}
				continue
			}
			seg, err := segment(k)
			if err != nil {
				return err
			}
			child, _ := node[k].(map[string]any)
			if err := walk(append(append([]string(nil), prefix...), seg), child); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(nil, tree); err != nil {
		return nil, err
	}
	return out, nil
}

// segment decodes one fieldsV1 key: f:<name>, k:<item key>, v:<value>, i:<index>.
func segment(k string) (string, error) {
	kind, rest, ok := strings.Cut(k, ":")
	if !ok {
		return "", fmt.Errorf("unknown fieldsV1 key %q", k)
	}
	switch kind {
	case "f", "i":
		return rest, nil
	case "v":
		var v any
		if err := json.Unmarshal([]byte(rest), &v); err != nil {
			return "", fmt.Errorf("bad fieldsV1 value %q: %w", k, err)
		}
		return fmt.Sprint(v), nil
	case "k":
		var m map[string]any
		if err := json.Unmarshal([]byte(rest), &m); err != nil {
			return "", fmt.Errorf("bad fieldsV1 item key %q: %w", k, err)
		}
		if len(m) == 1 {
			for _, v := range m {
				return fmt.Sprint(v), nil
			}
		}
		return rest, nil
	}
	return "", fmt.Errorf("unknown fieldsV1 key %q", k)
}

// SplitFieldPath splits a row's field path into the segments FieldPaths
// returns: a.b[c.d/e] is a, b, c.d/e.
func SplitFieldPath(p string) []string { return splitPath(p) }

// splitPath is SplitFieldPath.
func splitPath(p string) []string {
	var out []string
	var cur strings.Builder
	inKey := false
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, r := range p {
		switch {
		case inKey && r == ']':
			out = append(out, cur.String())
			cur.Reset()
			inKey = false
		case inKey:
			cur.WriteRune(r)
		case r == '.':
			flush()
		case r == '[':
			flush()
			inKey = true
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return out
}

// keyed are the maps and lists whose entries a path names in brackets.
var keyed = map[string]bool{"conditions": true, "labels": true, "annotations": true, "finalizers": true}

// joinPath writes segments back as a path: names with dots or slashes, and
// the entries of keyed maps and lists, in brackets.
func joinPath(segs []string) string {
	var b strings.Builder
	for i, s := range segs {
		switch {
		case strings.ContainsAny(s, "./ {"):
			b.WriteString("[" + s + "]")
		case i > 0 && keyed[segs[i-1]]:
			b.WriteString("[" + s + "]")
		default:
			if i > 0 {
				b.WriteString(".")
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

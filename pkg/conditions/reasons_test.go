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

package conditions_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The placement.flotilla.io condition reasons: the API's Reason constants that the
// hub and the agent set, and the reasons docs/reference/conditions.md documents,
// must be the same sets. A reason the API defines but nothing sets is dead; a
// reason set but not documented leaves users guessing.

const (
	repoRoot     = "../.."
	apiDir       = "apis/placement/v1beta1"
	apiImport    = "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	conditionDoc = "docs/reference/conditions.md"
)

// codeDirs hold the code that sets conditions.
var codeDirs = []string{"hub", "agent"}

// reasonValue is a reason as written in a condition: CamelCase, no spaces.
var reasonValue = regexp.MustCompile(`^[A-Z][A-Za-z]+$`)

func TestEveryReasonSetIsDocumentedAndEveryDocumentedReasonIsSet(t *testing.T) {
	defined := apiReasons(t)
	set := setReasons(t, defined)
	documented := documentedReasons(t)

	var unused []string
	for name := range defined {
		if _, ok := set[defined[name]]; !ok {
			unused = append(unused, name)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("%s defines reasons that no hub or agent code sets (set them where they belong or remove them): %v", apiDir, unused)
	}
	if diff := cmp.Diff(sortedKeys(documented), sortedKeys(set)); diff != "" {
		t.Errorf("reasons documented in %s (-) differ from the reasons the code sets (+):\n%s", conditionDoc, diff)
	}
}

// apiReasons maps the name of each Reason constant of the API package to its
// value.
func apiReasons(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range parseDir(t, filepath.Join(repoRoot, apiDir)) {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !strings.HasPrefix(n.Name, "Reason") || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						out[n.Name] = v
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("found no Reason constants in %s", apiDir)
	}
	return out
}

// setReasons are the values of the reasons the hub and the agent set: the API's
// Reason constants their non-test code refers to, and their own constants named
// reason... whose value reads as a reason (such as the one kubectl flotilla
// approve writes).
func setReasons(t *testing.T, defined map[string]string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, dir := range codeDirs {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			for _, f := range parseDir(t, path) {
				api := ""
				for _, imp := range f.Imports {
					if p, _ := strconv.Unquote(imp.Path.Value); p == apiImport && imp.Name != nil {
						api = imp.Name.Name
					} else if p == apiImport {
						api = "v1beta1"
					}
				}
				ast.Inspect(f, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.SelectorExpr:
						if id, ok := n.X.(*ast.Ident); ok && api != "" && id.Name == api {
							if v, ok := defined[n.Sel.Name]; ok {
								out[v] = true
							}
						}
					case *ast.ValueSpec:
						for i, name := range n.Names {
							if !strings.HasPrefix(strings.ToLower(name.Name), "reason") || i >= len(n.Values) {
								continue
							}
							if lit, ok := n.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								if v, _ := strconv.Unquote(lit.Value); reasonValue.MatchString(v) {
									out[v] = true
								}
							}
						}
					}
					return true
				})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// documentedReasons are the reasons of the reference's tables: every row whose
// first cell is a reason in backticks.
func documentedReasons(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, conditionDoc))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `([A-Za-z]+)` \\|")
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			out[m[1]] = true
		}
	}
	return out
}

func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []*ast.File
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

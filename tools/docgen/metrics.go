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
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// A metric as its collector is constructed in the code.
type metric struct {
	name, kind, help, binary, where string
	labels                          []string
}

// metricSources are the trees whose packages construct collectors, and the binary
// that serves what they construct.
var metricSources = []struct{ dir, binary string }{
	{"hub", "hub"},
	{"agent", "agent"},
	{"pkg", "hub and agent"},
}

// constructors maps prometheus.New* to the metric type it makes.
var constructors = map[string]string{
	"NewCounter": "counter", "NewCounterVec": "counter", "NewCounterFunc": "counter",
	"NewGauge": "gauge", "NewGaugeVec": "gauge", "NewGaugeFunc": "gauge",
	"NewHistogram": "histogram", "NewHistogramVec": "histogram",
	"NewSummary": "summary", "NewSummaryVec": "summary",
}

// genMetrics lists every collector the hub's, the agent's and the shared packages
// construct. It reads the code rather than a registry: a registry gathers a vector
// only once it has a child, and most of Flotilla's have none until something happens.
func genMetrics(root string, out output) error {
	var all []metric
	for _, src := range metricSources {
		ms, err := scanMetrics(root, src.dir, src.binary)
		if err != nil {
			return err
		}
		all = append(all, ms...)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].name != all[j].name {
			return all[i].name < all[j].name
		}
		return all[i].where < all[j].where
	})
	var b strings.Builder
	b.WriteString("# Metrics\n\n")
	b.WriteString("Every metric Flotilla's binaries export, generated from the code that constructs them. The hub serves them on `--metrics-bind-address` (`:8080`) together with controller-runtime's own (`controller_runtime_*`, `workqueue_*`) and Go's; the agent serves its own on its `--metrics-bind-address`. [Metrics and dashboard](../operations/metrics.md) says which to watch and what to alert on.\n\n")
	b.WriteString("| metric | type | labels | served by | description |\n|---|---|---|---|---|\n")
	seen := map[string]bool{}
	for _, m := range all {
		if seen[m.name+m.binary] {
			continue // constructed in two places (a fallback), documented once
		}
		seen[m.name+m.binary] = true
		labels := ""
		if len(m.labels) > 0 {
			labels = "`" + strings.Join(m.labels, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| <a id=\"%s\"></a>`%s` | %s | %s | %s | %s |\n", m.name, m.name, m.kind, labels, m.binary, cell(m.help))
	}
	b.WriteString("\nNext: [metrics and dashboard](../operations/metrics.md), [the reference index](README.md).\n")
	out["docs/reference/metrics.md"] = []byte(b.String())
	return nil
}

func scanMetrics(root, dir, binary string) ([]metric, error) {
	byPkg := map[string][]string{}
	err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			byPkg[filepath.Dir(p)] = append(byPkg[filepath.Dir(p)], p)
		}
		return nil
	})
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []metric
	for _, files := range byPkg {
		fset := token.NewFileSet()
		var parsed []*ast.File
		consts := map[string]ast.Expr{}
		for _, f := range files {
			af, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				return nil, err
			}
			parsed = append(parsed, af)
			for _, d := range af.Decls {
				if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.CONST {
					for _, s := range gd.Specs {
						vs := s.(*ast.ValueSpec)
						for i, n := range vs.Names {
							if i < len(vs.Values) {
								consts[n.Name] = vs.Values[i]
							}
						}
					}
				}
			}
		}
		for _, af := range parsed {
			var ferr error
			ast.Inspect(af, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || ferr != nil {
					return ferr == nil
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "prometheus" {
					return true
				}
				kind, ok := constructors[sel.Sel.Name]
				if !ok || len(call.Args) == 0 {
					return true
				}
				pos := fset.Position(call.Pos())
				rel, _ := filepath.Rel(root, pos.Filename)
				m := metric{kind: kind, binary: binary, where: fmt.Sprintf("%s:%d", filepath.ToSlash(rel), pos.Line)}
				if err := m.readOpts(call.Args[0], consts); err != nil {
					ferr = fmt.Errorf("%s: %w", m.where, err)
					return false
				}
				if strings.HasSuffix(sel.Sel.Name, "Vec") && len(call.Args) > 1 {
					labels, err := stringList(call.Args[1], consts)
					if err != nil {
						ferr = fmt.Errorf("%s: the labels: %w", m.where, err)
						return false
					}
					m.labels = labels
				}
				out = append(out, m)
				return true
			})
			if ferr != nil {
				return nil, ferr
			}
		}
	}
	return out, nil
}

func (m *metric) readOpts(e ast.Expr, consts map[string]ast.Expr) error {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return fmt.Errorf("the options are not a literal; docgen reads collectors constructed with prometheus.XxxOpts{...}")
	}
	var ns, sub string
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key, _ := kv.Key.(*ast.Ident)
		if key == nil {
			continue
		}
		var dst *string
		switch key.Name {
		case "Namespace":
			dst = &ns
		case "Subsystem":
			dst = &sub
		case "Name":
			dst = &m.name
		case "Help":
			dst = &m.help
		default:
			continue
		}
		s, err := stringValue(kv.Value, consts)
		if err != nil {
			return fmt.Errorf("%s: %w", key.Name, err)
		}
		*dst = s
	}
	if m.name == "" {
		return fmt.Errorf("a collector without a Name")
	}
	for _, p := range []string{sub, ns} {
		if p != "" {
			m.name = p + "_" + m.name
		}
	}
	return nil
}

// stringValue evaluates a string literal, a concatenation, or a constant of the package.
func stringValue(e ast.Expr, consts map[string]ast.Expr) (string, error) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			return strconv.Unquote(e.Value)
		}
	case *ast.ParenExpr:
		return stringValue(e.X, consts)
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			l, err := stringValue(e.X, consts)
			if err != nil {
				return "", err
			}
			r, err := stringValue(e.Y, consts)
			return l + r, err
		}
	case *ast.Ident:
		if v, ok := consts[e.Name]; ok {
			return stringValue(v, consts)
		}
	}
	return "", fmt.Errorf("not a string constant docgen can evaluate")
}

func stringList(e ast.Expr, consts map[string]ast.Expr) ([]string, error) {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, fmt.Errorf("not a []string literal")
	}
	var out []string
	for _, el := range lit.Elts {
		s, err := stringValue(el, consts)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

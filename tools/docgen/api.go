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
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// genAPI writes a page per CRD in manifests/crds, an index, and the well-known
// labels, annotations and taints from apis/*/v1beta1.
func genAPI(root string, out output) error {
	files, err := filepath.Glob(filepath.Join(root, "manifests/crds/*.yaml"))
	if err != nil {
		return err
	}
	var crds []apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &crd); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			continue // kustomization.yaml
		}
		crds = append(crds, crd)
	}
	if len(crds) == 0 {
		return fmt.Errorf("no CRDs in manifests/crds")
	}
	sort.Slice(crds, func(i, j int) bool {
		if crds[i].Spec.Group != crds[j].Spec.Group {
			return crds[i].Spec.Group < crds[j].Spec.Group
		}
		return crds[i].Spec.Names.Kind < crds[j].Spec.Names.Kind
	})
	var index strings.Builder
	index.WriteString("# API reference\n\n")
	index.WriteString("Every kind Flotilla serves, generated from the CRDs in `manifests/crds` (which `make manifests` generates from the Go types in `apis/`): its fields, their types, doc comments and validation. [Well-known labels, annotations and taints](well-known.md) lists the keys Flotilla reads and writes; [conditions](../conditions.md) their condition types and reasons.\n\n")
	group := ""
	for _, crd := range crds {
		if crd.Spec.Group != group {
			if group != "" {
				index.WriteString("\n")
			}
			group = crd.Spec.Group
			fmt.Fprintf(&index, "## %s\n\n| kind | scope | short names | what it is |\n|---|---|---|---|\n", group)
		}
		file := strings.ToLower(crd.Spec.Names.Kind) + ".md"
		v := servedVersion(crd)
		if v == nil {
			return fmt.Errorf("CRD %s serves no version", crd.Name)
		}
		desc := ""
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			desc = firstSentence(v.Schema.OpenAPIV3Schema.Description)
		}
		fmt.Fprintf(&index, "| [%s](%s) | %s | %s | %s |\n", crd.Spec.Names.Kind, file, crd.Spec.Scope, strings.Join(crd.Spec.Names.ShortNames, ", "), cell(desc))
		page, err := crdPage(crd, v)
		if err != nil {
			return fmt.Errorf("CRD %s: %w", crd.Name, err)
		}
		out["docs/reference/api/"+file] = []byte(page)
	}
	index.WriteString("\nNext: [well-known labels, annotations and taints](well-known.md), [the command-line reference](../cli/README.md).\n")
	out["docs/reference/api/README.md"] = []byte(index.String())

	wk, err := wellKnown(root)
	if err != nil {
		return err
	}
	out["docs/reference/api/well-known.md"] = []byte(wk)
	return nil
}

func servedVersion(crd apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Storage {
			return &crd.Spec.Versions[i]
		}
	}
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Served {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func crdPage(crd apiextensionsv1.CustomResourceDefinition, v *apiextensionsv1.CustomResourceDefinitionVersion) (string, error) {
	var b strings.Builder
	n := crd.Spec.Names
	fmt.Fprintf(&b, "# %s\n\n", n.Kind)
	schema := v.Schema.OpenAPIV3Schema
	if schema != nil && schema.Description != "" {
		b.WriteString(paragraphs(schema.Description) + "\n\n")
	}
	fmt.Fprintf(&b, "| | |\n|---|---|\n| apiVersion | `%s/%s` |\n| scope | %s |\n| plural | `%s` |\n", crd.Spec.Group, v.Name, crd.Spec.Scope, n.Plural)
	if len(n.ShortNames) > 0 {
		fmt.Fprintf(&b, "| short names | `%s` |\n", strings.Join(n.ShortNames, "`, `"))
	}
	if len(n.Categories) > 0 {
		fmt.Fprintf(&b, "| categories | `%s` |\n", strings.Join(n.Categories, "`, `"))
	}
	if v.Subresources != nil {
		var subs []string
		if v.Subresources.Status != nil {
			subs = append(subs, "status")
		}
		if v.Subresources.Scale != nil {
			subs = append(subs, "scale")
		}
		if len(subs) > 0 {
			fmt.Fprintf(&b, "| subresources | %s |\n", strings.Join(subs, ", "))
		}
	}
	b.WriteString("\n")
	if len(v.AdditionalPrinterColumns) > 0 {
		fmt.Fprintf(&b, "## Columns of `kubectl get %s`\n\n| column | JSONPath | shown |\n|---|---|---|\n", n.Plural)
		for _, c := range v.AdditionalPrinterColumns {
			shown := "always"
			if c.Priority > 0 {
				shown = "with `-o wide`"
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s |\n", c.Name, c.JSONPath, shown)
		}
		b.WriteString("\n")
	}
	if schema != nil {
		if rules := validations(schema); rules != "" {
			fmt.Fprintf(&b, "Validation of the whole object: %s\n\n", strings.ReplaceAll(rules, `\|`, "|"))
		}
		for _, top := range sortedKeys(schema.Properties) {
			if top == "apiVersion" || top == "kind" || top == "metadata" {
				continue
			}
			prop := schema.Properties[top]
			fmt.Fprintf(&b, "## %s\n\n", top)
			if prop.Description != "" {
				b.WriteString(paragraphs(prop.Description) + "\n\n")
			}
			if r := validations(&prop); r != "" {
				fmt.Fprintf(&b, "Validation: %s\n\n", strings.ReplaceAll(r, `\|`, "|")) // not in a table
			}
			var rows []string
			fieldRows(&rows, top, &prop)
			if len(rows) == 0 {
				fmt.Fprintf(&b, "Type: %s.\n\n", typeOf(&prop))
				continue
			}
			b.WriteString("| field | type | description |\n|---|---|---|\n")
			b.WriteString(strings.Join(rows, "\n") + "\n\n")
		}
	}
	b.WriteString("Next: [the API reference](README.md), [well-known labels, annotations and taints](well-known.md).\n")
	return b.String(), nil
}

// fieldRows appends a table row for every field under s, depth first, in name order.
func fieldRows(rows *[]string, path string, s *apiextensionsv1.JSONSchemaProps) {
	props := s.Properties
	prefix := path + "."
	if s.Type == "array" && s.Items != nil && s.Items.Schema != nil {
		props = s.Items.Schema.Properties
		prefix = path + "[]."
		s = s.Items.Schema
	} else if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil && len(s.AdditionalProperties.Schema.Properties) > 0 {
		props = s.AdditionalProperties.Schema.Properties
		prefix = path + "[*]."
		s = s.AdditionalProperties.Schema
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	for _, name := range sortedKeys(props) {
		p := props[name]
		desc := cell(p.Description)
		var notes []string
		if required[name] {
			notes = append(notes, "**required**")
		}
		if r := validations(&p); r != "" {
			notes = append(notes, r)
		}
		if len(notes) > 0 {
			if desc != "" {
				desc += "<br><br>"
			}
			desc += strings.Join(notes, "; ")
		}
		*rows = append(*rows, fmt.Sprintf("| `%s%s` | %s | %s |", prefix, name, typeOf(&p), desc))
		fieldRows(rows, prefix+name, &p)
	}
}

func typeOf(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		return "int or string"
	case s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields && len(s.Properties) == 0:
		return "object (any fields)"
	case s.XEmbeddedResource:
		return "object (a Kubernetes object)"
	case s.Type == "array" && s.Items != nil && s.Items.Schema != nil:
		return "[]" + typeOf(s.Items.Schema)
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		return "map[string]" + typeOf(s.AdditionalProperties.Schema)
	case s.Format != "" && s.Type == "string":
		return "string (" + s.Format + ")"
	case s.Type == "":
		return "any"
	}
	return s.Type
}

// validations describes the bounds the API server enforces on s.
func validations(s *apiextensionsv1.JSONSchemaProps) string {
	var v []string
	if len(s.Enum) > 0 {
		var vals []string
		for _, e := range s.Enum {
			vals = append(vals, "`"+strings.Trim(string(e.Raw), `"`)+"`")
		}
		v = append(v, "one of "+strings.Join(vals, ", "))
	}
	if s.Default != nil {
		v = append(v, "default `"+compactJSON(s.Default.Raw)+"`")
	}
	bound := func(name string, f *float64, exclusive bool) {
		if f != nil {
			op := map[bool]string{false: "≥", true: ">"}[exclusive]
			if name == "maximum" {
				op = map[bool]string{false: "≤", true: "<"}[exclusive]
			}
			v = append(v, fmt.Sprintf("%s %s", op, strconv.FormatFloat(*f, 'f', -1, 64)))
		}
	}
	bound("minimum", s.Minimum, s.ExclusiveMinimum)
	bound("maximum", s.Maximum, s.ExclusiveMaximum)
	count := func(what string, min, max *int64) {
		switch {
		case min != nil && max != nil:
			v = append(v, fmt.Sprintf("%d to %d %s", *min, *max, what))
		case min != nil:
			v = append(v, fmt.Sprintf("at least %d %s", *min, what))
		case max != nil:
			v = append(v, fmt.Sprintf("at most %d %s", *max, what))
		}
	}
	count("characters", s.MinLength, s.MaxLength)
	count("items", s.MinItems, s.MaxItems)
	count("properties", s.MinProperties, s.MaxProperties)
	if s.Pattern != "" {
		v = append(v, "matches `"+s.Pattern+"`")
	}
	if s.XListType != nil && *s.XListType != "atomic" {
		lt := "list type " + *s.XListType
		if len(s.XListMapKeys) > 0 {
			lt += " keyed by `" + strings.Join(s.XListMapKeys, "`, `") + "`"
		}
		v = append(v, lt)
	}
	for _, r := range s.XValidations {
		rule := "rule `" + strings.Join(strings.Fields(r.Rule), " ") + "`"
		if r.Message != "" {
			rule += " (" + r.Message + ")"
		}
		v = append(v, rule)
	}
	return cell(strings.Join(v, "; "))
}

func compactJSON(raw []byte) string {
	var x any
	if err := json.Unmarshal(raw, &x); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(x)
	return string(b)
}

func paragraphs(s string) string {
	return escapeAngles(strings.TrimSpace(s))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// wellKnown lists the exported string constants of apis/*/v1beta1 whose values are
// Flotilla's label, annotation, taint and finalizer keys, grouped as the code groups them.
func wellKnown(root string) (string, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "apis/*/v1beta1"))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# Well-known labels, annotations and taints\n\n")
	b.WriteString("The keys Flotilla reads and writes on objects, generated from the constants in `apis/*/v1beta1`, grouped as the code groups them. Keys under `cluster.flotilla.io/` concern member clusters, keys under `placement.flotilla.io/` placements and what they make.\n\n")
	for _, dir := range dirs {
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return "", err
		}
		sort.Strings(files)
		pkg, _ := filepath.Rel(root, dir)
		// A package without keys (apis/plan/v1beta1) gets no section.
		var keys strings.Builder
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(filepath.Base(f), "zz_generated") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
			if err != nil {
				return "", err
			}
			for _, d := range af.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				var rows []string
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if !name.IsExported() || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						val, err := strconv.Unquote(lit.Value)
						if err != nil || !strings.Contains(val, "flotilla.io/") {
							continue
						}
						doc := ""
						if vs.Doc != nil {
							doc = strings.TrimSpace(vs.Doc.Text())
						}
						rows = append(rows, fmt.Sprintf("| `%s` | `%s` | %s |", val, name.Name, cell(doc)))
					}
				}
				if len(rows) == 0 {
					continue
				}
				title := "Keys"
				if gd.Doc != nil {
					title = cell(strings.TrimSpace(gd.Doc.Text()))
				}
				fmt.Fprintf(&keys, "%s\n\n| key | Go constant | meaning |\n|---|---|---|\n%s\n\n", title, strings.Join(rows, "\n"))
			}
		}
		if keys.Len() > 0 {
			fmt.Fprintf(&b, "## %s\n\n%s", filepath.ToSlash(pkg), keys.String())
		}
	}
	b.WriteString("Next: [the API reference](README.md).\n")
	return b.String(), nil
}

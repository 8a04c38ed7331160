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

package apply

import (
	"bytes"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// feedbackRules are the statusFeedback rules of a Work, parsed, by kind.
type feedbackRules map[schema.GroupKind][]feedbackPath

// feedbackPath is one JSONPath rule; parser is nil and err set when it does not
// parse. version, when not empty, is the only API version of the kind the rule
// reads (the rule's version).
type feedbackPath struct {
	version string
	name    string
	parser  *jsonpath.JSONPath
	err     error
}

// parseFeedback parses the statusFeedback rules of a Work.
func parseFeedback(rules []placementv1beta1.StatusFeedbackRule) feedbackRules {
	if len(rules) == 0 {
		return nil
	}
	out := feedbackRules{}
	for _, r := range rules {
		gk := schema.GroupKind{Group: r.Group, Kind: r.Kind}
		for _, p := range r.JSONPaths {
			fp := parseJSONPath(p)
			fp.version = r.Version
			out[gk] = append(out[gk], fp)
		}
	}
	return out
}

// ParseJSONPath checks that a statusFeedback path parses, returning the parser's
// problem if not.
func ParseJSONPath(path string) error {
	return parseJSONPath(placementv1beta1.JSONPathRule{Name: "check", Path: path}).err
}

func parseJSONPath(r placementv1beta1.JSONPathRule) feedbackPath {
	p := jsonpath.New(r.Name).AllowMissingKeys(true)
	if err := p.Parse(relaxed(r.Path)); err != nil {
		return feedbackPath{name: r.Name, err: fmt.Errorf("the JSONPath %q does not parse: %w", r.Path, err)}
	}
	return feedbackPath{name: r.Name, parser: p}
}

// relaxed accepts paths written as kubectl's custom columns take them: .a.b or
// a.b for {.a.b}.
func relaxed(path string) string {
	path = strings.TrimSpace(path)
	if strings.Contains(path, "{") {
		return path
	}
	if !strings.HasPrefix(path, ".") {
		path = "." + path
	}
	return "{" + path + "}"
}

// values returns the feedback values of an object on the member; nil if no rule
// asks about its kind.
func (f feedbackRules) values(obj *unstructured.Unstructured) []placementv1beta1.FeedbackValue {
	gvk := obj.GroupVersionKind()
	var out []placementv1beta1.FeedbackValue
	for _, p := range f[gvk.GroupKind()] {
		if p.version != "" && p.version != gvk.Version {
			continue
		}
		v := placementv1beta1.FeedbackValue{Name: p.name}
		if p.err != nil {
			v.Error = truncate(p.err.Error(), maxMessage)
			out = append(out, v)
			continue
		}
		var buf bytes.Buffer
		if err := p.parser.Execute(&buf, obj.Object); err != nil {
			v.Error = truncate(err.Error(), maxMessage)
		} else {
			v.Value = truncate(buf.String(), maxFeedbackValue)
		}
		out = append(out, v)
	}
	return out
}

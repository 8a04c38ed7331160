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

// Package schedulinggroup implements Kratix-style dynamic scheduling for a
// placement: selectors a producer of the placement's resources adds at run time.
//
// The producer writes, on the ClusterResourcePlacement, the annotation
// placement.flotilla.io/dynamic-selectors: a JSON list of
//
//		{"group": "", "matchLabels": {...}, "source": "PlacementWorkflow" | "ResourceWorkflow"}
//
//	  - With an empty group, the selectors apply to all of the placement's resources
//	    and are ANDed with the placement's own label selectors; on a key conflict the
//	    placement's own win, then the placement workflow's, then the resource
//	    workflow's.
//	  - With a named group, they apply only to the hub objects annotated
//	    placement.flotilla.io/scheduling-group: <group>, and that group uses only its
//	    own selectors. The scheduler runs a cycle per such group, with bindings and a
//	    Work of their own (labelled placement.flotilla.io/scheduling-group); the
//	    Namespaces those objects live in go along, so they can be applied.
package schedulinggroup

import (
	"encoding/json"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// AnnotationDynamicSelectors holds a placement's dynamic selectors (see the package doc).
const AnnotationDynamicSelectors = "placement.flotilla.io/dynamic-selectors"

// AnnotationGroup names, on a hub object, the scheduling group it belongs to.
const AnnotationGroup = "placement.flotilla.io/scheduling-group"

// LabelGroup marks the bindings and Work of a group; absent for the default group.
const LabelGroup = "placement.flotilla.io/scheduling-group"

type selectorJSON struct {
	Group       string            `json:"group,omitempty"`
	MatchLabels map[string]string `json:"matchLabels"`
	Source      string            `json:"source,omitempty"`
}

// Selectors reads a placement's dynamic selectors.
func Selectors(placement metav1.Object) ([]framework.DynamicSelector, error) {
	raw, ok := placement.GetAnnotations()[AnnotationDynamicSelectors]
	if !ok || raw == "" {
		return nil, nil
	}
	var in []selectorJSON
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return nil, fmt.Errorf("annotation %s is not a JSON list of {group, matchLabels, source}: %w", AnnotationDynamicSelectors, err)
	}
	out := make([]framework.DynamicSelector, 0, len(in))
	for _, s := range in {
		out = append(out, framework.DynamicSelector{Group: s.Group, MatchLabels: s.MatchLabels, Source: s.Source})
	}
	return out, nil
}

// OwnGroups returns, sorted, the named groups that have selectors of their own.
func OwnGroups(selectors []framework.DynamicSelector) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range selectors {
		if s.Group != "" && !seen[s.Group] {
			seen[s.Group] = true
			out = append(out, s.Group)
		}
	}
	sort.Strings(out)
	return out
}

// Of returns the group of a binding or Work from its labels ("" for the default).
func Of(labels map[string]string) string { return labels[LabelGroup] }

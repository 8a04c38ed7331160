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
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Diffs are computed between the object on the member and what it would become if the
// manifest were applied (a server-side dry run), so that defaulting and normalisation
// by the member's API server do not show up as differences: a path is listed only if
// applying the manifest would change it. FullComparison adds the fields set on the
// member that the manifest does not set.

// changedPaths returns the fields that differ between the object on the member (live)
// and the result of a dry-run apply of the manifest (applied), ignoring the fields the
// API server and the Applier maintain.
func changedPaths(live, applied *unstructured.Unstructured) []placementv1beta1.PatchDetail {
	var out []placementv1beta1.PatchDetail
	diffValues(nil, comparableContent(applied), comparableContent(live), &out)
	return out
}

// extraPaths returns the fields set on the member (live) that the manifest (want)
// does not set: everything but apiVersion, kind and status at the top level, and the
// labels and annotations of metadata.
func extraPaths(want, live *unstructured.Unstructured) []placementv1beta1.PatchDetail {
	w, l := comparableContent(want), comparableContent(live)
	var out []placementv1beta1.PatchDetail
	for _, k := range sortedKeys(l) {
		switch k {
		case "apiVersion", "kind", "status":
			continue
		case "metadata":
			lm, _ := l[k].(map[string]any)
			wm, _ := w[k].(map[string]any)
			for _, mk := range []string{"labels", "annotations"} {
				if lv, ok := lm[mk]; ok {
					extraValues([]string{k, mk}, wm[mk], lv, &out)
				}
			}
			continue
		}
		if wv, ok := w[k]; ok {
			extraValues([]string{k}, wv, l[k], &out)
		} else {
			out = append(out, patchDetail([]string{k}, nil, l[k], false, true))
		}
	}
	return out
}

// mergeDiffs merges lists of differences, sorted by path, one entry per path, at most
// maxDiffs entries. It also returns how many there were in all.
func mergeDiffs(lists ...[]placementv1beta1.PatchDetail) ([]placementv1beta1.PatchDetail, int) {
	seen := map[string]bool{}
	var all []placementv1beta1.PatchDetail
	for _, l := range lists {
		for _, d := range l {
			if !seen[d.Path] {
				seen[d.Path] = true
				all = append(all, d)
			}
		}
	}
	slices.SortFunc(all, func(x, y placementv1beta1.PatchDetail) int { return strings.Compare(x.Path, y.Path) })
	n := len(all)
	if n > maxDiffs {
		all = all[:maxDiffs]
	}
	return all, n
}

// comparableContent returns the object's content without the fields that are expected to
// differ: the API server's bookkeeping, status, the Applier's own annotation and the
// provenance annotations (a new resource index, or an object not applied by this
// Work yet, is neither a drift nor a difference).
func comparableContent(obj *unstructured.Unstructured) map[string]any {
	c := obj.DeepCopy().Object
	delete(c, "status")
	for _, f := range []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink"} {
		unstructured.RemoveNestedField(c, "metadata", f)
	}
	for _, k := range placementv1beta1.ProvenanceAnnotations {
		unstructured.RemoveNestedField(c, "metadata", "annotations", k)
	}
	unstructured.RemoveNestedField(c, "metadata", "annotations", AnnotationLastApplied)
	unstructured.RemoveNestedField(c, "metadata", "labels", LabelAppliedBy)
	for _, f := range []string{"annotations", "labels"} {
		if m, found, _ := unstructured.NestedMap(c, "metadata", f); found && len(m) == 0 {
			unstructured.RemoveNestedField(c, "metadata", f)
		}
	}
	return c
}

// diffValues appends the paths where hub and member differ, looking at every field of
// both. Lists of the same length are compared element by element; otherwise the
// whole list differs.
func diffValues(path []string, hub, member any, out *[]placementv1beta1.PatchDetail) {
	hm, hubIsMap := hub.(map[string]any)
	mm, memberIsMap := member.(map[string]any)
	if hubIsMap && memberIsMap {
		keys := sortedKeys(hm)
		for _, k := range sortedKeys(mm) {
			if _, ok := hm[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			hv, inHub := hm[k]
			mv, inMember := mm[k]
			p := append(slices.Clip(path), k)
			if !inHub || !inMember {
				*out = append(*out, patchDetail(p, hv, mv, inHub, inMember))
				continue
			}
			diffValues(p, hv, mv, out)
		}
		return
	}
	hl, hubIsList := hub.([]any)
	ml, memberIsList := member.([]any)
	if hubIsList && memberIsList && len(hl) == len(ml) {
		for i := range hl {
			diffValues(append(slices.Clip(path), strconv.Itoa(i)), hl[i], ml[i], out)
		}
		return
	}
	if !reflect.DeepEqual(hub, member) {
		*out = append(*out, patchDetail(path, hub, member, true, true))
	}
}

// extraValues appends the paths set in member but not in hub.
func extraValues(path []string, hub, member any, out *[]placementv1beta1.PatchDetail) {
	switch mv := member.(type) {
	case map[string]any:
		hm, ok := hub.(map[string]any)
		if !ok && hub != nil {
			return // a type mismatch is a change, found by changedPaths
		}
		for _, k := range sortedKeys(mv) {
			p := append(slices.Clip(path), k)
			if hv, ok := hm[k]; ok {
				extraValues(p, hv, mv[k], out)
			} else {
				*out = append(*out, patchDetail(p, nil, mv[k], false, true))
			}
		}
	case []any:
		hl, ok := hub.([]any)
		if !ok || len(hl) != len(mv) {
			return
		}
		for i := range mv {
			extraValues(append(slices.Clip(path), strconv.Itoa(i)), hl[i], mv[i], out)
		}
	}
}

func patchDetail(path []string, hub, member any, inHub, inMember bool) placementv1beta1.PatchDetail {
	d := placementv1beta1.PatchDetail{Path: jsonPointer(path)}
	if inHub {
		d.ValueInHub = formatValue(hub)
	}
	if inMember {
		d.ValueInMember = formatValue(member)
	}
	return d
}

// jsonPointer returns the RFC 6901 JSON pointer of a path: /metadata/labels/app.
func jsonPointer(path []string) string {
	if len(path) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(p))
	}
	return b.String()
}

// formatValue renders a value for a PatchDetail: strings as they are, anything else
// as JSON, cut to maxDiffValue bytes.
func formatValue(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	default:
		b, err := json.Marshal(x)
		if err != nil {
			s = fmt.Sprint(x)
		} else {
			s = string(b)
		}
	}
	return truncate(s, maxDiffValue)
}

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "..."
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

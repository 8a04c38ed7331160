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

package schedulinggroup

import (
	"encoding/json"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// manifestMeta is the part of a manifest the grouping reads.
type manifestMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

// Filter returns the manifests a group's Work carries. A named group gets the
// objects annotated with it plus the Namespaces they live in; the default group
// ("") gets every object not in one of ownGroups.
func Filter(manifests []placementv1beta1.Manifest, group string, ownGroups []string) []placementv1beta1.Manifest {
	own := map[string]bool{}
	for _, g := range ownGroups {
		own[g] = true
	}
	metas := make([]manifestMeta, len(manifests))
	for i := range manifests {
		_ = json.Unmarshal(manifests[i].Raw, &metas[i])
	}
	groupOf := func(m manifestMeta) string {
		if g := m.Metadata.Annotations[AnnotationGroup]; own[g] {
			return g
		}
		return ""
	}
	if group == "" {
		out := make([]placementv1beta1.Manifest, 0, len(manifests))
		for i, m := range metas {
			if groupOf(m) == "" {
				out = append(out, manifests[i])
			}
		}
		return out
	}
	namespaces := map[string]bool{}
	for _, m := range metas {
		if groupOf(m) == group && m.Metadata.Namespace != "" {
			namespaces[m.Metadata.Namespace] = true
		}
	}
	var out []placementv1beta1.Manifest
	for i, m := range metas {
		isNamespace := m.APIVersion == "v1" && m.Kind == "Namespace"
		if groupOf(m) == group || (isNamespace && namespaces[m.Metadata.Name]) {
			out = append(out, manifests[i])
		}
	}
	return out
}

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

package v1beta1

import (
	"encoding/json"
	"sort"
)

// PlacedNamespaces returns the namespaces a Work places, sorted: those its
// Namespace manifests create and those its namespaced manifests are in. Manifests
// that do not decode are left out.
func (w *Work) PlacedNamespaces() []string {
	set := map[string]bool{}
	for _, m := range w.Spec.Workload.Manifests {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if json.Unmarshal(m.Raw, &head) != nil {
			continue
		}
		switch {
		case head.APIVersion == "v1" && head.Kind == "Namespace":
			set[head.Metadata.Name] = true
		case head.Metadata.Namespace != "":
			set[head.Metadata.Namespace] = true
		}
	}
	out := make([]string, 0, len(set))
	for ns := range set {
		if ns != "" {
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return out
}

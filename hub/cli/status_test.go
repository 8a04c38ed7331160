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

package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Drifts are read from the raw placement, whichever API version of the hub
// added them, and shown under the cluster's Applied condition.
func TestDriftedManifestsAreShownUnderApplied(t *testing.T) {
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	raw := map[string]any{
		"apiVersion": "placement.flotilla.io/v1beta1", "kind": "ClusterResourcePlacement",
		"metadata": map[string]any{"name": "web", "generation": int64(2)},
		"spec":     map[string]any{"resourceSelectors": []any{map[string]any{"version": "v1", "kind": "Namespace", "name": "web"}}},
		"status": map[string]any{"placementStatuses": []any{map[string]any{
			"clusterName": "member-1",
			"conditions": []any{map[string]any{"type": "Applied", "status": "True", "reason": "Applied", "message": "all 2 manifests are applied",
				"observedGeneration": int64(2), "lastTransitionTime": "2026-11-22T02:00:00Z"}},
			"driftedPlacements": []any{map[string]any{
				"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "web", "name": "web",
				"firstDriftedObservedTime": "2026-11-22T02:55:00Z",
				"observedDrifts":           []any{map[string]any{"path": "/spec/replicas", "valueInMember": "5", "valueInHub": "3"}},
			}},
		}}},
	}
	pl, err := placementFromRaw(placementRef{Name: "web"}, raw)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	statusTree(pl, painter{}, now).print(&out)
	want := `ClusterResourcePlacement web (generation 2, PickAll)
├── no conditions yet: the hub has not handled the placement (is the hub running?)
└── member-1
    └── Applied True Applied (60m ago): all 2 manifests are applied
        └── drifted apps/v1 Deployment web/web (first seen 5m ago)
            └── /spec/replicas: member 5, hub 3
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}

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
	"fmt"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func pstatus(conds ...metav1.Condition) *placementv1beta1.PerClusterPlacementStatus {
	return &placementv1beta1.PerClusterPlacementStatus{ClusterName: "member-1", Conditions: conds}
}

func pcond(typ string, s metav1.ConditionStatus, gen int64) metav1.Condition {
	return metav1.Condition{Type: typ, Status: s, Reason: "R" + typ, ObservedGeneration: gen}
}

func allTrue(gen int64) []metav1.Condition {
	var out []metav1.Condition
	for _, t := range placementv1beta1.PerClusterConditionTypes() {
		out = append(out, pcond(t, metav1.ConditionTrue, gen))
	}
	return out
}

func TestDecideCell(t *testing.T) {
	drifted := pstatus(allTrue(2)...)
	drifted.DriftedPlacements = []placementv1beta1.DriftedResourcePlacement{{ResourceIdentifier: placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "b"}}}
	diffed := pstatus(allTrue(2)...)
	diffed.DiffedPlacements = []placementv1beta1.DiffedResourcePlacement{{ResourceIdentifier: placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "b"}}}
	failedManifest := pstatus(pcond(placementv1beta1.ConditionScheduled, metav1.ConditionTrue, 2))
	failedManifest.FailedPlacements = []placementv1beta1.FailedResourcePlacement{{
		ResourceIdentifier: placementv1beta1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "a", Name: "web"},
		Condition:          metav1.Condition{Type: placementv1beta1.ConditionApplied, Status: metav1.ConditionFalse, Reason: "ApplyFailed", Message: "bad replicas"},
	}}
	for _, tc := range []struct {
		name       string
		ps         *placementv1beta1.PerClusterPlacementStatus
		connected  bool
		want       cellState
		wantReason string
	}{
		{"a cluster the placement has no entry for is not selected", nil, true, cellNotSelected, "not selected"},
		{"a disconnected cluster says so whatever it last reported", pstatus(allTrue(2)...), false, cellDisconnected, "the cluster's agent is disconnected: its last report may be out of date"},
		{"every condition True for the generation is Available", pstatus(allTrue(2)...), true, cellAvailable, "available"},
		{"Available for an older generation is still progressing", pstatus(append(allTrue(2)[:5], pcond(placementv1beta1.ConditionAvailable, metav1.ConditionTrue, 1))...), true, cellProgressing, "Available for generation 1; generation 2 not yet reported"},
		{"a False Applied fails the cell", pstatus(pcond(placementv1beta1.ConditionScheduled, metav1.ConditionTrue, 2), pcond(placementv1beta1.ConditionApplied, metav1.ConditionFalse, 2)), true, cellFailed, "Applied False (RApplied)"},
		{"a failed manifest fails the cell and names the manifest", failedManifest, true, cellFailed, "apps/v1 Deployment a/web failed: Applied False (ApplyFailed): bad replicas"},
		{"a drifted manifest", drifted, true, cellDrifted, "1 manifest drifted, first v1 ConfigMap a/b"},
		{"a manifest that differs", diffed, true, cellDiffReported, "1 manifest differs from the hub, first v1 ConfigMap a/b"},
		{"RolloutStarted False waits in the rollout, it is no failure", pstatus(pcond(placementv1beta1.ConditionScheduled, metav1.ConditionTrue, 2), pcond(placementv1beta1.ConditionRolloutStarted, metav1.ConditionFalse, 2)), true, cellWaiting, "RolloutStarted False (RRolloutStarted)"},
		{"an external rollout that has not moved the cluster yet waits", pstatus(pcond(placementv1beta1.ConditionScheduled, metav1.ConditionTrue, 2),
			metav1.Condition{Type: placementv1beta1.ConditionRolloutStarted, Status: metav1.ConditionUnknown, Reason: placementv1beta1.ReasonRolloutControlledExternally}), true, cellWaiting, "RolloutStarted Unknown (RolloutControlledExternally)"},
		{"a missing condition is waited for", pstatus(pcond(placementv1beta1.ConditionScheduled, metav1.ConditionTrue, 2)), true, cellProgressing, "waiting for RolloutStarted"},
		{"an Unknown condition is named", pstatus(pcond(placementv1beta1.ConditionScheduled, metav1.ConditionTrue, 2), pcond(placementv1beta1.ConditionRolloutStarted, metav1.ConditionUnknown, 2)), true, cellProgressing, "RolloutStarted Unknown (RRolloutStarted)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := decideCell(tc.ps, 2, tc.connected)
			if got != tc.want || reason != tc.wantReason {
				t.Errorf("decideCell = %s %q, want %s %q", got, reason, tc.want, tc.wantReason)
			}
		})
	}
}

// fakeFleet is n placements over m clusters, every cell Available but one
// Failed per placement; placement i is a ResourcePlacement when i is odd.
func fakeFleet(n, m int) ([]*loadedPlacement, []clusterColumn) {
	var cols []clusterColumn
	for j := range m {
		cols = append(cols, clusterColumn{Name: fmt.Sprintf("member-%05d", j), State: "Healthy", Good: true, Connected: true, Taints: "<none>", Agent: "v0.4.0", LastSeen: "live"})
	}
	var pls []*loadedPlacement
	for i := range n {
		p := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%03d", i), Generation: 1, Labels: map[string]string{"team": fmt.Sprint(i % 2)}}}
		ref := placementRef{Name: p.Name}
		if i%2 == 1 {
			ref.Namespace = "team-b"
		}
		for j := range m {
			ps := placementv1beta1.PerClusterPlacementStatus{ClusterName: cols[j].Name, Conditions: allTrue(1)}
			if j == i%m {
				ps.Conditions[4].Status = metav1.ConditionFalse
			}
			p.Status.PlacementStatuses = append(p.Status.PlacementStatuses, ps)
		}
		pls = append(pls, &loadedPlacement{ref: ref, obj: p, spec: &p.Spec, stat: &p.Status})
	}
	return pls, cols
}

func TestBuildMatrixFilters(t *testing.T) {
	pls, cols := fakeFleet(4, 3)
	rows := func(m matrix) []string {
		var out []string
		for _, r := range m.Rows {
			out = append(out, r.Namespace+"/"+r.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		f          matrixFilter
		want       []string
		wantHidden int
	}{
		{"no filter shows every placement, cluster-scoped first", matrixFilter{}, []string{"/app-000", "/app-002", "team-b/app-001", "team-b/app-003"}, 0},
		{"- shows ClusterResourcePlacements only", matrixFilter{Namespace: "-"}, []string{"/app-000", "/app-002"}, 2},
		{"a namespace shows its ResourcePlacements", matrixFilter{Namespace: "team-b"}, []string{"team-b/app-001", "team-b/app-003"}, 2},
		{"labels select placements", matrixFilter{Labels: labels.SelectorFromSet(labels.Set{"team": "1"})}, []string{"team-b/app-001", "team-b/app-003"}, 2},
		{"a state keeps rows with a cell in it", matrixFilter{State: cellFailed}, []string{"/app-000", "/app-002", "team-b/app-001", "team-b/app-003"}, 0},
		{"a state no cell is in hides every row", matrixFilter{State: cellDrifted}, nil, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := buildMatrix(pls, cols, tc.f)
			if diff := cmp.Diff(tc.want, rows(m)); diff != "" || m.Hidden != tc.wantHidden {
				t.Errorf("rows (-want +got):\n%s\nhidden = %d, want %d", diff, m.Hidden, tc.wantHidden)
			}
		})
	}
	m := buildMatrix(pls, cols, matrixFilter{})
	want := []stateCount{{cellAvailable, 2}, {cellFailed, 1}}
	if diff := cmp.Diff(want, m.Rows[0].Counts); diff != "" {
		t.Errorf("counts of the first row (-want +got):\n%s", diff)
	}
	if got := m.Rows[2].CellLink(m.Rows[2].Cells[0]); got != "/namespaces/team-b/placements/app-001#cluster-member-00000" {
		t.Errorf("a cell's link = %q", got)
	}
}

// BenchmarkFleetPage renders the fleet page of 100 placements × 1 000
// clusters, from the objects already read: the part of a request that is the
// console's own (the target is under 300 ms).
func BenchmarkFleetPage(b *testing.B) {
	pls, cols := fakeFleet(100, 1000)
	s, err := newConsole(nil, nil, "127.0.0.1:0", time.Now)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		fl := fleet{Matrix: buildMatrix(pls, cols, matrixFilter{}), States: cellStates}
		w := httptest.NewRecorder()
		s.render(w, 200, "fleet", "Fleet", nil, fl)
		if w.Code != 200 {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
		b.SetBytes(int64(w.Body.Len()))
		_, _ = io.Copy(io.Discard, w.Body)
	}
}

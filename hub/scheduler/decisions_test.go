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

package scheduler

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
)

func decisions(selected, unselected int) []placementv1beta1.ClusterDecision {
	var out []placementv1beta1.ClusterDecision
	for i := range selected {
		out = append(out, placementv1beta1.ClusterDecision{ClusterName: fmt.Sprintf("s-%05d", i), Selected: true})
	}
	for i := range unselected {
		out = append(out, placementv1beta1.ClusterDecision{ClusterName: fmt.Sprintf("u-%05d", i)})
	}
	return out
}

func TestRecordedDecisions(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		in                       []placementv1beta1.ClusterDecision
		wantSelected, wantOthers int
		wantLastOther            string
	}{
		{"no decisions record nothing", nil, 0, 0, ""},
		{"a small fleet is recorded whole", decisions(3, 5), 3, 5, "u-00004"},
		{"every selected cluster and the first others of a large fleet", decisions(3, 9997), 3, MaxUnselectedDecisions, fmt.Sprintf("u-%05d", MaxUnselectedDecisions-1)},
		{"a PickAll over 10 000 clusters is cut at the API's bound", decisions(10000, 0), maxDecisions, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := recordedDecisions(tc.in)
			sel, others, last := 0, 0, ""
			for _, d := range got {
				if d.Selected {
					sel++
				} else {
					others++
					last = d.ClusterName
				}
			}
			if sel != tc.wantSelected || others != tc.wantOthers || last != tc.wantLastOther {
				t.Errorf("recorded %d selected and %d others (last %q), want %d and %d (last %q)", sel, others, last, tc.wantSelected, tc.wantOthers, tc.wantLastOther)
			}
		})
	}
}

// TestACycleWithFewerDecisionsRecordsTheSame runs cycles whose unselected and
// unscheduled clusters are more than MaxUnselectedDecisions twice: over a list
// of clusters with a decision for every one, and as the scheduler runs them,
// over a fleet view with MaxUnselectedDecisions. The snapshot records the same,
// and every selected or unscheduled cluster (whose binding records its
// decision) has the same decision.
func TestACycleWithFewerDecisionsRecordsTheSame(t *testing.T) {
	var clusters []clusterv1beta1.MemberCluster
	var bound []string
	for i := range 4 * MaxUnselectedDecisions {
		name := fmt.Sprintf("m%03d", i)
		env := "prod"
		if i%2 == 0 {
			env = "dev" // bound ones of these no longer match: unscheduled (PickAll)
		}
		clusters = append(clusters, ft.Cluster(name, ft.Labels("env", env)))
		if i%4 == 0 {
			bound = append(bound, name)
		}
	}
	fw := plugins.NewFramework(framework.Options{})
	prod := &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
		}}},
	}}
	for name, policy := range map[string]*placementv1beta1.PlacementPolicy{
		"PickAll of prod clusters":  {PlacementType: placementv1beta1.PickAll, Affinity: prod},
		"PickN 3 of prod clusters":  {PlacementType: placementv1beta1.PickN, NumberOfClusters: ft.Ptr(int32(3)), Affinity: prod},
		"PickFixed of two clusters": {PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"m001", "m050", "gone"}},
	} {
		t.Run(name, func(t *testing.T) {
			run := func(limit int) framework.CycleResult {
				in := ft.Input(policy, clusters...)
				in.Bindings = ft.Bindings("test", bound...)
				if limit > 0 {
					// As the scheduler runs it: over a fleet view (which filters
					// only the candidates of the required labels), with a limit.
					members := make([]*clusterv1beta1.MemberCluster, len(clusters))
					for i := range clusters {
						members[i] = &clusters[i]
					}
					in.Clusters, in.Fleet = nil, framework.NewFleet(1, members)
				}
				in.MaxUnselectedDecisions = limit
				res, err := fw.RunCycle(t.Context(), in)
				if err != nil {
					t.Fatalf("cycle: %v", err)
				}
				return res
			}
			all, few := run(0), run(MaxUnselectedDecisions)
			if len(few.Decisions) >= len(all.Decisions) {
				t.Fatalf("the cycle built %d decisions of %d: want fewer", len(few.Decisions), len(all.Decisions))
			}
			if diff := cmp.Diff(recordedDecisions(all.Decisions), recordedDecisions(few.Decisions)); diff != "" {
				t.Errorf("recorded decisions (-all +few):\n%s", diff)
			}
			for _, c := range append(append([]string{}, all.Selected...), all.Unschedule...) {
				want, _ := all.Decision(c)
				got, ok := few.Decision(c)
				if !ok {
					t.Errorf("no decision about %s, whose binding records it", c)
					continue
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("decision about %s (-all +few):\n%s", c, diff)
				}
			}
			all.Decisions, few.Decisions = nil, nil
			if diff := cmp.Diff(all, few); diff != "" {
				t.Errorf("result (-all +few):\n%s", diff)
			}
		})
	}
}

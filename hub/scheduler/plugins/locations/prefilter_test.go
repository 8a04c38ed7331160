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

package locations

import (
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

func location(name string, labels map[string]string, instanceLabels ...string) clusterv1beta1.Location {
	m := map[string]string{}
	for i := 0; i+1 < len(instanceLabels); i += 2 {
		m[instanceLabels[i]] = instanceLabels[i+1]
	}
	return clusterv1beta1.Location{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       clusterv1beta1.LocationSpec{InstanceSelector: metav1.LabelSelector{MatchLabels: m}},
	}
}

func inLocations(selectors ...map[string]string) *placementv1beta1.PlacementPolicy {
	p := &placementv1beta1.PlacementPolicy{}
	for _, s := range selectors {
		p.LocationSelectors = append(p.LocationSelectors, metav1.LabelSelector{MatchLabels: s})
	}
	return p
}

func clusterOnCloud(name, cloud string, opts ...ft.ClusterOption) clusterv1beta1.MemberCluster {
	return ft.Cluster(name, append([]ft.ClusterOption{ft.Labels("cloud", cloud)}, opts...)...)
}

func unhealthy() ft.ClusterOption {
	return ft.Condition(clusterv1beta1.ConditionHealthy, metav1.ConditionFalse, time.Minute)
}

var (
	aws   = location("aws", map[string]string{"provider": "aws", "tier": "gold"}, "cloud", "aws")
	gce   = location("gce", map[string]string{"provider": "gce", "tier": "gold"}, "cloud", "gce")
	azure = location("azure", map[string]string{"provider": "azure"}, "cloud", "azure")

	gold = map[string]string{"tier": "gold"}
)

// run runs PreFilter and returns the chosen Location and the clusters kept.
func run(t *testing.T, in framework.CycleInput) (string, []string, *framework.Status) {
	t.Helper()
	state := framework.NewCycleState(&in)
	res, st := New(0).PreFilter(t.Context(), state, in.Policy, state.Clusters())
	if st.IsError() {
		t.Fatalf("PreFilter() = %v", st)
	}
	var kept []string
	for _, c := range state.Clusters() {
		if res != nil && res.Includes(c) {
			kept = append(kept, c.Name)
		}
	}
	sort.Strings(kept)
	if res != nil && res.Reason != "not in chosen Location "+state.ChosenLocation() {
		t.Errorf("PreFilterResult.Reason = %q", res.Reason)
	}
	return state.ChosenLocation(), kept, st
}

func TestPreFilter(t *testing.T) {
	clusters := []clusterv1beta1.MemberCluster{
		clusterOnCloud("aws-1", "aws"), clusterOnCloud("aws-2", "aws"),
		clusterOnCloud("gce-1", "gce"),
		clusterOnCloud("azure-1", "azure", unhealthy()),
	}
	tests := []struct {
		name     string
		policy   *placementv1beta1.PlacementPolicy
		bindings []string
		rand     *rand.Rand
		want     string
		wantKept []string
		wantMsg  string
	}{
		{
			name:     "without a Rand the first matching Location by name is chosen, and only its clusters are kept",
			policy:   inLocations(gold),
			want:     "aws",
			wantKept: []string{"aws-1", "aws-2"},
		},
		{
			name:     "selectors are ORed",
			policy:   inLocations(map[string]string{"provider": "nope"}, map[string]string{"provider": "gce"}),
			want:     "gce",
			wantKept: []string{"gce-1"},
		},
		{
			name:    "no matching Location fails",
			policy:  inLocations(map[string]string{"provider": "ibm"}),
			wantMsg: "no Location matches the policy's locationSelectors",
		},
		{
			name:    "a Location without an eligible cluster is not chosen",
			policy:  inLocations(map[string]string{"provider": "azure"}),
			wantMsg: "no Location matching the policy's locationSelectors has an eligible cluster (matching: azure)",
		},
		{
			name:     "the placement stays in the Location of its bindings",
			policy:   inLocations(gold),
			bindings: []string{"gce-1"},
			rand:     rand.New(rand.NewSource(1)),
			want:     "gce",
			wantKept: []string{"gce-1"},
		},
		{
			name:     "the placement stays in the Location of its bindings even when it has no eligible cluster left",
			policy:   inLocations(map[string]string{"provider": "azure"}),
			bindings: []string{"azure-1"},
			want:     "azure",
			wantKept: []string{"azure-1"},
		},
		{
			name:     "a Location that no longer matches the selectors does not hold the placement",
			policy:   inLocations(map[string]string{"provider": "gce"}),
			bindings: []string{"aws-1"},
			want:     "gce",
			wantKept: []string{"gce-1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ft.Input(tt.policy, clusters...)
			in.Locations = []clusterv1beta1.Location{gce, azure, aws}
			in.Bindings = ft.Bindings("test", tt.bindings...)
			in.Rand = tt.rand
			got, kept, st := run(t, in)
			if tt.wantMsg != "" {
				if st.Code() != framework.ClusterMismatch || st.Message() != tt.wantMsg {
					t.Fatalf("PreFilter() = %v, want ClusterMismatch: %s", st, tt.wantMsg)
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatalf("PreFilter() = %v", st)
			}
			if got != tt.want {
				t.Errorf("chosen Location = %q, want %q", got, tt.want)
			}
			if diff := cmp.Diff(tt.wantKept, kept); diff != "" {
				t.Errorf("clusters kept (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPreFilterChoosesAtRandomAmongMatchingLocations(t *testing.T) {
	chosen := map[string]int{}
	for seed := int64(0); seed < 50; seed++ {
		in := ft.Input(inLocations(gold), clusterOnCloud("aws-1", "aws"), clusterOnCloud("gce-1", "gce"))
		in.Locations = []clusterv1beta1.Location{aws, gce}
		in.Rand = rand.New(rand.NewSource(seed))
		got, _, _ := run(t, in)
		chosen[got]++
	}
	if chosen["aws"] == 0 || chosen["gce"] == 0 || len(chosen) != 2 {
		t.Errorf("over 50 seeds the Locations chosen were %v, want both aws and gce", chosen)
	}
}

func TestPreFilterSkipsWithoutLocationSelectors(t *testing.T) {
	if _, _, st := run(t, ft.Input(nil, clusterOnCloud("aws-1", "aws"))); !st.IsSkip() {
		t.Errorf("PreFilter() = %v, want Skip", st)
	}
}

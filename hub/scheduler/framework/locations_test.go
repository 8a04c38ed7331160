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

package framework_test

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

func cloudLocation(name string) clusterv1beta1.Location {
	return clusterv1beta1.Location{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"provider": name, "tier": "gold"}},
		Spec:       clusterv1beta1.LocationSpec{InstanceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"cloud": name}}},
	}
}

func inLocation(policy *placementv1beta1.PlacementPolicy, selector map[string]string) *placementv1beta1.PlacementPolicy {
	policy.LocationSelectors = []metav1.LabelSelector{{MatchLabels: selector}}
	return policy
}

func clouds() framework.CycleInput {
	in := ft.Input(nil,
		clusterWithLabels("aws-1", "cloud", "aws"), clusterWithLabels("aws-2", "cloud", "aws"),
		clusterWithLabels("gce-1", "cloud", "gce"), clusterWithLabels("gce-2", "cloud", "gce"))
	in.Locations = []clusterv1beta1.Location{cloudLocation("aws"), cloudLocation("gce")}
	return in
}

func TestLocationsKeepThePlacementInOneLocation(t *testing.T) {
	in := clouds()
	in.Policy = inLocation(pickN(1), map[string]string{"tier": "gold"})
	in.Rand = rand.New(rand.NewSource(7))
	res := run(t, in)
	if res.ChosenLocation == "" || len(res.Selected) != 1 || !strings.HasPrefix(res.Selected[0], res.ChosenLocation+"-") {
		t.Fatalf("chose Location %q and clusters %v", res.ChosenLocation, res.Selected)
	}
	other := map[string]string{"aws": "gce", "gce": "aws"}[res.ChosenLocation]
	d := decisionOf(t, res, other+"-1")
	if d.Selected || d.FilteredBy != "Locations" || d.Reason != "not in chosen Location "+res.ChosenLocation {
		t.Errorf("decision of a cluster in the other Location = %+v", d)
	}
	if !strings.HasPrefix(res.Message, "in Location "+res.ChosenLocation+": 1 of 1 cluster selected") {
		t.Errorf("message = %q", res.Message)
	}
	// Sticky: whatever the randomness of later cycles, and even when asked for
	// more clusters than the Location has, the placement stays in the Location.
	for seed := int64(0); seed < 10; seed++ {
		again := in
		again.Policy = inLocation(pickN(3), map[string]string{"tier": "gold"})
		again = withBindings(again, res.Selected)
		again.Rand = rand.New(rand.NewSource(seed))
		next := run(t, again)
		if next.ChosenLocation != res.ChosenLocation {
			t.Fatalf("seed %d moved the placement from Location %s to %s", seed, res.ChosenLocation, next.ChosenLocation)
		}
		want := []string{res.ChosenLocation + "-1", res.ChosenLocation + "-2"}
		if diff := cmp.Diff(want, next.Selected); diff != "" {
			t.Fatalf("seed %d: Selected (-want +got):\n%s", seed, diff)
		}
		if next.Reason != placementv1beta1.ReasonSchedulingPolicyUnfulfilled {
			t.Errorf("seed %d: reason = %s, want SchedulingPolicyUnfulfilled", seed, next.Reason)
		}
	}
}

func TestLocationsWithoutAMatchFail(t *testing.T) {
	in := clouds()
	in.Policy = inLocation(pickAll(), map[string]string{"provider": "azure"})
	res := run(t, in)
	if res.Reason != placementv1beta1.ReasonScheduleFailed || res.Message != "0 clusters selected: no Location matches the policy's locationSelectors" {
		t.Errorf("condition = %s: %s", res.Reason, res.Message)
	}
	for _, d := range res.Decisions {
		if d.Selected || d.FilteredBy != "Locations" {
			t.Errorf("decision = %+v", d)
		}
	}
}

func withBindings(in framework.CycleInput, clusters []string) framework.CycleInput {
	in.Bindings = ft.Bindings(in.PlacementName, clusters...)
	return in
}

func TestFrontEndGoesWhereBackEndRuns(t *testing.T) {
	in := ft.Input(&placementv1beta1.PlacementPolicy{Affinity: &placementv1beta1.Affinity{PlacementAffinity: &placementv1beta1.PlacementAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PlacementAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "back-end"}},
			TopologyKey:   clusterv1beta1.LabelClusterName,
		}},
	}}}, ft.Cluster("m1"), ft.Cluster("m2"), ft.Cluster("m3"))
	in.OtherPlacements = []framework.PlacementPeer{{Name: "back-end", Labels: map[string]string{"app": "back-end"}, Clusters: []string{"m1", "m3"}}}
	res := run(t, in)
	if diff := cmp.Diff([]string{"m1", "m3"}, res.Selected); diff != "" {
		t.Errorf("Selected (-want +got):\n%s", diff)
	}
	if d := decisionOf(t, res, "m2"); d.FilteredBy != "PlacementAffinity" {
		t.Errorf("decision of m2 = %+v", d)
	}
	// When the back-end leaves m3, the front-end (PickAll) follows.
	in.OtherPlacements[0].Clusters = []string{"m1"}
	next := rerun(t, in, res, 1)
	if diff := cmp.Diff([]string{"m3"}, next.Unschedule); diff != "" {
		t.Errorf("Unschedule (-want +got):\n%s", diff)
	}
}

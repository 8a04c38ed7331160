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
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

// The decisions name the filters each cluster passed, so that "why" can tell
// every filter's verdict, and the chosen Location of its instances.
func TestDecisionsNameThePassedFiltersAndTheLocation(t *testing.T) {
	tainted := ft.Taints(ft.Taint("maintenance", "true", clusterv1beta1.TaintEffectNoSchedule))
	for _, tc := range []struct {
		name       string
		policy     *placementv1beta1.PlacementPolicy
		clusters   []clusterv1beta1.MemberCluster
		bound      []string
		cluster    string
		wantPassed []string
		wantBy     string
	}{
		{"a PickAll without constraints on an untainted cluster runs only the eligibility filter",
			nil, []clusterv1beta1.MemberCluster{ft.Cluster("a")}, nil, "a", []string{"ClusterEligibility"}, ""},
		{"a cluster left out by a taint passed the filters before it",
			requiredLabels(placementv1beta1.PickAll, map[string]string{"env": "prod"}),
			[]clusterv1beta1.MemberCluster{ft.Cluster("a", ft.Labels("env", "prod"), tainted)}, nil, "a",
			[]string{"ClusterAffinity", "ClusterEligibility"}, "TaintToleration"},
		{"a cluster left out by affinity ran no later filter",
			requiredLabels(placementv1beta1.PickAll, map[string]string{"env": "prod"}),
			[]clusterv1beta1.MemberCluster{ft.Cluster("a", ft.Labels("env", "dev"))}, nil, "a", nil, "ClusterAffinity"},
		{"a bound cluster runs every filter and lists the ones it passes",
			requiredLabels(placementv1beta1.PickN, map[string]string{"env": "prod"}),
			[]clusterv1beta1.MemberCluster{ft.Cluster("a", ft.Labels("env", "prod"), tainted)}, []string{"a"}, "a",
			[]string{"SamePlacementAntiAffinity", "ClusterAffinity", "ClusterEligibility"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.policy != nil && tc.policy.PlacementType == placementv1beta1.PickN {
				tc.policy.NumberOfClusters = ft.Ptr[int32](1)
			}
			in := ft.Input(tc.policy, tc.clusters...)
			in.Bindings = ft.Bindings("test", tc.bound...)
			d := decisionOf(t, run(t, in), tc.cluster)
			if diff := cmp.Diff(tc.wantPassed, d.PassedFilters); diff != "" {
				t.Errorf("PassedFilters (-want +got):\n%s", diff)
			}
			if d.FilteredBy != tc.wantBy {
				t.Errorf("FilteredBy = %q, want %q", d.FilteredBy, tc.wantBy)
			}
		})
	}

	t.Run("the instances of the chosen Location name it", func(t *testing.T) {
		in := clouds()
		in.Policy = inLocation(pickN(1), map[string]string{"tier": "gold"})
		in.Rand = rand.New(rand.NewSource(7))
		res := run(t, in)
		for _, d := range res.Decisions {
			in := d.FilteredBy != "Locations"
			if (d.Location == res.ChosenLocation) != in || (in && d.PassedFilters[0] != "Locations") {
				t.Errorf("decision of %s in chosen Location %s: %+v", d.ClusterName, res.ChosenLocation, d)
			}
		}
	})
}

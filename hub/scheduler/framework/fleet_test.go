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
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

// fleetOf returns a view of clusters, which must be sorted by name.
func fleetOf(clusters ...clusterv1beta1.MemberCluster) *framework.Fleet {
	members := make([]*clusterv1beta1.MemberCluster, len(clusters))
	for i := range clusters {
		members[i] = &clusters[i]
	}
	return framework.NewFleet(1, members)
}

func TestPropertyQuantitiesAreThePropertyValuesOfEveryMember(t *testing.T) {
	f := fleetOf(
		ft.Cluster("a", ft.Property(clusterv1beta1.PropertyNodeCount, "3"), ft.AvailableCPU("1500m")),
		ft.Cluster("b", ft.Property(clusterv1beta1.PropertyNodeCount, "lots")),
		ft.Cluster("c"),
		ft.Cluster("d", ft.Property(clusterv1beta1.PropertyNodeCount, "2k"), ft.AvailableCPU("64")),
	)
	// text gives each member's value as its canonical string, or "-" without one.
	text := func(name string) []string {
		var out []string
		for _, v := range f.PropertyQuantities(name) {
			if !v.OK {
				out = append(out, "-")
				continue
			}
			q := v.Quantity
			out = append(out, q.String())
		}
		return out
	}
	cases := []struct {
		name     string
		property string
		want     []string
	}{
		{"a reported property, parsed where it is a quantity", clusterv1beta1.PropertyNodeCount, []string{"3", "-", "-", "2k"}},
		{"a property derived from resource usage", clusterv1beta1.PropertyAvailableCPU, []string{"1500m", "-", "-", "64"}},
		{"a property no member has", "example.com/gpus", []string{"-", "-", "-", "-"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, text(tc.property)); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
			// Each value is PropertyValue's, with its float.
			for i, v := range f.PropertyQuantities(tc.property) {
				q, ok := framework.PropertyValue(f.Members()[i], tc.property)
				if ok != v.OK || (ok && (q.Cmp(v.Quantity) != 0 || q.AsApproximateFloat64() != v.Float)) {
					t.Errorf("member %d: got %+v, PropertyValue says %v, %v", i, v, q.String(), ok)
				}
			}
		})
	}
}

func TestPropertyQuantitiesAreParsedOncePerView(t *testing.T) {
	f := fleetOf(ft.Cluster("a", ft.Property(clusterv1beta1.PropertyNodeCount, "3")))
	var wg sync.WaitGroup
	got := make([][]framework.PropertyQuantity, 8)
	for i := range got {
		wg.Go(func() { got[i] = f.PropertyQuantities(clusterv1beta1.PropertyNodeCount) })
	}
	wg.Wait()
	for i := range got {
		if &got[i][0] != &got[0][0] {
			t.Fatalf("reader %d got a column of its own: the view parses a property once", i)
		}
	}
}

func TestALabelColumnNumbersEveryMembersValue(t *testing.T) {
	f := fleetOf(
		ft.Cluster("a", ft.Labels("zone", "1")),
		ft.Cluster("b"),
		ft.Cluster("c", ft.Labels("zone", "2", clusterv1beta1.LabelClusterName, "not-c")),
		ft.Cluster("d", ft.Labels("zone", "1")),
	)
	tests := []struct {
		key  string
		want framework.LabelColumn
	}{
		{"zone", framework.LabelColumn{Values: []string{"1", "2"}, At: []int32{0, -1, 1, 0}}},
		{"rack", framework.LabelColumn{At: []int32{-1, -1, -1, -1}}},
		{clusterv1beta1.LabelClusterName, framework.LabelColumn{Values: []string{"a", "b", "c", "d"}, At: []int32{0, 1, 2, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got := f.LabelColumn(tt.key)
			if diff := cmp.Diff(tt.want, *got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("LabelColumn(%s) (-want +got):\n%s", tt.key, diff)
			}
			if again := f.LabelColumn(tt.key); again != got {
				t.Errorf("LabelColumn(%s) built twice", tt.key)
			}
		})
	}
}

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

package sameplacementantiaffinity

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name     string
		bindings []placementv1beta1.BindingObj
		want     map[string]string
	}{
		{
			name: "without bindings every cluster is a candidate",
			want: map[string]string{"member-1": "Success", "member-2": "Success"},
		},
		{
			name:     "a cluster the placement is bound to is not a candidate for a second binding",
			bindings: ft.Bindings("test", "member-1"),
			want:     map[string]string{"member-1": "ClusterAlreadySelected", "member-2": "Success"},
		},
		{
			name:     "a Scheduled binding holds the cluster too",
			bindings: []placementv1beta1.BindingObj{ft.BindingInState("test", "member-2", placementv1beta1.BindingStateScheduled)},
			want:     map[string]string{"member-1": "Success", "member-2": "ClusterAlreadySelected"},
		},
		{
			name:     "an Unscheduled binding does not hold the cluster",
			bindings: []placementv1beta1.BindingObj{ft.BindingInState("test", "member-2", placementv1beta1.BindingStateUnscheduled)},
			want:     map[string]string{"member-1": "Success", "member-2": "Success"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ft.Input(nil, ft.Cluster("member-1"), ft.Cluster("member-2"))
			in.Bindings = tt.bindings
			got := ft.Codes(ft.RunFilter(t, New(), in))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Filter() codes (-want +got):\n%s", diff)
			}
		})
	}
}

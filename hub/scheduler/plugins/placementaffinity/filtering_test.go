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

package placementaffinity

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		want   []string // clusters that pass
	}{
		{
			name:   "without placement affinity every cluster passes",
			policy: nil,
			want:   []string{"eu-1", "eu-2", "nozone", "us-1"},
		},
		{
			name:   "the front-end goes to the cluster where the back-end runs",
			policy: requiring(terms(near("back-end", byName)), nil),
			want:   []string{"eu-1"},
		},
		{
			name:   "with a zone topology key, any cluster in the back-end's zone will do",
			policy: requiring(terms(near("back-end", "zone")), nil),
			want:   []string{"eu-1", "eu-2"},
		},
		{
			name:   "a placement that runs nowhere attracts to no cluster",
			policy: requiring(terms(near("database", byName)), nil),
			want:   nil,
		},
		{
			name:   "a peer's cluster without the topology key makes no domain",
			policy: requiring(terms(near("cache", "zone")), nil),
			want:   []string{"us-1"},
		},
		{
			name:   "required affinity terms are ANDed",
			policy: requiring(terms(near("back-end", "zone"), near("cache", "zone")), nil),
			want:   nil,
		},
		{
			name:   "anti-affinity keeps off the back-end's cluster",
			policy: requiring(nil, terms(near("back-end", byName))),
			want:   []string{"eu-2", "nozone", "us-1"},
		},
		{
			name:   "anti-affinity by zone keeps off the back-end's whole zone, and lets a cluster without a zone in",
			policy: requiring(nil, terms(near("back-end", "zone"))),
			want:   []string{"nozone", "us-1"},
		},
		{
			name:   "the placement itself never counts as a peer",
			policy: requiring(nil, terms(near("front-end", byName))),
			want:   []string{"eu-1", "eu-2", "nozone", "us-1"},
		},
		{
			name:   "affinity and anti-affinity combine",
			policy: requiring(terms(near("back-end", "zone")), terms(near("back-end", byName))),
			want:   []string{"eu-2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			statuses := ft.RunFilter(t, New(), world(tt.policy))
			var got []string
			for name, st := range statuses {
				if st.IsSuccess() {
					got = append(got, name)
				} else if st.Code() != framework.ClusterMismatch {
					t.Errorf("Filter(%s) code = %v, want ClusterMismatch", name, st.Code())
				}
			}
			sort.Strings(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("clusters passing (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterSaysWhy(t *testing.T) {
	statuses := ft.RunFilter(t, New(), world(requiring(terms(near("back-end", "zone")), terms(near("cache", byName)))))
	want := map[string]string{
		"eu-1":   "",
		"eu-2":   "",
		"us-1":   "no placements matching app=back-end are in the cluster's zone domain (required placement affinity)",
		"nozone": "no placements matching app=back-end are in the cluster's zone domain (required placement affinity)",
	}
	got := map[string]string{}
	for name, st := range statuses {
		got[name] = st.Message()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	statuses = ft.RunFilter(t, New(), world(requiring(nil, terms(near("cache", byName)))))
	if diff := cmp.Diff("placements matching app=cache are in the cluster's cluster.flotilla.io/name domain (required placement anti-affinity)",
		statuses["us-1"].Message()); diff != "" {
		t.Errorf("anti-affinity message (-want +got):\n%s", diff)
	}
}

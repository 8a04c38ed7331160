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
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

func TestPickFixed(t *testing.T) {
	clusters := []clusterv1beta1.MemberCluster{
		ft.Cluster("a"), ft.Cluster("b"), ft.Cluster("sick", unhealthy()),
		ft.Cluster("strict", ft.StrictMatchLabels(), ft.Labels("env", "dev")),
		ft.Cluster("tainted", maintenance(clusterv1beta1.TaintEffectNoSchedule)),
	}
	tests := []struct {
		name       string
		names      []string
		bound      []string
		want       []string
		unsched    []string
		wantStatus metav1.ConditionStatus
		wantReason string
		reasons    map[string]string
	}{
		{
			name:       "exactly the named clusters",
			names:      []string{"b", "a"},
			want:       []string{"a", "b"},
			wantStatus: metav1.ConditionTrue, wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
			reasons: map[string]string{"a": "picked: named in the policy's clusterNames", "sick": "not named in the policy's clusterNames"},
		},
		{
			name:       "a named cluster that does not exist gets a decision and leaves the policy unfulfilled",
			names:      []string{"a", "missing"},
			want:       []string{"a"},
			wantStatus: metav1.ConditionFalse, wantReason: placementv1beta1.ReasonSchedulingPolicyUnfulfilled,
			reasons: map[string]string{"missing": "named in the policy's clusterNames, but no such member cluster exists"},
		},
		{
			name:       "a named cluster that is not eligible is not selected",
			names:      []string{"a", "sick"},
			want:       []string{"a"},
			wantStatus: metav1.ConditionFalse, wantReason: placementv1beta1.ReasonSchedulingPolicyUnfulfilled,
			reasons: map[string]string{"sick": "cluster is not healthy (Healthy is False: Test)"},
		},
		{
			name:       "none of the named clusters fits",
			names:      []string{"sick", "missing"},
			want:       nil,
			wantStatus: metav1.ConditionFalse, wantReason: placementv1beta1.ReasonScheduleFailed,
		},
		{
			name:       "a named cluster the placement is on is never moved, even when it is no longer eligible",
			names:      []string{"sick"},
			bound:      []string{"sick"},
			want:       []string{"sick"},
			wantStatus: metav1.ConditionTrue, wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "a cluster no longer named is unscheduled",
			names:      []string{"a"},
			bound:      []string{"a", "b"},
			want:       []string{"a"},
			unsched:    []string{"b"},
			wantStatus: metav1.ConditionTrue, wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
			reasons: map[string]string{"b": "not named in the policy's clusterNames"},
		},
		{
			name:       "naming a strict cluster is explicit enough",
			names:      []string{"strict"},
			want:       []string{"strict"},
			wantStatus: metav1.ConditionTrue, wantReason: placementv1beta1.ReasonSchedulingPolicyFulfilled,
		},
		{
			name:       "naming a tainted cluster does not bypass its taint",
			names:      []string{"tainted"},
			want:       nil,
			wantStatus: metav1.ConditionFalse, wantReason: placementv1beta1.ReasonScheduleFailed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ft.Input(pickFixed(tt.names...), clusters...)
			in.Bindings = ft.Bindings("test", tt.bound...)
			res := run(t, in)
			if diff := cmp.Diff(tt.want, res.Selected); diff != "" {
				t.Errorf("Selected (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.unsched, res.Unschedule); diff != "" {
				t.Errorf("Unschedule (-want +got):\n%s", diff)
			}
			if res.Status != tt.wantStatus || res.Reason != tt.wantReason {
				t.Errorf("condition = %s %s: %s", res.Status, res.Reason, res.Message)
			}
			for name, want := range tt.reasons {
				if diff := cmp.Diff(want, decisionOf(t, res, name).Reason); diff != "" {
					t.Errorf("reason of %s (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

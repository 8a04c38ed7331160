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
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func externalBinding(cluster string, state placementv1beta1.BindingState) placementv1beta1.BindingObj {
	return &placementv1beta1.ClusterResourceBinding{Spec: placementv1beta1.ResourceBindingSpec{State: state, TargetCluster: cluster}}
}

func TestExternalScheduled(t *testing.T) {
	for _, tc := range []struct {
		name       string
		bindings   []placementv1beta1.BindingObj
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
	}{
		{"without bindings it waits for the other scheduler", nil, metav1.ConditionUnknown, placementv1beta1.ReasonWaitingForExternalScheduler,
			`schedulerName is "mine": waiting for that scheduler to write bindings`},
		{"with bindings it is scheduled on their clusters",
			[]placementv1beta1.BindingObj{externalBinding("b", placementv1beta1.BindingStateScheduled), externalBinding("a", placementv1beta1.BindingStateBound)},
			metav1.ConditionTrue, placementv1beta1.ReasonScheduled, `scheduler "mine" bound 2 clusters: a, b`},
		{"unscheduled bindings do not count",
			[]placementv1beta1.BindingObj{externalBinding("a", placementv1beta1.BindingStateUnscheduled)},
			metav1.ConditionUnknown, placementv1beta1.ReasonWaitingForExternalScheduler, `schedulerName is "mine": waiting for that scheduler to write bindings`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := externalScheduled("mine", tc.bindings)
			if diff := cmp.Diff([]string{string(tc.wantStatus), tc.wantReason, tc.wantMsg}, []string{string(got.Status), got.Reason, got.Message}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

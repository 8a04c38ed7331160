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

package workgen

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestMarkDisconnected(t *testing.T) {
	since := metav1.NewTime(time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC))
	applied := []metav1.Condition{
		cond(placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, 3),
		cond(placementv1beta1.ConditionAvailable, metav1.ConditionTrue, placementv1beta1.ReasonAvailable, 3),
	}
	for _, tc := range []struct {
		name      string
		connected *metav1.Condition
		want      []metav1.Condition
	}{
		{"a connected member keeps what its agent reported",
			&metav1.Condition{Type: clusterv1beta1.ConditionAgentConnected, Status: metav1.ConditionTrue}, applied},
		{"a member that has not connected yet keeps it too", nil, applied},
		{"a disconnected member's state is unknown, since when it went",
			&metav1.Condition{Type: clusterv1beta1.ConditionAgentConnected, Status: metav1.ConditionFalse, Reason: clusterv1beta1.ReasonHeartbeatTimeout, LastTransitionTime: since},
			[]metav1.Condition{
				{Type: placementv1beta1.ConditionApplied, Status: metav1.ConditionUnknown, Reason: placementv1beta1.ReasonAgentDisconnected, ObservedGeneration: 3,
					Message: "the agent of member m-1 has been disconnected since 2026-11-26T21:00:00Z (HeartbeatTimeout); it last reported Applied=True (Applied)"},
				{Type: placementv1beta1.ConditionAvailable, Status: metav1.ConditionUnknown, Reason: placementv1beta1.ReasonAgentDisconnected, ObservedGeneration: 3,
					Message: "the agent of member m-1 has been disconnected since 2026-11-26T21:00:00Z (HeartbeatTimeout); it last reported Available=True (Available)"},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := append([]metav1.Condition(nil), applied...)
			markDisconnected(&got, "m-1", tc.connected, 3)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime", "Message")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for i := range tc.want {
				if tc.want[i].Message != "" && tc.want[i].Message != got[i].Message {
					t.Errorf("message of %s: want %q, got %q", tc.want[i].Type, tc.want[i].Message, got[i].Message)
				}
			}
		})
	}
}

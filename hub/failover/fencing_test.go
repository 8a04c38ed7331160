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

package failover

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestDecideFencing(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	deleted := []LeavingWork{{Name: "web-work", Deleting: true}}
	notDeleted := []LeavingWork{{Name: "web-work"}}
	in := func(copies ...LeavingCopy) FencingInput {
		return FencingInput{Now: now, Lease: 60 * time.Second, Margin: 45 * time.Second, Leaving: copies}
	}
	clearCond := metav1.Condition{Status: metav1.ConditionFalse, Reason: placementv1beta1.ReasonFencingClear,
		Message: "no copy the placement left is waiting to stop"}
	waiting := func(why string) metav1.Condition {
		return metav1.Condition{Status: metav1.ConditionTrue, Reason: placementv1beta1.ReasonFencingWaiting,
			Message: "no other cluster gets the placement until the copy it leaves is known stopped: " + why}
	}
	tests := []struct {
		name string
		in   FencingInput
		want FencingPlan
	}{
		{
			name: "a placement leaving no cluster is clear",
			in:   in(),
			want: FencingPlan{Condition: clearCond},
		},
		{
			name: "a copy whose Work is gone (the agent confirmed the removal) is stopped",
			in:   in(LeavingCopy{Cluster: "member-1", LastHeard: ago(time.Second)}),
			want: FencingPlan{Condition: clearCond},
		},
		{
			name: "a copy on a connected cluster waits for its agent's confirmation, without a deadline",
			in:   in(LeavingCopy{Cluster: "member-1", Works: deleted, Connected: true, LastHeard: ago(time.Hour)}),
			want: FencingPlan{Waiting: []FencingWait{{Cluster: "member-1"}},
				Condition: waiting("member-1: its agent is connected and has not confirmed removing the copy yet")},
		},
		{
			name: "a cut-off copy waits until lease and margin have passed since the hub last heard from it",
			in:   in(LeavingCopy{Cluster: "member-1", Works: deleted, LastHeard: ago(30 * time.Second)}),
			want: FencingPlan{Waiting: []FencingWait{{Cluster: "member-1", Until: now.Add(75 * time.Second)}}, RecheckAfter: 75 * time.Second,
				Condition: waiting("member-1: its agent is cut off; the copy counts as stopped at 2026-11-27T12:01:15Z (lease 1m0s + margin 45s after the hub last heard from it at 2026-11-27T11:59:30Z) unless the agent confirms its removal first")},
		},
		{
			name: "a cut-off copy one second before lease and margin still waits",
			in:   in(LeavingCopy{Cluster: "member-1", Works: deleted, LastHeard: ago(104 * time.Second)}),
			want: FencingPlan{Waiting: []FencingWait{{Cluster: "member-1", Until: now.Add(time.Second)}}, RecheckAfter: time.Second,
				Condition: waiting("member-1: its agent is cut off; the copy counts as stopped at 2026-11-27T12:00:01Z (lease 1m0s + margin 45s after the hub last heard from it at 2026-11-27T11:58:16Z) unless the agent confirms its removal first")},
		},
		{
			name: "a cut-off copy counts as stopped once lease and margin have passed, and its deleted Work is let go",
			in:   in(LeavingCopy{Cluster: "member-1", Works: deleted, LastHeard: ago(105 * time.Second)}),
			want: FencingPlan{Release: map[string][]string{"member-1": {"web-work"}}, Condition: clearCond},
		},
		{
			name: "a cut-off copy whose Work is not deleted yet keeps waiting after the lease, and nothing is let go",
			in:   in(LeavingCopy{Cluster: "member-1", Works: notDeleted, LastHeard: ago(time.Hour)}),
			want: FencingPlan{Waiting: []FencingWait{{Cluster: "member-1"}},
				Condition: waiting("member-1: the lease ran out at 2026-11-27T11:01:45Z but its Work is not deleted yet")},
		},
		{
			name: "a copy on a cluster the hub never heard from is stopped and its Work let go",
			in:   in(LeavingCopy{Cluster: "member-1", Works: deleted}),
			want: FencingPlan{Release: map[string][]string{"member-1": {"web-work"}}, Condition: clearCond},
		},
		{
			name: "of two copies, one stopped and one waiting, the placement waits for the second and lets the first go",
			in: in(LeavingCopy{Cluster: "member-2", Works: deleted, LastHeard: ago(10 * time.Second)},
				LeavingCopy{Cluster: "member-1", Works: deleted, LastHeard: ago(10 * time.Minute)}),
			want: FencingPlan{Waiting: []FencingWait{{Cluster: "member-2", Until: now.Add(95 * time.Second)}}, RecheckAfter: 95 * time.Second,
				Release:   map[string][]string{"member-1": {"web-work"}},
				Condition: waiting("member-2: its agent is cut off; the copy counts as stopped at 2026-11-27T12:01:35Z (lease 1m0s + margin 45s after the hub last heard from it at 2026-11-27T11:59:50Z) unless the agent confirms its removal first")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DecideFencing(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecideFencing() (-want +got):\n%s", diff)
			}
		})
	}
}

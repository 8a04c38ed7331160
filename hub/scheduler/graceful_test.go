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
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

func boundTo(cluster string, available bool) *placementv1beta1.ClusterResourceBinding {
	b := &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "p-" + cluster, Generation: 1},
		Spec:       placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateBound, TargetCluster: cluster},
	}
	if available {
		conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, "Available", "", 1)
	}
	return b
}

func evictionRequested(b *placementv1beta1.ClusterResourceBinding, at time.Time) *placementv1beta1.ClusterResourceBinding {
	b.Status.Conditions = append(b.Status.Conditions, metav1.Condition{Type: placementv1beta1.ConditionEvictionRequested, Status: metav1.ConditionTrue,
		Reason: placementv1beta1.ReasonTaintNotTolerated, Message: "taint", LastTransitionTime: metav1.NewTime(at)})
	return b
}

func TestGracefulHoldsKeepAnEvictedBindingUntilItsReplacementIsAvailable(t *testing.T) {
	now := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	res := framework.CycleResult{Selected: []string{"m2"}, Unschedule: []string{"m1"}}
	evicted := func() *placementv1beta1.ClusterResourceBinding {
		return evictionRequested(boundTo("m1", true), now.Add(-time.Minute))
	}
	for _, tc := range []struct {
		name         string
		active       map[string]placementv1beta1.BindingObj
		now          time.Time
		wantHeld     bool
		wantReleased bool
	}{
		{"kept while the replacement has no binding yet", map[string]placementv1beta1.BindingObj{"m1": evicted()}, now, true, false},
		{"kept while the replacement is not available", map[string]placementv1beta1.BindingObj{"m1": evicted(), "m2": boundTo("m2", false)}, now, true, false},
		{"released once the replacement is available", map[string]placementv1beta1.BindingObj{"m1": evicted(), "m2": boundTo("m2", true)}, now, false, true},
		{"released after the graceful timeout", map[string]placementv1beta1.BindingObj{"m1": evicted(), "m2": boundTo("m2", false)}, now.Add(5 * time.Minute), false, false},
		{"a cluster left for another reason is not held", map[string]placementv1beta1.BindingObj{"m1": boundTo("m1", true)}, now, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held, released, _ := gracefulHolds(tc.now, 5*time.Minute, tc.active, res)
			if _, got := held["m1"]; got != tc.wantHeld {
				t.Errorf("held = %v, want %v", held, tc.wantHeld)
			}
			if got := len(released) == 1; got != tc.wantReleased {
				t.Errorf("released = %v, want %v", released, tc.wantReleased)
			}
		})
	}
}

// Two clusters lost at once: one evicted binding is held for each replacement
// not available yet, so that the rollout's maxSurge lets the next replacement
// start (holding both until both replacements were available deadlocked).
func TestGracefulHoldsOneEvictedBindingPerWaitingReplacement(t *testing.T) {
	now := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	res := framework.CycleResult{Selected: []string{"m2", "m4", "m5"}, Unschedule: []string{"m1", "m3"}}
	active := func(m2, m4 bool) map[string]placementv1beta1.BindingObj {
		return map[string]placementv1beta1.BindingObj{
			"m1": evictionRequested(boundTo("m1", true), now.Add(-2*time.Minute)),
			"m3": evictionRequested(boundTo("m3", true), now.Add(-time.Minute)),
			"m2": boundTo("m2", m2), "m4": boundTo("m4", m4), "m5": boundTo("m5", true),
		}
	}
	for _, tc := range []struct {
		name                   string
		m2, m4                 bool
		wantHeld, wantReleased []string
	}{
		{"both kept while neither replacement is available", false, false, []string{"m1", "m3"}, nil},
		{"the one requested last is kept while one replacement waits", true, false, []string{"m3"}, []string{"m1"}},
		{"both released once both replacements are available", true, true, nil, []string{"m3", "m1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held, released, _ := gracefulHolds(now, 5*time.Minute, active(tc.m2, tc.m4), res)
			var gotHeld, gotReleased []string
			for _, c := range []string{"m1", "m3"} {
				if _, ok := held[c]; ok {
					gotHeld = append(gotHeld, c)
				}
			}
			for _, r := range released {
				gotReleased = append(gotReleased, r.cluster)
			}
			if fmt.Sprint(gotHeld) != fmt.Sprint(tc.wantHeld) || fmt.Sprint(gotReleased) != fmt.Sprint(tc.wantReleased) {
				t.Errorf("held %v and released %v, want %v and %v", gotHeld, gotReleased, tc.wantHeld, tc.wantReleased)
			}
		})
	}
}

func TestAGracefulTimeoutOfZeroKeepsNoEvictedBinding(t *testing.T) {
	if got := (&Reconciler{}).gracefulTimeout(); got != 0 {
		t.Errorf("gracefulTimeout of a Reconciler with GracefulTimeout 0 = %s, want 0 (--eviction-graceful-timeout 0 keeps none)", got)
	}
	if got := (&Reconciler{GracefulTimeout: time.Minute}).gracefulTimeout(); got != time.Minute {
		t.Errorf("gracefulTimeout = %s, want 1m", got)
	}
}

func failbackRequested(b *placementv1beta1.ClusterResourceBinding, to string) *placementv1beta1.ClusterResourceBinding {
	b.Status.Conditions = append(b.Status.Conditions, metav1.Condition{Type: placementv1beta1.ConditionFailbackRequested, Status: metav1.ConditionTrue,
		Reason: placementv1beta1.ReasonFailingBack, Message: pipeline.FailbackMessage(to, "preferred")})
	return b
}

func TestFailbackHoldsKeepTheOldCopyUntilTheNewOneIsAvailable(t *testing.T) {
	active := func(bs ...*placementv1beta1.ClusterResourceBinding) map[string]placementv1beta1.BindingObj {
		m := map[string]placementv1beta1.BindingObj{}
		for _, b := range bs {
			m[b.Spec.TargetCluster] = b
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		active map[string]placementv1beta1.BindingObj
		res    framework.CycleResult
		want   map[string]string
	}{
		{
			name:   "the old copy stays while the new one is not available",
			active: active(failbackRequested(boundTo("secondary", true), "primary"), boundTo("primary", false)),
			res:    framework.CycleResult{Selected: []string{"primary"}, Unschedule: []string{"secondary"}},
			want:   map[string]string{"secondary": "failing back to primary; kept until the copy on primary is available"},
		},
		{
			name:   "the old copy stays while the new one has no binding yet",
			active: active(failbackRequested(boundTo("secondary", true), "primary")),
			res:    framework.CycleResult{Selected: []string{"primary"}, Unschedule: []string{"secondary"}},
			want:   map[string]string{"secondary": "failing back to primary; kept until the copy on primary is available"},
		},
		{
			name:   "the old copy goes once the new one is available",
			active: active(failbackRequested(boundTo("secondary", true), "primary"), boundTo("primary", true)),
			res:    framework.CycleResult{Selected: []string{"primary"}, Unschedule: []string{"secondary"}},
			want:   map[string]string{},
		},
		{
			name:   "the old copy stays when the target cannot be picked",
			active: active(failbackRequested(boundTo("secondary", true), "primary")),
			res:    framework.CycleResult{Unschedule: []string{"secondary"}},
			want:   map[string]string{"secondary": "failing back to primary; kept while 0 of 1 clusters are selected"},
		},
		{
			name:   "an eviction of the old cluster is not held as a failback",
			active: active(evictionRequested(failbackRequested(boundTo("secondary", true), "primary"), time.Now()), boundTo("primary", false)),
			res:    framework.CycleResult{Selected: []string{"primary"}, Unschedule: []string{"secondary"}},
			want:   map[string]string{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, failbackHolds(tc.active, tc.res, 1)); diff != "" {
				t.Errorf("failbackHolds (-want +got):\n%s", diff)
			}
		})
	}
}

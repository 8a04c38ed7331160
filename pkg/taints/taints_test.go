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

package taints

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestSaturatingSeconds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		seconds int64
		want    time.Duration
	}{
		{name: "zero is no time", seconds: 0, want: 0},
		{name: "a negative count is no time", seconds: -5, want: 0},
		{name: "the smallest negative count is no time", seconds: math.MinInt64, want: 0},
		{name: "ten seconds are ten seconds", seconds: 10, want: 10 * time.Second},
		{name: "the largest count a duration holds is kept", seconds: 9_223_372_036, want: 9_223_372_036 * time.Second},
		{name: "one more saturates instead of wrapping round", seconds: 9_223_372_037, want: time.Duration(math.MaxInt64)},
		{name: "the count from the issue saturates", seconds: 9_300_000_000, want: time.Duration(math.MaxInt64)},
		{name: "the largest int64 saturates", seconds: math.MaxInt64, want: time.Duration(math.MaxInt64)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SaturatingSeconds(tc.seconds); got != tc.want {
				t.Errorf("SaturatingSeconds(%d) = %s, want %s", tc.seconds, got, tc.want)
			}
		})
	}
}

func TestTolerates(t *testing.T) {
	taint := clusterv1beta1.Taint{Key: "example.com/drain", Value: "yes", Effect: clusterv1beta1.TaintEffectNoExecute}
	for _, tc := range []struct {
		name string
		tol  placementv1beta1.Toleration
		want bool
	}{
		{name: "Equal with the same key and value matches", tol: placementv1beta1.Toleration{Key: "example.com/drain", Value: "yes"}, want: true},
		{name: "Equal with another value does not match", tol: placementv1beta1.Toleration{Key: "example.com/drain", Value: "no"}},
		{name: "Exists with the key matches any value", tol: placementv1beta1.Toleration{Key: "example.com/drain", Operator: placementv1beta1.TolerationOpExists}, want: true},
		{name: "Exists without a key matches every taint", tol: placementv1beta1.Toleration{Operator: placementv1beta1.TolerationOpExists}, want: true},
		{name: "another effect does not match", tol: placementv1beta1.Toleration{Operator: placementv1beta1.TolerationOpExists, Effect: clusterv1beta1.TaintEffectNoSchedule}},
		{name: "the same effect matches", tol: placementv1beta1.Toleration{Operator: placementv1beta1.TolerationOpExists, Effect: clusterv1beta1.TaintEffectNoExecute}, want: true},
		{name: "another key does not match", tol: placementv1beta1.Toleration{Key: "example.com/other", Operator: placementv1beta1.TolerationOpExists}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Tolerates(&tc.tol, &taint); got != tc.want {
				t.Errorf("Tolerates(%+v) = %v, want %v", tc.tol, got, tc.want)
			}
		})
	}
}

func TestNoExecuteTolerance(t *testing.T) {
	taint := clusterv1beta1.Taint{Key: "example.com/drain", Effect: clusterv1beta1.TaintEffectNoExecute}
	exists := func(seconds *int64) placementv1beta1.Toleration {
		return placementv1beta1.Toleration{Key: "example.com/drain", Operator: placementv1beta1.TolerationOpExists, TolerationSeconds: seconds}
	}
	other := placementv1beta1.Toleration{Key: "example.com/other", Operator: placementv1beta1.TolerationOpExists}
	for _, tc := range []struct {
		name        string
		tolerations []placementv1beta1.Toleration
		want        Tolerance
	}{
		{name: "no toleration gets the hub's default", want: Tolerance{For: time.Minute}},
		{name: "a toleration of another taint gets the default", tolerations: []placementv1beta1.Toleration{other}, want: Tolerance{For: time.Minute}},
		{name: "a matching toleration without tolerationSeconds tolerates forever",
			tolerations: []placementv1beta1.Toleration{exists(nil)}, want: Tolerance{Tolerated: true, Forever: true}},
		{name: "a matching toleration with tolerationSeconds tolerates that long",
			tolerations: []placementv1beta1.Toleration{exists(ptr.To[int64](10))}, want: Tolerance{Tolerated: true, For: 10 * time.Second}},
		{name: "tolerationSeconds 0 does not tolerate at all",
			tolerations: []placementv1beta1.Toleration{exists(ptr.To[int64](0))}, want: Tolerance{Tolerated: true}},
		{name: "the first matching toleration decides, not the shortest",
			tolerations: []placementv1beta1.Toleration{other, exists(ptr.To[int64](300)), exists(ptr.To[int64](10))}, want: Tolerance{Tolerated: true, For: 300 * time.Second}},
		{name: "the first matching toleration decides, not the longest",
			tolerations: []placementv1beta1.Toleration{exists(ptr.To[int64](10)), exists(nil)}, want: Tolerance{Tolerated: true, For: 10 * time.Second}},
		{name: "a forever toleration listed first tolerates forever",
			tolerations: []placementv1beta1.Toleration{exists(nil), exists(ptr.To[int64](10))}, want: Tolerance{Tolerated: true, Forever: true}},
		{name: "tolerationSeconds past a duration's range saturate",
			tolerations: []placementv1beta1.Toleration{exists(ptr.To[int64](9_300_000_000))}, want: Tolerance{Tolerated: true, For: time.Duration(math.MaxInt64)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := NoExecuteTolerance(&taint, tc.tolerations, time.Minute)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NoExecuteTolerance (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	now := time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC)
	added := metav1.NewTime(now.Add(-time.Hour))
	recorded := clusterv1beta1.Taint{Key: "k", Effect: clusterv1beta1.TaintEffectNoExecute, TimeAdded: &added}
	unrecorded := clusterv1beta1.Taint{Key: "k", Effect: clusterv1beta1.TaintEffectNoExecute}
	for _, tc := range []struct {
		name      string
		tolerance Tolerance
		taint     clusterv1beta1.Taint
		want      time.Time
		wantOK    bool
	}{
		{name: "a forever tolerance has no deadline", tolerance: Tolerance{Tolerated: true, Forever: true}, taint: recorded},
		{name: "the deadline counts from timeAdded", tolerance: Tolerance{For: 10 * time.Second}, taint: recorded, want: added.Add(10 * time.Second), wantOK: true},
		{name: "a taint the hub has not recorded counts from now", tolerance: Tolerance{For: 10 * time.Second}, taint: unrecorded, want: now.Add(10 * time.Second), wantOK: true},
		{name: "a saturated tolerance ends centuries after timeAdded, not before it",
			tolerance: Tolerance{Tolerated: true, For: time.Duration(math.MaxInt64)}, taint: recorded, want: added.Add(time.Duration(math.MaxInt64)), wantOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.tolerance.Deadline(&tc.taint, now)
			if ok != tc.wantOK || !got.Equal(tc.want) {
				t.Errorf("Deadline = %s, %v; want %s, %v", got, ok, tc.want, tc.wantOK)
			}
			if ok && got.Before(now) && tc.tolerance.For > time.Hour {
				t.Errorf("a long tolerance ended in the past: %s", got)
			}
		})
	}
}

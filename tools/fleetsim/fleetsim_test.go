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

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Impossible combinations are refused with one line naming the flag.
func TestImpossibleFlagsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--members", "0"}, "--members must be at least 1"},
		{[]string{"--members", "10", "--kill", "8"}, "--kill 8 leaves 2 members, fewer than --pick-n 3"},
		{[]string{"--members", "10", "--placements", "1", "--kill", "1"}, "--kill 1 needs PickN placements"},
		{[]string{"--hub-env", "GOMEMLIMIT"}, "--hub-env takes NAME=VALUE"},
		{[]string{"--members", "2", "--placements", "4"}, "--pick-n 3 is more than the 2 members"},
		{[]string{"--duration", "1s"}, "--duration must be at least 10s"},
		{[]string{"--members", "1", "--placements", "0", "--churn", "100"}, "--churn 100 a minute cuts each of the 1 members"},
		{[]string{"--bad-members", "-1"}, "must not be negative"},
		{[]string{"--zone-loss", "5", "--zones", "1"}, "--zone-loss needs --zones 2 or more"},
		{[]string{"--zone-loss", "5", "--failback-stabilization", "1500ms"}, "--failback-stabilization must be whole seconds"},
		{[]string{"--zone-loss", "5", "--failback-max-concurrent", "0"}, "--failback-max-concurrent must be from 1 to 1000"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := newCommand(&out, &errOut)
			cmd.SetArgs(tc.args)
			err := cmd.ExecuteContext(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line containing %q", err, tc.want)
			}
		})
	}
}

func TestPerMinuteCountsMemberClusterWrites(t *testing.T) {
	before := map[string]float64{"memberclusters/status": 10, "leases": 100, "works/status": 5}
	after := map[string]float64{"memberclusters/status": 14, "memberclusters": 12, "leases": 160, "works/status": 5}
	got, mc := perMinute(before, after, 2)
	if mc != 8 || got["leases"] != 30 || got["memberclusters/status"] != 2 || got["memberclusters"] != 6 {
		t.Fatalf("perMinute = %v, %v", got, mc)
	}
	if _, ok := got["works/status"]; ok {
		t.Fatalf("a resource without writes is listed: %v", got)
	}
}

func TestParseLabels(t *testing.T) {
	got := parseLabels(`code="200",component="apiserver",group="cluster.flotilla.io",resource="memberclusters",scope="resource",subresource="status",verb="PUT",version="v1beta1"`)
	if got["resource"] != "memberclusters" || got["subresource"] != "status" || got["verb"] != "PUT" {
		t.Fatalf("parseLabels = %v", got)
	}
}

// A small fleet end to end: a real API server, the hub binary, 5 members, 3
// placements, a bad member, a kill and a hub restart. It checks that every
// figure is reported and that an idle fleet writes no MemberCluster; the
// figures themselves are not judged.

// The zone-loss tracker times failover and failback from the placements'
// status and counts the bindings created for each: a placement that moves out
// and back has 2 moves; one that moves again after it is back, or more than
// twice, ping-pongs; one seen Available nowhere while failing back had a gap.
func TestZoneLossTrackerCountsMovesAndPingPong(t *testing.T) {
	tr := &tracker{createdAt: map[string]time.Time{}, want: map[string]int{}, availableAt: map[string]time.Time{},
		state: map[string]placementState{}, failedBackAt: map[string]time.Time{}}
	status := func(name string, available bool, clusters ...string) {
		crp := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1}}
		st := metav1.ConditionFalse
		if available {
			st = metav1.ConditionTrue
		}
		crp.Status.Conditions = []metav1.Condition{{Type: crp.PlacementConditionType(placementv1beta1.ConditionAvailable), Status: st, ObservedGeneration: 1}}
		for _, c := range clusters {
			crp.Status.PlacementStatuses = append(crp.Status.PlacementStatuses, placementv1beta1.PerClusterPlacementStatus{ClusterName: c,
				Conditions: []metav1.Condition{{Type: placementv1beta1.ConditionAvailable, Status: st}}})
		}
		tr.observe(crp)
	}
	bind := func(name, cluster string) {
		tr.bound(&placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{placementv1beta1.LabelPlacementName: name}},
			Spec: placementv1beta1.ResourceBindingSpec{TargetCluster: cluster}})
	}
	for _, name := range []string{"steady", "flapping", "gap"} {
		tr.created(name, 1)
		status(name, true, "z0-a")
	}
	tr.created("elsewhere", 1)
	status("elsewhere", true, "z1-a")

	if got := tr.startFailover(map[string]bool{"z0-a": true}, nil); got != 3 {
		t.Fatalf("startFailover affected %d placements, want 3 (elsewhere is not on the lost zone)", got)
	}
	for _, name := range []string{"steady", "flapping", "gap"} {
		bind(name, "z1-b")
		status(name, true, "z1-b")
	}
	tr.startFailback()
	for _, name := range []string{"steady", "flapping", "gap"} {
		bind(name, "z0-a")
	}
	status("gap", false, "z1-b", "z0-a")
	for _, name := range []string{"steady", "flapping", "gap"} {
		status(name, true, "z0-a")
	}
	bind("flapping", "z1-b")

	if len(tr.failedOverAt) != 3 || len(tr.failedBackAt) != 3 {
		t.Fatalf("failed over %v, failed back %v: want all 3 each", tr.failedOverAt, tr.failedBackAt)
	}
	moves, hops, pingPong, gaps := tr.movesSinceFailover()
	if diff := cmp.Diff(map[string]int{"steady": 2, "flapping": 3, "gap": 2}, moves); diff != "" {
		t.Errorf("moves (-want +got):\n%s", diff)
	}
	if hops != 0 || pingPong != 1 || gaps != 1 {
		t.Errorf("failover hops %d, ping-pong %d, gaps %d: want 0, 1 (flapping), 1 (gap)", hops, pingPong, gaps)
	}
}

func TestQueueTimesSince(t *testing.T) {
	before := parseQueueTimes(`# HELP workqueue_queue_duration_seconds x
workqueue_queue_duration_seconds_sum{controller="scheduler",name="scheduler"} 10
workqueue_queue_duration_seconds_count{controller="scheduler",name="scheduler"} 4
workqueue_work_duration_seconds_sum{controller="scheduler",name="scheduler"} 2
workqueue_queue_duration_seconds_count{controller="idle",name="idle"} 7
workqueue_queue_duration_seconds_bucket{controller="scheduler",name="scheduler",le="1"} 3
`)
	after := parseQueueTimes(`workqueue_queue_duration_seconds_sum{controller="scheduler",name="scheduler"} 40
workqueue_queue_duration_seconds_count{controller="scheduler",name="scheduler"} 14
workqueue_work_duration_seconds_sum{controller="scheduler",name="scheduler"} 7
workqueue_queue_duration_seconds_count{controller="idle",name="idle"} 7
workqueue_queue_duration_seconds_count{controller="new",name="new"} 2
workqueue_queue_duration_seconds_sum{controller="new",name="new"} 1
`)
	got := after.since(before)
	if len(got) != 2 || got["idle"] != nil {
		t.Fatalf("want scheduler and new only, got %v", got)
	}
	if s := *got["scheduler"]; s.Items != 10 || s.WaitSeconds != 30 || s.WorkSeconds != 5 || s.MeanWaitSeconds != 3 || s.MeanWorkSeconds != 0.5 {
		t.Errorf("scheduler: %+v", s)
	}
	if n := *got["new"]; n.Items != 2 || n.MeanWaitSeconds != 0.5 {
		t.Errorf("new: %+v", n)
	}
}

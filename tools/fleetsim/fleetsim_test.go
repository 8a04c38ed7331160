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

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

package fleet_test

import (
	"fmt"
	"math/rand"
	"testing"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/fleet"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
)

func snapshotOf(b *testing.B, members []*clusterv1beta1.MemberCluster) *fleet.Snapshot {
	s := fleet.New()
	for _, mc := range members {
		s.Upsert(mc)
	}
	s.View()
	return s
}

// BenchmarkCycleSnapshot is one scheduling cycle as the scheduler runs it with
// the fleet snapshot: take the view, read its disconnected members, schedule,
// asking for the decisions the policy snapshot records.
func BenchmarkCycleSnapshot(b *testing.B) {
	policies := benchPolicies()
	// PickN-zone asks for one zone's prod clusters (8 % of the fleet): the
	// label index names them, and the cycle filters only those.
	zone := policies["PickN"].DeepCopy()
	zone.Affinity.ClusterAffinity.RequiredDuringSchedulingIgnoredDuringExecution.ClusterSelectorTerms[0].LabelSelector.MatchLabels["zone"] = "zone-1"
	zone.TopologySpreadConstraints[0].TopologyKey = "region"
	policies["PickN-zone"] = zone
	for _, kind := range []string{"PickN", "PickN-zone", "PickAll"} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/members=%d", kind, n), func(b *testing.B) {
				s := snapshotOf(b, benchMembers(n))
				fw := plugins.NewFramework(framework.Options{})
				rnd := rand.New(rand.NewSource(1))
				b.ReportAllocs()
				defer reportCPU(b, cpuTime())
				for b.Loop() {
					v := s.View()
					_ = len(v.Disconnected)
					in := framework.CycleInput{PlacementName: "bench", Policy: policies[kind], Fleet: v.Fleet, Now: ft.Now, Rand: rnd,
						MaxUnselectedDecisions: 20} // as the scheduler asks (scheduler.MaxUnselectedDecisions)
					if _, err := fw.RunCycle(b.Context(), in); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkUpdate is the cost of one member changing in a fleet of 10 000: the
// event alone (a label change; a heartbeat, which changes nothing the scheduler
// reads), and the event with the next view built, which the first cycle after
// it pays.
func BenchmarkUpdate(b *testing.B) {
	const n = 10000
	members := benchMembers(n)
	changed := make([]*clusterv1beta1.MemberCluster, n)
	for i, mc := range members {
		changed[i] = mc.DeepCopy()
		changed[i].Labels["rack"] = "r1"
	}
	heartbeat := make([]*clusterv1beta1.MemberCluster, n)
	for i, mc := range members {
		heartbeat[i] = mc.DeepCopy()
		heartbeat[i].ResourceVersion = "2"
		heartbeat[i].Status.LastHeartbeatTime = ft.Ptr(heartbeat[i].Status.Conditions[0].LastTransitionTime)
	}
	// Each iteration changes the next member, back and forth.
	version := func(i int) *clusterv1beta1.MemberCluster {
		if i/n%2 == 0 {
			return changed[i%n]
		}
		return members[i%n]
	}
	b.Run(fmt.Sprintf("label/members=%d", n), func(b *testing.B) {
		s := snapshotOf(b, members)
		b.ReportAllocs()
		defer reportCPU(b, cpuTime())
		i := 0
		for b.Loop() {
			s.Upsert(version(i))
			i++
		}
	})
	b.Run(fmt.Sprintf("label+view/members=%d", n), func(b *testing.B) {
		s := snapshotOf(b, members)
		b.ReportAllocs()
		defer reportCPU(b, cpuTime())
		i := 0
		for b.Loop() {
			s.Upsert(version(i))
			s.View()
			i++
		}
	})
	b.Run(fmt.Sprintf("heartbeat/members=%d", n), func(b *testing.B) {
		s := snapshotOf(b, members)
		b.ReportAllocs()
		defer reportCPU(b, cpuTime())
		i := 0
		for b.Loop() {
			s.Upsert(heartbeat[i%n])
			i++
		}
	})
}

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

package tunnelserver

import (
	"fmt"
	"testing"
	"time"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

func TestPropertiesChanged(t *testing.T) {
	base := steadyProperties
	with := func(f func(p *tunnel.ClusterProperties)) tunnel.ClusterProperties {
		p := base()
		f(&p)
		return p
	}
	for _, tc := range []struct {
		name string
		now  tunnel.ClusterProperties
		want string // "" means no write
	}{
		{"identical", base(), ""},
		{"cpu within 5%", with(func(p *tunnel.ClusterProperties) { p.Available = map[string]string{"cpu": "6200m", "memory": "30Gi"} }), ""},
		{"memory within 5%, other notation", with(func(p *tunnel.ClusterProperties) {
			p.Available = map[string]string{"cpu": "6", "memory": "31457280Ki"} // 30Gi exactly
		}), ""},
		{"cpu beyond 5%", with(func(p *tunnel.ClusterProperties) { p.Available = map[string]string{"cpu": "5", "memory": "30Gi"} }), "available/cpu"},
		{"memory beyond 5%", with(func(p *tunnel.ClusterProperties) { p.Allocatable = map[string]string{"cpu": "8", "memory": "16Gi"} }), "allocatable/memory"},
		{"a resource appears", with(func(p *tunnel.ClusterProperties) { p.Capacity = map[string]string{"pods": "110"} }), "capacity/pods"},
		{"a resource disappears", with(func(p *tunnel.ClusterProperties) { p.Available = map[string]string{"cpu": "6"} }), "available/memory"},
		{"from zero", with(func(p *tunnel.ClusterProperties) {
			p.Available = map[string]string{"cpu": "6", "memory": "30Gi", "gpu": "0"}
		}), "available/gpu"},
		{"one node more", with(func(p *tunnel.ClusterProperties) { p.NodeCount = 3 }), "node-count"},
		{"version", with(func(p *tunnel.ClusterProperties) { p.KubernetesVersion = "v1.37.2" }), "kubernetes-version"},
		{"provider", with(func(p *tunnel.ClusterProperties) { p.Provider = "kwok" }), "provider"},
		{"unhealthy", with(func(p *tunnel.ClusterProperties) { p.APIServerHealthy = false }), "health"},
		{"a message while healthy", with(func(p *tunnel.ClusterProperties) { p.APIServerMessage = "slow" }), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed, what := propertiesChanged(base(), tc.now)
			if changed != (tc.want != "") || what != tc.want {
				t.Fatalf("propertiesChanged = %v, %q; want %q", changed, what, tc.want)
			}
		})
	}
	unhealthy := with(func(p *tunnel.ClusterProperties) { p.APIServerHealthy, p.APIServerMessage = false, "down" })
	if changed, _ := propertiesChanged(unhealthy, with(func(p *tunnel.ClusterProperties) { p.APIServerHealthy, p.APIServerMessage = false, "timeout" })); !changed {
		t.Fatal("a new message while unhealthy must be written")
	}
}

// Steady heartbeats whose properties move within the thresholds write nothing,
// however many; a property beyond its threshold is written at once, and the
// status then holds the new value.
func TestSteadyHeartbeatsWriteNothingUntilAPropertyCrossesItsThreshold(t *testing.T) {
	addr := startServer(t)
	cert, pool := joinMember(t, addr, "steady")
	s := connect(t, addr, "steady", cert, pool)
	testenv.Eventually(t, 10*time.Second, func() error {
		mc := member(t, "steady")
		if !conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionHealthy) || mc.Status.ResourceUsage.Available.Cpu().String() != "6" {
			return fmt.Errorf("status: %+v", mc.Status)
		}
		return nil
	})
	rv := member(t, "steady").ResourceVersion
	// 20 heartbeats (twice the session's burst, so the hub's rate limit paces
	// them too), available CPU wandering within 5% of the written 6.
	const n = 20
	for seq := uint64(2); seq < 2+n; seq++ {
		p := steadyProperties()
		p.Available = map[string]string{"cpu": fmt.Sprintf("%dm", 5800+int(seq%5)*100), "memory": "30Gi"}
		heartbeatWith(t, s, seq, p)
	}
	if got := member(t, "steady").ResourceVersion; got != rv {
		t.Fatalf("%d heartbeats within the thresholds wrote the MemberCluster (resourceVersion %s -> %s)", n, rv, got)
	}
	// Memory available drops by 20%: written.
	p := steadyProperties()
	p.Available = map[string]string{"cpu": "6", "memory": "24Gi"}
	heartbeatWith(t, s, 100, p)
	testenv.Eventually(t, 10*time.Second, func() error {
		mc := member(t, "steady")
		if got := mc.Status.ResourceUsage.Available.Memory().String(); got != "24Gi" {
			return fmt.Errorf("available memory %s, want 24Gi", got)
		}
		if got := mc.Status.Properties[clusterv1beta1.PropertyAvailableMemory].Value; got != "24Gi" {
			return fmt.Errorf("property %s = %s, want 24Gi", clusterv1beta1.PropertyAvailableMemory, got)
		}
		return nil
	})
	// And compared with what was written since: the same values again cost nothing.
	rv = member(t, "steady").ResourceVersion
	for seq := uint64(101); seq < 106; seq++ {
		heartbeatWith(t, s, seq, p)
	}
	if got := member(t, "steady").ResourceVersion; got != rv {
		t.Fatalf("heartbeats repeating the written values wrote the MemberCluster (resourceVersion %s -> %s)", rv, got)
	}
	// A reconnecting member that reports what the status holds costs the
	// connection's write only: its properties keep their observation time.
	observed := member(t, "steady").Status.Properties[clusterv1beta1.PropertyAvailableMemory].ObservationTime
	_ = s.Close()
	testenv.Eventually(t, 10*time.Second, func() error {
		if conditions.IsTrue(member(t, "steady").Status.Conditions, clusterv1beta1.ConditionAgentConnected) {
			return fmt.Errorf("still connected")
		}
		return nil
	})
	s2 := dial(t, addr, "steady", cert, pool)
	if err := s2.Work().Send(tunnel.WorkInventory{}); err != nil {
		t.Fatal(err)
	}
	heartbeatWith(t, s2, 1, p)
	testenv.Eventually(t, 10*time.Second, func() error {
		mc := member(t, "steady")
		if !conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionHealthy) {
			return fmt.Errorf("not healthy again: %+v", mc.Status.Conditions)
		}
		return nil
	})
	rv = member(t, "steady").ResourceVersion
	heartbeatWith(t, s2, 2, p)
	mc := member(t, "steady")
	if got := mc.Status.Properties[clusterv1beta1.PropertyAvailableMemory].ObservationTime; !got.Equal(observed) {
		t.Errorf("the unchanged property was written again on reconnect: observed %v, now %v", observed, got)
	}
	if mc.ResourceVersion != rv {
		t.Errorf("a heartbeat after reconnecting wrote the MemberCluster (resourceVersion %s -> %s)", rv, mc.ResourceVersion)
	}
}

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

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/tools/localfleet/balancer"
	"github.com/flotilla-io/flotilla/tools/localfleet/fleet"
)

// Each agent holds exactly one TCP connection to the hub (on a kwok fleet
// with a tunnel balancer, to the balancer's listener for its member).
func TestAgentHoldsExactlyOneConnectionToTheHub(t *testing.T) {
	st, err := provider.State()
	if err != nil {
		t.Fatal(err)
	}
	_, hubPort, err := net.SplitHostPort(st.HubTunnelAddress)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range allMembers {
		port := hubPort
		if st.BalancerControlAddress != "" && !provider.OnKind() {
			addr, err := balancer.Client{Address: st.BalancerControlAddress}.MemberAddress(context.Background(), m, "")
			if err != nil {
				t.Fatal(err)
			}
			if _, port, err = net.SplitHostPort(addr); err != nil {
				t.Fatal(err)
			}
		}
		count := agentConnections(t, st, m, port)
		framework.Eventually(t, 30*time.Second, func() error {
			n, err := count()
			if err != nil {
				return err
			}
			if n != 1 {
				return fmt.Errorf("agent of %s holds %d connections to the hub, want 1", m, n)
			}
			return nil
		})
	}
}

// agentConnections returns a counter of a member's agent's established TCP
// connections to the hub's port: of the local process on kwok, of the agent
// pod's process, read in its node, on kind.
func agentConnections(t *testing.T, st *fleet.State, member, port string) func() (int, error) {
	t.Helper()
	if provider.OnKind() {
		return func() (int, error) {
			out, err := provider.NodeExec(context.Background(), member, "bash", "-c",
				`pid=$(pgrep -xo agent) && for fd in /proc/$pid/fd/*; do readlink "$fd"; done && echo --- && cat /proc/$pid/net/tcp /proc/$pid/net/tcp6 2>/dev/null`)
			if err != nil {
				return 0, err
			}
			fds, tables, _ := strings.Cut(out, "---\n")
			return countEstablished(strings.Split(fds, "\n"), tables, port)
		}
	}
	p, ok := st.Processes["agent/"+member]
	if !ok {
		t.Fatalf("no agent process recorded for %s", member)
	}
	return func() (int, error) { return establishedTo(p.PID, port) }
}

// establishedTo counts the process's established TCP connections to a port.
func establishedTo(pid int, port string) (int, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, err
	}
	var targets []string
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name())); err == nil {
			targets = append(targets, target)
		}
	}
	var tables strings.Builder
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err == nil {
			tables.Write(data)
		}
	}
	return countEstablished(targets, tables.String(), port)
}

// countEstablished counts the rows of /proc/net/tcp tables that are established
// connections to port from one of the sockets among fd link targets.
func countEstablished(fdTargets []string, tables, port string) (int, error) {
	inodes := map[string]bool{}
	for _, target := range fdTargets {
		if strings.HasPrefix(target, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	want, err := strconv.Atoi(port)
	if err != nil {
		return 0, err
	}
	count := 0
	sc := bufio.NewScanner(strings.NewReader(tables))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "01" { // 01 = ESTABLISHED
			continue
		}
		remote := fields[2]
		i := strings.LastIndexByte(remote, ':')
		p, err := strconv.ParseInt(remote[i+1:], 16, 32)
		if err == nil && int(p) == want && inodes[fields[9]] {
			count++
		}
	}
	return count, nil
}

// Heartbeats live in the hub's memory: over a minute of heartbeats the hub
// writes a MemberCluster only when a property moves beyond its threshold.
func TestSteadyHeartbeatsDoNotWriteMemberClusterEachTime(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	framework.Eventually(t, time.Minute, framework.MemberCondition(ctx, hub, "member-1", clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue))
	wc, err := framework.WatchClient(provider.HubKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &clusterv1beta1.MemberClusterList{}, client.MatchingFields{"metadata.name": "member-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const window = time.Minute
	mc := &clusterv1beta1.MemberCluster{}
	if err := hub.Get(ctx, types.NamespacedName{Name: "member-1"}, mc); err != nil {
		t.Fatal(err)
	}
	period := time.Duration(mc.Spec.HeartbeatPeriodSeconds) * time.Second
	updates := 0
	deadline := time.After(window)
loop:
	for {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Modified {
				updates++
			}
		case <-deadline:
			break loop
		}
	}
	heartbeats := int(window / period)
	// The hub writes status on changes only: the member's available resources
	// may move while other tests place workloads on it, and the membership
	// controller may write its labels once.
	t.Logf("%d MemberCluster updates during %s of heartbeats every %s (%d heartbeats)", updates, window, period, heartbeats)
	if updates > 4 || updates >= heartbeats {
		t.Fatalf("the hub wrote member-1 %d times in %s with a heartbeat every %s: status must not be written per heartbeat", updates, window, period)
	}
}

// Stopping an agent makes its cluster AgentConnected=False within three
// heartbeat periods; starting it again reconnects it without reapplying what it
// already holds.
func TestStoppedAgentIsNoticedAndReconnectsWithoutReapplying(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-reconnect")
	placeNamespace(t, hub, "e2e-reconnect", "e2e-reconnect", nil)
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-reconnect", allMembers...))

	m2 := memberClient(t, "member-2")
	key := types.NamespacedName{Namespace: "e2e-reconnect", Name: "settings"}
	before := &corev1.ConfigMap{}
	if err := m2.Get(ctx, key, before); err != nil {
		t.Fatal(err)
	}
	mc := &clusterv1beta1.MemberCluster{}
	if err := hub.Get(ctx, types.NamespacedName{Name: "member-2"}, mc); err != nil {
		t.Fatal(err)
	}
	period := time.Duration(mc.Spec.HeartbeatPeriodSeconds) * time.Second

	stopped := time.Now()
	if err := provider.StopAgent(ctx, "member-2"); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 3*period, framework.MemberCondition(ctx, hub, "member-2", clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse))
	t.Logf("AgentConnected=False %s after the agent stopped (heartbeat period %s)", time.Since(stopped).Round(100*time.Millisecond), period)

	if err := provider.StartAgent(ctx, "member-2"); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, framework.MemberCondition(ctx, hub, "member-2", clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue))
	framework.Eventually(t, time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-reconnect", allMembers...))
	after := &corev1.ConfigMap{}
	if err := m2.Get(ctx, key, after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Fatalf("the ConfigMap was rewritten on reconnect (resourceVersion %s -> %s): nothing should be reapplied", before.ResourceVersion, after.ResourceVersion)
	}
}

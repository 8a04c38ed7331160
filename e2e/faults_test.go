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

// The fault-injection suite: the tunnel balancer in front of the hub (the
// fleet runs with Options.TunnelBalancer) cuts, resets and delays the agents'
// connections; hub replicas are killed mid-rollout and while they hold
// sessions; a flood of unauthenticated connections hits the tunnel port.

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/yamux"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/join"
	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
	"github.com/flotilla-io/flotilla/tools/localfleet/fleet"
)

// hubMetric sums a metric's samples (every label set) on a hub replica.
func hubMetric(r fleet.HubReplica, name string) (float64, error) {
	resp, err := http.Get("http://" + r.MetricsAddress + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sum, found := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+" ") && !strings.HasPrefix(line, name+"{") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("metric line %q: %w", line, err)
		}
		sum += v
		found = true
	}
	if !found {
		return 0, fmt.Errorf("replica %s exposes no %s", r.Name, name)
	}
	return sum, sc.Err()
}

// replicas returns the fleet's hub replicas and, by role, their processes.
func replicas(t *testing.T) ([]fleet.HubReplica, map[string]fleet.Process) {
	t.Helper()
	st, err := provider.State()
	if err != nil {
		t.Fatal(err)
	}
	return st.HubReplicas, st.Processes
}

// rssBytes is a process's resident set size.
func rssBytes(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// allConnected checks that every member is AgentConnected=True through a
// session newer than since (0: any).
func allConnected(ctx context.Context, hub client.Client, since map[string]int64) func() error {
	return func() error {
		for _, m := range allMembers {
			mc := &clusterv1beta1.MemberCluster{}
			if err := hub.Get(ctx, types.NamespacedName{Name: m}, mc); err != nil {
				return err
			}
			if !conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) || mc.Status.AgentSession == nil {
				return fmt.Errorf("member %s is not connected", m)
			}
			if mc.Status.AgentSession.Generation <= since[m] {
				return fmt.Errorf("member %s has not reconnected yet", m)
			}
		}
		return nil
	}
}

// sessions returns each member's current session.
func sessions(t *testing.T, hub client.Client) map[string]clusterv1beta1.AgentSession {
	t.Helper()
	out := map[string]clusterv1beta1.AgentSession{}
	for _, m := range allMembers {
		mc := &clusterv1beta1.MemberCluster{}
		if err := hub.Get(context.Background(), types.NamespacedName{Name: m}, mc); err != nil {
			t.Fatal(err)
		}
		if mc.Status.AgentSession != nil {
			out[m] = *mc.Status.AgentSession
		}
	}
	return out
}

func generations(s map[string]clusterv1beta1.AgentSession) map[string]int64 {
	out := map[string]int64{}
	for m, as := range s {
		out[m] = as.Generation
	}
	return out
}

// With two hub replicas: a replica that dies hands the sessions it held to the
// other (the agents reconnect through the balancer within seconds), and a
// member whose agent died with the replica is recorded disconnected by the
// leader within three heartbeat periods plus the replica Lease duration.
func TestAHubReplicaThatDiesHandsItsMembersToTheOther(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	lb, err := provider.Balancer()
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, allConnected(ctx, hub, nil))
	if err := provider.StartHubReplica(ctx, 1); err != nil {
		t.Fatalf("failed to add a second hub replica: %v", err)
	}
	t.Cleanup(func() {
		rs, procs := replicas(t)
		if _, ok := procs[rs[0].Role]; !ok {
			if err := provider.StartHubReplica(ctx, 0); err != nil {
				t.Errorf("failed to restart hub replica 0: %v", err)
			}
		}
		if err := provider.RemoveHubReplica(ctx, 1); err != nil {
			t.Errorf("failed to remove hub replica 1: %v", err)
		}
		_ = provider.StartAgent(ctx, "member-3")
		framework.Eventually(t, 2*time.Minute, allConnected(ctx, hub, nil))
	})
	rs, procs := replicas(t)

	// The replica that is not the leader will die: the leader's sweep then
	// runs without waiting for a new leader.
	var doomed, survivor fleet.HubReplica
	framework.Eventually(t, time.Minute, func() error {
		for i, r := range rs {
			v, err := hubMetric(r, "leader_election_master_status")
			if err != nil {
				return err
			}
			if v == 1 {
				survivor, doomed = r, rs[1-i]
				return nil
			}
		}
		return fmt.Errorf("no replica leads yet")
	})
	// Every agent on the doomed replica: only it behind the balancer, then cut.
	if err := lb.SetBackends(ctx, []string{doomed.TunnelAddress}); err != nil {
		t.Fatal(err)
	}
	before := generations(sessions(t, hub))
	if _, err := lb.Cut(ctx); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, allConnected(ctx, hub, before))
	for m, as := range sessions(t, hub) {
		if as.HubReplica != doomed.Name {
			t.Fatalf("member %s is on %s, want %s", m, as.HubReplica, doomed.Name)
		}
	}
	if err := lb.SetBackends(ctx, []string{doomed.TunnelAddress, survivor.TunnelAddress}); err != nil {
		t.Fatal(err)
	}
	before = generations(sessions(t, hub))

	// member-3's agent dies together with the replica (SIGKILL: no goodbye).
	killed := time.Now()
	_ = syscall.Kill(-procs["agent/member-3"].PID, syscall.SIGKILL)
	if err := provider.StopHubReplica(ctx, indexOf(rs, doomed), true); err != nil {
		t.Fatal(err)
	}
	if err := provider.StopAgent(ctx, "member-3"); err != nil {
		t.Fatal(err)
	}
	mc := &clusterv1beta1.MemberCluster{}
	if err := hub.Get(ctx, types.NamespacedName{Name: "member-3"}, mc); err != nil {
		t.Fatal(err)
	}
	period := time.Duration(mc.Spec.HeartbeatPeriodSeconds) * time.Second
	const leaseDuration = 6 * time.Second // --replica-lease-duration in TestMain
	var moved time.Duration
	framework.Eventually(t, 30*time.Second, func() error {
		for _, m := range []string{"member-1", "member-2"} {
			mc := &clusterv1beta1.MemberCluster{}
			if err := hub.Get(ctx, types.NamespacedName{Name: m}, mc); err != nil {
				return err
			}
			as := mc.Status.AgentSession
			if as == nil || as.HubReplica != survivor.Name || as.Generation <= before[m] ||
				!conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) {
				return fmt.Errorf("member %s is not connected to %s yet (session %+v)", m, survivor.Name, as)
			}
		}
		moved = time.Since(killed)
		return nil
	})
	t.Logf("the members of the dead replica were connected to %s %s after it died", survivor.Name, moved.Round(100*time.Millisecond))
	bound := 3*period + leaseDuration
	framework.Eventually(t, bound+10*time.Second, framework.MemberCondition(ctx, hub, "member-3", clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse))
	lost := time.Since(killed)
	t.Logf("member-3, whose agent died with its replica, was AgentConnected=False %s after (bound: 3 heartbeat periods + lease = %s)", lost.Round(100*time.Millisecond), bound)
	if lost > bound+5*time.Second {
		t.Errorf("member-3 was recorded disconnected %s after its replica died, want about %s at most", lost, bound)
	}
}

func indexOf(rs []fleet.HubReplica, r fleet.HubReplica) int {
	for i := range rs {
		if rs[i].Name == r.Name {
			return i
		}
	}
	return -1
}

// A hub killed in the middle of a rollout and started again finishes it:
// every object lands on every member, once, and stays put.
func TestAHubKilledMidRolloutFinishesItWithNothingLostOrAppliedTwice(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const ns, objects = "e2e-killed-hub", 30
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := hub.Create(ctx, nsObj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Delete(ctx, nsObj) })
	for i := range objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%02d", i)}, Data: map[string]string{"i": strconv.Itoa(i)}}
		if err := hub.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	placeNamespace(t, hub, ns, ns, nil)
	// Kill the hub as soon as the rollout has begun on a member.
	framework.Eventually(t, time.Minute, func() error {
		for _, m := range allMembers {
			if err := onMember(t, m, &corev1.Namespace{}, types.NamespacedName{Name: ns}, true)(); err == nil {
				return nil
			}
		}
		return fmt.Errorf("the rollout has not reached any member yet")
	})
	if err := provider.StopHubReplica(ctx, 0, true); err != nil {
		t.Fatal(err)
	}
	t.Log("killed the hub mid-rollout")
	if err := provider.StartHubReplica(ctx, 0); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, ns, allMembers...))
	versions := map[string]string{}
	for _, m := range allMembers {
		list := &corev1.ConfigMapList{}
		if err := memberClient(t, m).List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, cm := range list.Items {
			if !strings.HasPrefix(cm.Name, "cm-") {
				continue
			}
			got++
			if want := strings.TrimLeft(strings.TrimPrefix(cm.Name, "cm-"), "0"); cm.Data["i"] != want && !(want == "" && cm.Data["i"] == "0") {
				t.Errorf("%s/%s on %s holds i=%q", ns, cm.Name, m, cm.Data["i"])
			}
			versions[m+"/"+cm.Name] = cm.ResourceVersion
		}
		if got != objects {
			t.Errorf("%s holds %d of the %d ConfigMaps", m, got, objects)
		}
	}
	// Nothing is applied again once the rollout is done.
	framework.Consistently(t, 10*time.Second, func() error {
		for _, m := range allMembers {
			list := &corev1.ConfigMapList{}
			if err := memberClient(t, m).List(ctx, list, client.InNamespace(ns)); err != nil {
				return err
			}
			for _, cm := range list.Items {
				if v, ok := versions[m+"/"+cm.Name]; ok && v != cm.ResourceVersion {
					return fmt.Errorf("%s/%s on %s was written again (resourceVersion %s -> %s)", ns, cm.Name, m, v, cm.ResourceVersion)
				}
			}
		}
		return nil
	})
}

// The balancer cuts (resets) every agent connection 100 times, sometimes with
// delays: every agent reconnects, and the hub holds no leaked session or
// goroutine afterwards.
func TestAHundredCutsLeakNoSessionAndEveryAgentReconnects(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	lb, err := provider.Balancer()
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, allConnected(ctx, hub, nil))
	rs, _ := replicas(t)
	r := rs[0]
	baseline, err := hubMetric(r, "go_goroutines")
	if err != nil {
		t.Fatal(err)
	}
	before := generations(sessions(t, hub))
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	cut := 0
	for i := range 100 {
		if i%10 == 5 {
			_ = lb.Delay(ctx, time.Duration(50+rng.Intn(200))*time.Millisecond)
		}
		if i%10 == 8 {
			_ = lb.Delay(ctx, 0)
		}
		// Cut once an agent is back (or after a while anyway: some cuts
		// then hit connections in their handshake).
		wait := time.Now().Add(2 * time.Second)
		for time.Now().Before(wait) {
			if st, err := lb.Status(ctx); err == nil && st.Connections > 0 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(time.Duration(rng.Intn(300)) * time.Millisecond)
		n, err := lb.Cut(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cut += n
	}
	if err := lb.Delay(ctx, 0); err != nil {
		t.Fatal(err)
	}
	t.Logf("100 cuts reset %d connections", cut)
	// Most cuts find a session (the agents redial within 2s); a few may hit
	// connections in their handshake or nothing on a slow machine.
	if cut < 50 {
		t.Errorf("100 cuts reset only %d connections: the agents did not come back between cuts", cut)
	}
	start := time.Now()
	framework.Eventually(t, 2*time.Minute, allConnected(ctx, hub, before))
	t.Logf("every agent reconnected %s after the last cut", time.Since(start).Round(100*time.Millisecond))
	framework.Eventually(t, time.Minute, func() error {
		st, err := lb.Status(ctx)
		if err != nil {
			return err
		}
		n, err := hubMetric(r, "flotilla_tunnel_sessions")
		if err != nil {
			return err
		}
		if n != float64(len(allMembers)) || st.Connections != len(allMembers) {
			return fmt.Errorf("the hub holds %v sessions and the balancer %d connections, want %d each", n, st.Connections, len(allMembers))
		}
		return nil
	})
	framework.Eventually(t, time.Minute, func() error {
		g, err := hubMetric(r, "go_goroutines")
		if err != nil {
			return err
		}
		if g > baseline+40 {
			return fmt.Errorf("the hub runs %v goroutines, %v before the cuts", g, baseline)
		}
		t.Logf("hub goroutines: %v before the cuts, %v after", baseline, g)
		return nil
	})
}

// floodConn opens a connection to the hub's tunnel port with cfg (no
// certificate, or a member's), then opens streams and writes into them, never
// a valid frame, until stop.
func floodConn(addr string, cfg *tls.Config, streams int, stop <-chan struct{}) {
	raw, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return
	}
	defer raw.Close()
	conn := tls.Client(raw, cfg)
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := conn.Handshake(); err != nil {
		return
	}
	ycfg := yamux.DefaultConfig()
	ycfg.LogOutput = io.Discard
	ycfg.StreamOpenTimeout = 0
	mux, err := yamux.Client(conn, ycfg)
	if err != nil {
		return
	}
	defer mux.Close()
	junk := make([]byte, 32<<10)
	var wg sync.WaitGroup
	for range streams {
		st, err := mux.OpenStream()
		if err != nil {
			break
		}
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := st.Write(junk); err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
}

// floodRSS runs eight flooding connections with cfg, 250 streams each, for
// ten seconds against a hub replica and returns its RSS before and at the
// peak.
func floodRSS(t *testing.T, r fleet.HubReplica, pid int, cfg *tls.Config) (before, peak int64) {
	t.Helper()
	before, err := rssBytes(pid)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { floodConn(r.TunnelAddress, cfg.Clone(), 250, stop) })
	}
	peak = before
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if v, err := rssBytes(pid); err == nil && v > peak {
			peak = v
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	return before, peak
}

// Eight connections without a client certificate, opening 250 streams each,
// leave the hub's memory within 64 MiB of where it was, and the fleet keeps
// working. So do eight connections with a member's certificate that never say
// hello.
func TestAnUnauthenticatedFloodLeavesTheHubMemoryBoundedAndTheFleetWorking(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	rs, procs := replicas(t)
	r := rs[0]
	pid := procs[r.Role].PID
	before, peak := floodRSS(t, r, pid, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{tunnel.ALPNTunnel}}) //nolint:gosec // a hostile client
	t.Logf("hub RSS under 8 connections x 250 streams without a certificate: %d MiB before, %d MiB at the peak (+%d MiB)", before>>20, peak>>20, (peak-before)>>20)
	if peak-before > 64<<20 {
		t.Errorf("the flood grew the hub's RSS by %d MiB, want at most 64 MiB", (peak-before)>>20)
	}

	// The same with member-1's certificate: past TLS, never a hello.
	cfg, err := clientcmd.BuildConfigFromFlags("", provider.MemberKubeconfig("member-1"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := join.LoadIdentity(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := id.TLSConfig(tunnel.ALPNTunnel)
	if err != nil {
		t.Fatal(err)
	}
	before, peak = floodRSS(t, r, pid, tlsCfg)
	t.Logf("hub RSS under 8 connections x 250 streams with a member certificate and no hello: %d MiB before, %d MiB at the peak (+%d MiB)", before>>20, peak>>20, (peak-before)>>20)
	if peak-before > 64<<20 {
		t.Errorf("the flood grew the hub's RSS by %d MiB, want at most 64 MiB", (peak-before)>>20)
	}

	// The fleet keeps working.
	framework.Eventually(t, time.Minute, allConnected(ctx, hub, nil))
	appNamespace(t, hub, "e2e-after-flood")
	placeNamespace(t, hub, "e2e-after-flood", "e2e-after-flood", nil)
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-after-flood", allMembers...))
}

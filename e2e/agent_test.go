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
)

// Each agent holds exactly one TCP connection to the hub.
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
		p, ok := st.Processes["agent/"+m]
		if !ok {
			t.Fatalf("no agent process recorded for %s", m)
		}
		framework.Eventually(t, 30*time.Second, func() error {
			n, err := establishedTo(p.PID, hubPort)
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

// establishedTo counts the process's established TCP connections to a port.
func establishedTo(pid int, port string) (int, error) {
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, err
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if err == nil && strings.HasPrefix(target, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	want, err := strconv.Atoi(port)
	if err != nil {
		return 0, err
	}
	count := 0
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
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
		f.Close()
	}
	return count, nil
}

// Heartbeats live in the hub's memory: over a minute of heartbeats the hub
// writes a MemberCluster only at the coarse refresh interval.
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
	// The e2e hub refreshes status every 20s: at most 3 refreshes in a minute,
	// plus one for the membership controller's labels at worst.
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

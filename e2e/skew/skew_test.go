//go:build skew

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

package skew

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

const (
	placementName = "skew-app"
	appNamespace  = "skew-app"
	// settle bounds every wait for the fleet to converge.
	settle = 2 * time.Minute
)

// TestSkewAndUpgrade runs one fleet through the versions in order; each step
// needs the state the previous one left.
func TestSkewAndUpgrade(t *testing.T) {
	hub, err := framework.Client(provider.HubKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		run  func(t *testing.T, hub client.Client)
	}{
		{"a fleet of N-1 places a namespace on every member, a rolling update and a staged run", placeOnN1},
		{"the hub upgraded in place keeps placements Available, re-sends no Work and rewrites no member object", upgradeHub},
		{"the rolling update and the staged run that were in progress continue on hub N", rolloutAndRunContinue},
		{"hub N with agents N-1 updates a placement and reports its status", updateAndReport("green")},
		{"hub N with agents N-1: a cluster joins and leaves", joinAndLeave},
		{"hub N with agents N-1: a PickN placement leaves a member whose agent stopped", failover},
		{"agents upgraded one at a time keep placements Available, get no Work again and rewrite no member object", upgradeAgents},
		{"agents N restarted one at a time keep placements Available, get no Work again and rewrite no member object", restartAgents},
		{"an agent beyond the supported skew is refused in one line on both sides", refuseTooNewAgent},
		{"hub N-1 with agents N updates a placement and reports its status", downgradeHubThenUpdate},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, hub) }) {
			t.Fatalf("stopping: %q failed and the later steps need its state", s.name)
		}
	}
}

func memberClient(t *testing.T, member string) client.Client {
	t.Helper()
	c, err := framework.Client(provider.MemberKubeconfig(member))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func placeOnN1(t *testing.T, hub client.Client) {
	ctx := t.Context()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNamespace}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: "settings"}, Data: map[string]string{"color": "blue"}},
	} {
		if err := hub.Create(ctx, o); err != nil {
			t.Fatalf("create %s: %v", o.GetName(), err)
		}
	}
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: placementName},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Group: "", Version: "v1", Kind: "Namespace", Name: appNamespace}},
			Policy:            staysOnLostClusters(),
		},
	}
	if err := hub.Create(ctx, crp); err != nil {
		t.Fatalf("create placement: %v", err)
	}
	framework.Eventually(t, settle, framework.PlacementConditionsTrue(ctx, hub, placementName, members...))
	framework.Eventually(t, settle, colorOnMembers(t, "blue"))
	placeRolling(t, hub)
	startStagedRun(t, hub)
}

// colorOnMembers checks the placed ConfigMap's data on every member.
func colorOnMembers(t *testing.T, color string) func() error {
	return func() error {
		for _, m := range members {
			cm := &corev1.ConfigMap{}
			if err := memberClient(t, m).Get(t.Context(), types.NamespacedName{Namespace: appNamespace, Name: "settings"}, cm); err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			if cm.Data["color"] != color {
				return fmt.Errorf("%s: color is %q, want %q", m, cm.Data["color"], color)
			}
		}
		return nil
	}
}

// watchedObjects are the placed objects whose resourceVersions the upgrade
// steps compare: objects only Flotilla writes (no controller on the member
// updates them), so a changed resourceVersion is a rewrite by Flotilla.
var watchedObjects = []struct {
	kind, namespace, name string
}{
	{"Namespace", "", appNamespace},
	{"ConfigMap", appNamespace, "settings"},
	{"Namespace", "", rollingName},
	{"ConfigMap", rollingName, "settings"},
	{"Namespace", "", stagedName},
	{"ConfigMap", stagedName, "settings"},
	{"Namespace", "", pickNName},
	{"ConfigMap", pickNName, "settings"},
}

// memberVersions records the resourceVersions of the watched objects that
// exist on every member.
func memberVersions(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range members {
		c := memberClient(t, m)
		for _, w := range watchedObjects {
			var o client.Object = &corev1.ConfigMap{}
			if w.kind == "Namespace" {
				o = &corev1.Namespace{}
			}
			err := c.Get(t.Context(), types.NamespacedName{Namespace: w.namespace, Name: w.name}, o)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			out[m+"/"+w.kind+"/"+w.namespace+"/"+w.name] = o.GetResourceVersion()
		}
	}
	return out
}

// touched lists the objects whose resourceVersion changed.
func touched(before, after map[string]string) []string {
	var out []string
	for k, v := range before {
		if after[k] != v {
			out = append(out, k)
		}
	}
	return out
}

// availableNow lists what is Available now: "placement" for a placement
// whose summary conditions are all True for its generation, and
// "placement/cluster" for each cluster whose Applied and Available are True.
func availableNow(ctx context.Context, hub client.Client) (map[string]bool, error) {
	list := &placementv1beta1.ClusterResourcePlacementList{}
	if err := hub.List(ctx, list); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, crp := range list.Items {
		all := len(crp.Status.PlacementStatuses) > 0
		for _, perCluster := range placementv1beta1.PerClusterConditionTypes() {
			c := conditions.Get(crp.Status.Conditions, perCluster)
			if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != crp.Generation {
				all = false
			}
		}
		if all {
			out[crp.Name] = true
		}
		for _, pcs := range crp.Status.PlacementStatuses {
			if conditions.IsTrue(pcs.Conditions, placementv1beta1.ConditionApplied) && conditions.IsTrue(pcs.Conditions, placementv1beta1.ConditionAvailable) {
				out[crp.Name+"/"+pcs.ClusterName] = true
			}
		}
	}
	return out, nil
}

// availability polls the placements until stop is called and reports how
// long, in total, anything that was Available when it started (availableNow:
// placements and their clusters) was not.
func availability(t *testing.T, hub client.Client) (stop func() time.Duration) {
	ctx := t.Context()
	before, err := availableNow(ctx, hub)
	if err != nil {
		t.Fatal(err)
	}
	framework.Logf("watching the availability of %d placements and clusters", len(before))
	var (
		mu       sync.Mutex
		down     time.Duration
		done     = make(chan struct{})
		finished = make(chan struct{})
	)
	go func() {
		defer close(finished)
		last := time.Now()
		for {
			now, err := availableNow(ctx, hub)
			at := time.Now()
			var lost []string
			for k := range before {
				if err == nil && !now[k] {
					lost = append(lost, k)
				}
			}
			if len(lost) > 0 {
				mu.Lock()
				down += at.Sub(last)
				mu.Unlock()
				sort.Strings(lost)
				framework.Logf("not Available: %v", lost)
			}
			last = at
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return func() time.Duration {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return down
	}
}

// metric sums the samples of a Prometheus text metric whose labels contain
// every one of labels, from a process's /metrics.
func metric(t *testing.T, address, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + address + "/metrics")
	if err != nil {
		t.Fatalf("metrics of %s: %v", address, err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
lines:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue lines
			}
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}

// agentMetrics is the metrics address of a member's running agent.
func agentMetrics(t *testing.T, member string) string {
	t.Helper()
	st, err := provider.State()
	if err != nil {
		t.Fatal(err)
	}
	p := st.Processes["agent/"+member]
	for i, a := range p.Args {
		if a == "--metrics-bind-address" && i+1 < len(p.Args) {
			return p.Args[i+1]
		}
	}
	t.Fatalf("no metrics address for the agent of %s", member)
	return ""
}

// upsertsReceived counts the WorkUpsert frames a member's agent received.
func upsertsReceived(t *testing.T, member string) float64 {
	return metric(t, agentMetrics(t, member), "flotilla_tunnel_frames_total", `direction="received"`, `type="WorkUpsert"`)
}

func hubMetrics(t *testing.T) string {
	st, err := provider.State()
	if err != nil {
		t.Fatal(err)
	}
	return st.HubMetricsAddress
}

// agentsConnected checks that every member's agent holds a session.
func agentsConnected(ctx context.Context, hub client.Client) func() error {
	return func() error {
		for _, m := range members {
			if err := framework.MemberCondition(ctx, hub, m, clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue)(); err != nil {
				return err
			}
		}
		return nil
	}
}

// sessionsOnHub checks that the running hub holds a session of every member.
func sessionsOnHub(t *testing.T) func() error {
	return func() error {
		if n := metric(t, hubMetrics(t), "flotilla_tunnel_sessions"); n != float64(len(members)) {
			return fmt.Errorf("the hub holds %v sessions, want %d", n, len(members))
		}
		return nil
	}
}

func restartHub(t *testing.T, binary string) {
	t.Helper()
	ctx := t.Context()
	if err := provider.StopHubReplica(ctx, 0, false); err != nil {
		t.Fatalf("stop the hub: %v", err)
	}
	provider.SetHubBinary(binary)
	if err := provider.StartHubReplica(ctx, 0); err != nil {
		t.Fatalf("start the hub from %s: %v", binary, err)
	}
}

func upgradeHub(t *testing.T, hub client.Client) {
	ctx := t.Context()
	startRollingUpdate(t, hub)
	before := memberVersions(t)
	received := map[string]float64{}
	for _, m := range members {
		received[m] = upsertsReceived(t, m)
	}
	stop := availability(t, hub)
	// N's CRDs first: they must read what N-1 stored.
	if err := provider.ApplyHubManifests(ctx, current.Manifests); err != nil {
		t.Fatalf("apply N's hub manifests: %v", err)
	}
	restartHub(t, current.Hub)
	framework.Eventually(t, settle, agentsConnected(ctx, hub))
	framework.Eventually(t, settle, sessionsOnHub(t))
	// The new hub has synced every session (inventory, WorkSyncDone) and
	// written status once; give it a few heartbeats to misbehave.
	framework.Consistently(t, 5*time.Second, framework.PlacementConditionsTrue(ctx, hub, placementName, members...))
	down := stop()
	sent := metric(t, hubMetrics(t), "flotilla_tunnel_work_sent_total")
	var resent float64
	for _, m := range members {
		resent += upsertsReceived(t, m) - received[m]
	}
	changed := touched(before, memberVersions(t))
	framework.Logf("MEASURED hub upgrade: Work sent by the new hub %v, WorkUpserts agents received %v, member objects touched %d of %d %v, placements not Available for %s",
		sent, resent, len(changed), len(before), changed, down.Round(time.Millisecond))
	if img, err := imageOn(t, members[1]); err != nil || img != oldImage {
		t.Errorf("the rolling update moved on during the hub upgrade (%s runs %q, %v): lengthen rollingMinReady", members[1], img, err)
	}
	if _, err := approvalRequest(t, hub); err != nil {
		t.Errorf("the staged run's approval request after the hub upgrade: %v", err)
	}
	if err := stagedColorOn(t, members[1], "")(); err != nil {
		t.Errorf("the staged run went past its approval during the hub upgrade: %v", err)
	}
	if sent != 0 || resent != 0 {
		t.Errorf("the upgraded hub sent Work again: hub counted %v, agents received %v", sent, resent)
	}
	if len(changed) != 0 {
		t.Errorf("member objects rewritten by the upgrade: %v", changed)
	}
	if down > 0 {
		t.Errorf("the placement was not Available for %s during the hub upgrade", down)
	}
	// Stored objects read back through N's CRDs.
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := hub.Get(ctx, types.NamespacedName{Name: placementName}, crp); err != nil {
		t.Fatalf("read the placement N-1 stored through N's CRDs: %v", err)
	}
}

func updateAndReport(color string) func(t *testing.T, hub client.Client) {
	return func(t *testing.T, hub client.Client) {
		ctx := t.Context()
		cm := &corev1.ConfigMap{}
		if err := hub.Get(ctx, types.NamespacedName{Namespace: appNamespace, Name: "settings"}, cm); err != nil {
			t.Fatal(err)
		}
		cm.Data["color"] = color
		if err := hub.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, settle, colorOnMembers(t, color))
		framework.Eventually(t, settle, framework.PlacementConditionsTrue(ctx, hub, placementName, members...))
	}
}

func upgradeAgents(t *testing.T, hub client.Client) {
	// Agents from v0.4.0 on keep each applied Work in their records, so the
	// upgraded agent resumes them and the hub sends nothing again. (From the
	// first base, 428e200, whose records kept none, the hub sent each Work
	// once: VERSIONING.md.)
	cycleAgents(t, hub, current.Agent, "agent upgrade")
}

func restartAgents(t *testing.T, hub client.Client) {
	cycleAgents(t, hub, current.Agent, "agent restart")
}

// cycleAgents stops each member's agent and starts binary in its place, one
// member at a time, and measures for each: the Work the hub sent again, the
// member objects rewritten and how long anything Available was not (all
// none).
func cycleAgents(t *testing.T, hub client.Client, binary, what string) {
	ctx := t.Context()
	provider.SetAgentBinary(binary)
	for _, m := range members {
		before := memberVersions(t)
		sentBefore := metric(t, hubMetrics(t), "flotilla_tunnel_work_sent_total")
		stop := availability(t, hub)
		start := time.Now()
		if err := provider.StopAgent(ctx, m); err != nil {
			t.Fatalf("stop the agent of %s: %v", m, err)
		}
		if err := provider.StartAgent(ctx, m); err != nil {
			t.Fatalf("start agent N on %s: %v", m, err)
		}
		framework.Eventually(t, settle, agentsConnected(ctx, hub))
		framework.Eventually(t, settle, agentVersionIs(ctx, hub, m, currentVersion))
		framework.Logf("%s of %s: connected again after %s", what, m, time.Since(start).Round(100*time.Millisecond))
		framework.Consistently(t, 5*time.Second, framework.PlacementConditionsTrue(ctx, hub, placementName, members...))
		down := stop()
		resent := metric(t, hubMetrics(t), "flotilla_tunnel_work_sent_total") - sentBefore
		received := upsertsReceived(t, m)
		changed := touched(before, memberVersions(t))
		framework.Logf("MEASURED %s of %s: Work sent by the hub %v, WorkUpserts the new agent received %v, member objects touched %d of %d %v, placements not Available for %s",
			what, m, resent, received, len(changed), len(before), changed, down.Round(time.Millisecond))
		if resent != 0 || received != 0 {
			t.Errorf("%s: Work sent again after the %s: hub counted %v, agent received %v", m, what, resent, received)
		}
		if len(changed) != 0 {
			t.Errorf("%s: member objects rewritten by the %s: %v", m, what, changed)
		}
		if down > 0 {
			t.Errorf("%s: placements were not Available for %s during the %s", m, down, what)
		}
	}
}

func agentVersionIs(ctx context.Context, hub client.Client, member, version string) func() error {
	return func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: member}, mc); err != nil {
			return err
		}
		if mc.Status.AgentVersion != version {
			return fmt.Errorf("%s runs agent %q, want %q", member, mc.Status.AgentVersion, version)
		}
		return nil
	}
}

func refuseTooNewAgent(t *testing.T, hub client.Client) {
	ctx := t.Context()
	const m = "member-2"
	if err := provider.StopAgent(ctx, m); err != nil {
		t.Fatal(err)
	}
	// As when a pod is replaced: the old agent's session has ended.
	framework.Eventually(t, settle, framework.MemberCondition(ctx, hub, m, clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse))
	provider.SetAgentBinary(tooNew.Agent)
	// The agent exits on its own once refused; StartAgent reports an early
	// exit, which is what is expected here.
	_ = provider.StartAgent(ctx, m)
	st, err := provider.State()
	if err != nil {
		t.Fatal(err)
	}
	logFile := st.Processes["agent/"+m].LogFile
	wantLine := "version skew not supported: hub " + currentVersion + " and agent " + tooNewVersion
	framework.Eventually(t, settle, func() error {
		b, err := os.ReadFile(logFile)
		if err != nil {
			return err
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, "agent: ") || !strings.Contains(last, wantLine) {
			return fmt.Errorf("the agent's last line is %q, want its exit line saying %q", last, wantLine)
		}
		return nil
	})
	framework.Eventually(t, settle, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: m}, mc); err != nil {
			return err
		}
		for _, c := range mc.Status.Conditions {
			if c.Type == clusterv1beta1.ConditionAgentConnected && c.Status == metav1.ConditionFalse && c.Reason == clusterv1beta1.ReasonVersionSkew &&
				strings.Contains(c.Message, "agent "+tooNewVersion+" and hub "+currentVersion) && !strings.Contains(c.Message, "\n") {
				return nil
			}
		}
		return fmt.Errorf("%s conditions %v, want AgentConnected False VersionSkew naming both versions", m, mc.Status.Conditions)
	})
	framework.Eventually(t, settle, func() error {
		events := &corev1.EventList{}
		if err := hub.List(ctx, events); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == clusterv1beta1.ReasonVersionSkew && e.InvolvedObject.Name == m && e.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		return fmt.Errorf("no Warning Event %s for %s", clusterv1beta1.ReasonVersionSkew, m)
	})
	// Back to N: the member reconnects and its placement stays.
	provider.SetAgentBinary(current.Agent)
	if err := provider.StartAgent(ctx, m); err != nil {
		t.Fatalf("start agent N on %s again: %v", m, err)
	}
	framework.Eventually(t, settle, agentsConnected(ctx, hub))
	framework.Eventually(t, settle, framework.PlacementConditionsTrue(ctx, hub, placementName, members...))
}

func downgradeHubThenUpdate(t *testing.T, hub client.Client) {
	ctx := t.Context()
	restartHub(t, base.Hub)
	framework.Eventually(t, settle, agentsConnected(ctx, hub))
	framework.Eventually(t, settle, agentVersionIs(ctx, hub, "member-1", currentVersion))
	updateAndReport("red")(t, hub)
}

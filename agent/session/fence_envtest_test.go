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

package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/agent/apply"
	"github.com/flotilla-io/flotilla/agent/session"
	"github.com/flotilla-io/flotilla/agent/session/sessiontest"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// fencedDeploymentWork is a Work of one Deployment of 2 replicas in default,
// fenced with the given lease and ScaleToZero.
func fencedDeploymentWork(t *testing.T, name string, leaseSeconds int32) *placementv1beta1.Work {
	t.Helper()
	labels := map[string]any{"app": name}
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec": map[string]any{
			"replicas": 2,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": name, "image": "registry.example/" + name + ":1"}}},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	work := configMapWork(t, name, "default", "unused", nil)
	work.Spec.Workload.Manifests = []placementv1beta1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	work.Spec.Fencing = &placementv1beta1.FencingPolicy{LeaseSeconds: ptr.To(leaseSeconds), Action: placementv1beta1.FencingScaleToZero}
	return work
}

func deploymentReplicas(name string, want int32) func() error {
	return func() error {
		d, err := kube.AppsV1().Deployments("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := ptr.Deref(d.Spec.Replicas, 1); got != want {
			return fmt.Errorf("deployment %s has %d replicas, want %d", name, got, want)
		}
		return nil
	}
}

// An agent cut off from the hub (the hub goes away) scales its fenced
// Deployment to zero once the lease has run out since its last acknowledged
// heartbeat, and not before; it says so in the Work's status when a hub is
// back, lists the Work without a hash so that the hub sends it again, and
// the hub's Work restores the replicas.
func TestACutOffAgentFencesItsWorkloadsAndTheHubsWorkRestoresThem(t *testing.T) {
	ctx, cancel := context.WithCancel(testContext(t))
	t.Cleanup(func() { deleteObject(t, "deployments", "fenced") })
	const lease = 3 * time.Second
	first := sessiontest.Start(t, sessiontest.Options{HeartbeatPeriod: 500 * time.Millisecond})
	var current atomic.Pointer[sessiontest.Hub]
	current.Store(first)
	applier, err := apply.New(env.Config, apply.Options{Namespace: fmt.Sprintf("records-%d", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	// Rechecks every 10ms: one is nearly always queued or running when the
	// agent fences, as with the watches of a real agent, which see the scale
	// to zero at once; none may undo it as drift.
	r, err := session.New(session.Options{Applier: applier, RecheckInterval: 10 * time.Millisecond,
		RetryInitialInterval: 200 * time.Millisecond, FenceCheckInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	dial := func(ctx context.Context) (*tunnel.ClientSession, error) {
		h := current.Load()
		return tunnel.Dial(ctx, tunnel.DialOptions{Address: h.Addr, TLSConfig: h.ClientTLSConfig(t, memberName),
			ClientOptions: tunnel.ClientOptions{Hello: tunnel.Hello{ClusterName: memberName, AgentVersion: "v0.0.0-test"}}})
	}
	done := make(chan error, 1)
	go func() {
		done <- r.Run(ctx, dial, tunnel.ReconnectOptions{InitialInterval: 100 * time.Millisecond, MaxInterval: 300 * time.Millisecond})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the agent stopped with %v", err)
		}
	})

	s1 := first.NextSession(t, wait)
	work := fencedDeploymentWork(t, "fenced", int32(lease/time.Second))
	hash, err := s1.Upsert(work)
	if err != nil {
		t.Fatal(err)
	}
	sessiontest.Eventually(t, wait, deploymentReplicas("fenced", 2))
	sessiontest.Eventually(t, wait, reportedWith(s1, "fenced", hash, placementv1beta1.ConditionApplied, metav1.ConditionTrue))

	// Cut off: no hub answers any more.
	cutAt := time.Now()
	first.Stop()
	sessiontest.Eventually(t, wait, deploymentReplicas("fenced", 0))
	// The last acknowledged heartbeat was sent at most a heartbeat period
	// (500ms) and the reply's trip before the cut.
	if took, least := time.Since(cutAt), lease-time.Second; took < least {
		t.Errorf("fenced %s after the cut, before the lease of %s could have run out", took, lease)
	}
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := deploymentReplicas("fenced", 0)(); err != nil {
			t.Fatalf("after fencing, a recheck undid it as drift: %v", err)
		}
	}

	// A hub again: the Work is listed without a hash, reported Fenced, and
	// restored once the hub sends it.
	second := sessiontest.Start(t, sessiontest.Options{HeartbeatPeriod: 500 * time.Millisecond})
	current.Store(second)
	s2 := second.NextSession(t, wait)
	for _, item := range s2.Inventory.Items {
		if item.Name == "fenced" && item.Hash != "" {
			t.Errorf("the fenced Work is listed with hash %q: the hub would not send it again", item.Hash)
		}
	}
	if err := s2.SyncDone(); err != nil {
		t.Fatal(err)
	}
	sessiontest.Eventually(t, wait, reportedWith(s2, "fenced", hash, placementv1beta1.ConditionFenced, metav1.ConditionTrue))
	if _, err := s2.Upsert(work); err != nil {
		t.Fatal(err)
	}
	sessiontest.Eventually(t, wait, deploymentReplicas("fenced", 2))
}

// startRunner runs an agent session Runner over applier that dials dial, until
// the returned stop is called (or the test ends).
func startRunner(t *testing.T, applier *apply.Applier, dial func(context.Context) (*tunnel.ClientSession, error)) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(testContext(t))
	r, err := session.New(session.Options{Applier: applier, RecheckInterval: 300 * time.Millisecond,
		RetryInitialInterval: 200 * time.Millisecond, FenceCheckInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- r.Run(ctx, dial, tunnel.ReconnectOptions{InitialInterval: 100 * time.Millisecond, MaxInterval: 300 * time.Millisecond})
	}()
	var once atomic.Bool
	stop = func() {
		if once.CompareAndSwap(false, true) {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("the agent stopped with %v", err)
			}
		}
	}
	t.Cleanup(stop)
	return stop
}

// An agent that restarts while cut off from the hub still fences the Works it
// held, and counts their lease from the last exchange its previous process
// saved on the member, not from its own start: a restarted agent (a crash
// loop, a rescheduled Pod) never keeps a fenced copy running past the lease.
// Back with a hub, it lists the Work without a hash and does not resume it,
// so the copy stays stopped until the hub sends the Work again.
func TestAnAgentRestartedWhileCutOffFencesFromTheLastSavedExchange(t *testing.T) {
	t.Cleanup(func() { deleteObject(t, "deployments", "fenced-restart") })
	const lease = time.Minute
	records := fmt.Sprintf("records-%d", time.Now().UnixNano())
	applier, err := apply.New(env.Config, apply.Options{Namespace: records})
	if err != nil {
		t.Fatal(err)
	}
	var current atomic.Pointer[sessiontest.Hub]
	dial := func(ctx context.Context) (*tunnel.ClientSession, error) {
		h := current.Load()
		if h == nil {
			return nil, errors.New("no hub")
		}
		return tunnel.Dial(ctx, tunnel.DialOptions{Address: h.Addr, TLSConfig: h.ClientTLSConfig(t, memberName),
			ClientOptions: tunnel.ClientOptions{Hello: tunnel.Hello{ClusterName: memberName, AgentVersion: "v0.0.0-test"}}})
	}
	first := sessiontest.Start(t, sessiontest.Options{HeartbeatPeriod: 500 * time.Millisecond})
	current.Store(first)
	stopFirst := startRunner(t, applier, dial)
	s1 := first.NextSession(t, wait)
	work := fencedDeploymentWork(t, "fenced-restart", int32(lease/time.Second))
	hash, err := s1.Upsert(work)
	if err != nil {
		t.Fatal(err)
	}
	sessiontest.Eventually(t, wait, deploymentReplicas("fenced-restart", 2))
	sessiontest.Eventually(t, wait, reportedWith(s1, "fenced-restart", hash, placementv1beta1.ConditionApplied, metav1.ConditionTrue))
	// The agent saves its exchanges while it holds a fenced Work.
	sessiontest.Eventually(t, wait, func() error {
		saved, err := applier.LastExchange(context.Background())
		if err != nil || saved.IsZero() {
			return fmt.Errorf("no exchange saved on the member yet (err: %w)", err)
		}
		return nil
	})

	// The hub goes, then the agent stops; the next agent process finds no hub.
	// Its predecessor's last exchange is made an hour old, as if it had been
	// crash-looping since: counting from its own start it would wait a minute.
	current.Store(nil)
	first.Stop()
	stopFirst()
	if err := applier.SaveLastExchange(context.Background(), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	startRunner(t, applier, dial)
	sessiontest.Eventually(t, lease/3, deploymentReplicas("fenced-restart", 0))
	t.Logf("the restarted agent fenced %s after it started (lease %s)", time.Since(restarted).Round(time.Millisecond), lease)

	// A hub again: the Work is listed without a hash and stays fenced until
	// the hub sends it.
	second := sessiontest.Start(t, sessiontest.Options{HeartbeatPeriod: 500 * time.Millisecond})
	current.Store(second)
	s2 := second.NextSession(t, wait)
	listed := false
	for _, item := range s2.Inventory.Items {
		if item.Name == "fenced-restart" {
			listed = true
			if item.Hash != "" {
				t.Errorf("the Work fenced from its record is listed with hash %q: the hub would not send it again", item.Hash)
			}
		}
	}
	if !listed {
		t.Errorf("the inventory %+v does not list the fenced Work", s2.Inventory.Items)
	}
	if err := s2.SyncDone(); err != nil {
		t.Fatal(err)
	}
	if err := deploymentReplicas("fenced-restart", 0)(); err != nil {
		t.Errorf("after the agent reconnected, before the hub sent the Work: %v", err)
	}
	if _, err := s2.Upsert(work); err != nil {
		t.Fatal(err)
	}
	sessiontest.Eventually(t, wait, deploymentReplicas("fenced-restart", 2))
}

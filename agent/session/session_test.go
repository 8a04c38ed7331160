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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/flotilla/agent/apply"
	"github.com/flotilla-io/flotilla/agent/properties"
	"github.com/flotilla-io/flotilla/agent/session"
	"github.com/flotilla-io/flotilla/agent/session/sessiontest"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

const (
	memberName = "member-1"
	wait       = 30 * time.Second
)

// agent is a Runner under test.
type agent struct {
	applier *apply.Applier
	stop    func() error
}

// startAgent runs an agent against hub, keeping its records in a namespace
// of its own so that tests (and repeated runs) do not see each other's Works.
func startAgent(t *testing.T, hub *sessiontest.Hub, props session.PropertySource) *agent {
	t.Helper()
	return startAgentIn(t, hub, props, fmt.Sprintf("records-%d", time.Now().UnixNano()), false)
}

// startAgentIn runs an agent whose records are in recordNamespace; with watch,
// its Applier watches what it applied and reports changes to the Runner, as
// the agent's main does.
func startAgentIn(t *testing.T, hub *sessiontest.Hub, props session.PropertySource, recordNamespace string, watch bool) *agent {
	t.Helper()
	ctx, cancel := context.WithCancel(testContext(t))
	var r *session.Runner
	opts := apply.Options{Namespace: recordNamespace}
	if watch {
		opts.OnChange = func(work string) { r.Changed(work) }
	}
	applier, err := apply.New(env.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	if watch {
		t.Cleanup(applier.Close)
	}
	r, err = session.New(session.Options{
		Applier:              applier,
		Properties:           props,
		RecheckInterval:      300 * time.Millisecond,
		RetryInitialInterval: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig := hub.ClientTLSConfig(t, memberName)
	dial := func(ctx context.Context) (*tunnel.ClientSession, error) {
		return tunnel.Dial(ctx, tunnel.DialOptions{
			Address:   hub.Addr,
			TLSConfig: tlsConfig,
			ClientOptions: tunnel.ClientOptions{
				Hello: tunnel.Hello{ClusterName: memberName, AgentVersion: "v0.0.0-test"},
			},
		})
	}
	errc := make(chan error, 1)
	go func() {
		errc <- r.Run(ctx, dial, tunnel.ReconnectOptions{InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second})
	}()
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-errc:
			case <-time.After(wait):
				stopErr = errors.New("the agent did not stop")
			}
		})
		return stopErr
	}
	t.Cleanup(func() { _ = stop() })
	return &agent{applier: applier, stop: stop}
}

// reportFor finds the last status report for a Work at a hash.
func reportFor(s *sessiontest.Session, work, hash string) (placementv1beta1.WorkStatus, int, error) {
	var status placementv1beta1.WorkStatus
	n := 0
	for _, r := range s.Reports() {
		if r.WorkName != work || r.Hash != hash {
			continue
		}
		n++
		if err := json.Unmarshal(r.Status, &status); err != nil {
			return status, n, err
		}
	}
	if n == 0 {
		return status, 0, fmt.Errorf("no status report for Work %s at hash %s", work, hash)
	}
	return status, n, nil
}

func conditionIs(conditions []metav1.Condition, t string, want metav1.ConditionStatus) error {
	for _, c := range conditions {
		if c.Type == t {
			if c.Status != want {
				return fmt.Errorf("%s is %s (%s: %s), want %s", t, c.Status, c.Reason, c.Message, want)
			}
			return nil
		}
	}
	return fmt.Errorf("no %s condition", t)
}

func reportedWith(s *sessiontest.Session, work, hash, condition string, want metav1.ConditionStatus) func() error {
	return func() error {
		status, _, err := reportFor(s, work, hash)
		if err != nil {
			return err
		}
		return conditionIs(status.Conditions, condition, want)
	}
}

func configMapResourceVersion(t *testing.T, namespace, name string) string {
	t.Helper()
	cm, err := kube.CoreV1().ConfigMaps(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("failed to get ConfigMap %s/%s: %v", namespace, name, err)
	}
	return cm.ResourceVersion
}

func TestAgentHeartbeatsAppliesReportsReconnectsAndDeletes(t *testing.T) {
	ctx := testContext(t)
	createNode(t, "node-a", "kwok://node-a", "4", "8Gi")
	createNode(t, "node-b", "kwok://node-b", "4", "8Gi")
	collector, err := properties.New(env.Config, properties.Options{Interval: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go collector.Run(ctx)

	hub := sessiontest.Start(t, sessiontest.Options{HeartbeatPeriod: time.Second})
	a := startAgent(t, hub, collector)

	s1 := hub.NextSession(t, wait)
	if s1.Hello.ClusterName != memberName || s1.Hello.AgentVersion != "v0.0.0-test" {
		t.Errorf("Hello = %+v, want cluster %s and agent version v0.0.0-test", s1.Hello, memberName)
	}
	if len(s1.Inventory.Items) != 0 {
		t.Errorf("a new member's inventory = %+v, want none", s1.Inventory.Items)
	}

	// Heartbeats, every period, with the member's properties.
	sessiontest.Eventually(t, wait, func() error {
		hbs := s1.Heartbeats()
		if len(hbs) < 2 {
			return fmt.Errorf("%d heartbeats", len(hbs))
		}
		for i, hb := range hbs {
			if hb.Sequence != uint64(i+1) {
				return fmt.Errorf("heartbeat %d has sequence %d", i, hb.Sequence)
			}
		}
		p := hbs[len(hbs)-1].Properties
		switch {
		case p.NodeCount < 2:
			return fmt.Errorf("node count %d, want at least 2", p.NodeCount)
		case p.Provider != "kwok":
			return fmt.Errorf("provider %q, want kwok", p.Provider)
		case !strings.HasPrefix(p.KubernetesVersion, "v1."):
			return fmt.Errorf("Kubernetes version %q", p.KubernetesVersion)
		case !p.APIServerHealthy:
			return fmt.Errorf("API server not healthy: %s", p.APIServerMessage)
		case p.Allocatable["cpu"] == "" || p.Available["memory"] == "":
			return fmt.Errorf("allocatable %v, available %v", p.Allocatable, p.Available)
		}
		return nil
	})

	// A Work is applied and its status reported at its hash.
	work := configMapWork(t, "web", "default", "web", map[string]string{"greeting": "hello"})
	hash, err := s1.Upsert(work)
	if err != nil {
		t.Fatal(err)
	}
	if err := s1.SyncDone(); err != nil {
		t.Fatal(err)
	}
	sessiontest.Eventually(t, wait, reportedWith(s1, "web", hash, placementv1beta1.ConditionApplied, metav1.ConditionTrue))
	rv := configMapResourceVersion(t, "default", "web")

	// The hub drops the session: the agent reconnects and states the Work
	// with its hash.
	_ = s1.S.Close()
	s2 := hub.NextSession(t, wait)
	want := []tunnel.WorkRef{{Name: "web", Namespace: work.Namespace, Hash: hash}}
	if diff := cmp.Diff(want, s2.Inventory.Items); diff != "" {
		t.Errorf("inventory after reconnect (-want +got):\n%s", diff)
	}
	// After the sync, every Work's status is reported again.
	if err := s2.SyncDone(); err != nil {
		t.Fatal(err)
	}
	sessiontest.Eventually(t, wait, reportedWith(s2, "web", hash, placementv1beta1.ConditionApplied, metav1.ConditionTrue))
	// An unchanged Work sent again is not applied again, but reported.
	_, before, _ := reportFor(s2, "web", hash)
	if _, err := s2.Upsert(work); err != nil {
		t.Fatal(err)
	}
	sessiontest.Eventually(t, wait, func() error {
		if _, n, _ := reportFor(s2, "web", hash); n <= before {
			return fmt.Errorf("%d reports, want more than %d", n, before)
		}
		return nil
	})
	if got := configMapResourceVersion(t, "default", "web"); got != rv {
		t.Errorf("the ConfigMap of an unchanged Work was written again: resourceVersion %s, was %s", got, rv)
	}

	// A deleted Work's objects and record go.
	if err := s2.Delete("web"); err != nil {
		t.Fatal(err)
	}
	sessiontest.Eventually(t, wait, func() error {
		_, err := kube.CoreV1().ConfigMaps("default").Get(ctx, "web", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("ConfigMap default/web still there (err %w)", err)
		}
		records, err := a.applier.Inventory(ctx)
		if err != nil || len(records) != 0 {
			return fmt.Errorf("records %+v (err %w), want none", records, err)
		}
		return nil
	})
	// ...and the hub is told, so that it can let the deleted Work go.
	sessiontest.Eventually(t, wait, func() error {
		for _, r := range s2.Reports() {
			if r.WorkName == "web" && r.Removed {
				return nil
			}
		}
		return fmt.Errorf("no removal confirmed among %d reports", len(s2.Reports()))
	})

	// Stopping says goodbye.
	if err := a.stop(); err != nil {
		t.Fatalf("Run() = %v, want nil on shutdown", err)
	}
	sessiontest.Eventually(t, wait, func() error {
		if g := s2.Goodbye(); g == nil || !strings.Contains(g.Reason, "shutting down") {
			return fmt.Errorf("goodbye %+v", g)
		}
		return nil
	})
}

func TestAgentAppliesTheNewestOfRapidUpdates(t *testing.T) {
	hub := sessiontest.Start(t, sessiontest.Options{})
	startAgent(t, hub, nil)
	t.Cleanup(func() { deleteObject(t, "configmaps", "rapid") })
	s := hub.NextSession(t, wait)

	var last string
	for i := range 5 {
		h, err := s.Upsert(configMapWork(t, "rapid", "default", "rapid", map[string]string{"version": fmt.Sprint(i)}))
		if err != nil {
			t.Fatal(err)
		}
		last = h
	}
	sessiontest.Eventually(t, wait, reportedWith(s, "rapid", last, placementv1beta1.ConditionApplied, metav1.ConditionTrue))
	cm, err := kube.CoreV1().ConfigMaps("default").Get(context.Background(), "rapid", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["version"] != "4" {
		t.Errorf("ConfigMap data = %v, want version 4", cm.Data)
	}
}

func TestAgentReportsWhenAWorkBecomesAvailable(t *testing.T) {
	ctx := testContext(t)
	hub := sessiontest.Start(t, sessiontest.Options{})
	startAgent(t, hub, nil)
	t.Cleanup(func() { deleteObject(t, "deployments", "api") })
	s := hub.NextSession(t, wait)

	labels := map[string]any{"app": "api"}
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "api", "namespace": "default"},
		"spec": map[string]any{
			"replicas": 1,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "api", "image": "registry.example/api:1"}}},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	work := configMapWork(t, "api", "default", "unused", nil)
	work.Spec.Workload.Manifests = []placementv1beta1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	hash, err := s.Upsert(work)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing runs pods in the test cluster, so it is not available yet.
	sessiontest.Eventually(t, wait, reportedWith(s, "api", hash, placementv1beta1.ConditionApplied, metav1.ConditionTrue))
	if err := reportedWith(s, "api", hash, placementv1beta1.ConditionAvailable, metav1.ConditionTrue)(); err == nil {
		t.Fatal("a Deployment without pods was reported available")
	}

	// Play the Deployment controller: the agent notices on its own.
	d, err := kube.AppsV1().Deployments("default").Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	if _, err := kube.AppsV1().Deployments("default").UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	sessiontest.Eventually(t, wait, reportedWith(s, "api", hash, placementv1beta1.ConditionAvailable, metav1.ConditionTrue))
}

// deleteObject deletes an object the test's Works created in namespace
// default, so that the test can run again.
func deleteObject(t *testing.T, resource, name string) {
	var err error
	switch resource {
	case "configmaps":
		err = kube.CoreV1().ConfigMaps("default").Delete(context.Background(), name, metav1.DeleteOptions{})
	case "deployments":
		err = kube.AppsV1().Deployments("default").Delete(context.Background(), name, metav1.DeleteOptions{})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("failed to delete %s default/%s: %v", resource, name, err)
	}
}

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

package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-io/flotilla/agent/apply"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/apiproxy"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// TestMeasureProxiedAndDirectGET reports GET latency (p50, p99) and
// throughput through the hub, one tunnel session and the agent against the
// same GETs sent to the member API server directly, with 100 at once, while
// Work keeps flowing to the same member over the same session; and the
// latency of that Work alone, during the direct GETs and during the proxied
// ones: from the hub sending a WorkUpsert to the agent receiving it (the
// tunnel), and to the agent's StatusReport saying Applied reaching the hub
// (the agent applies it with agent/apply to the member API server, the one
// the GETs load). It measures, it does not judge, and runs only when asked:
//
//	FLOTILLA_MEASURE_PROXY=1 go test ./hub/proxy -run TestMeasure -v
func TestMeasureProxiedAndDirectGET(t *testing.T) {
	if os.Getenv("FLOTILLA_MEASURE_PROXY") != "1" {
		t.Skip("a measurement: set FLOTILLA_MEASURE_PROXY=1 to run it")
	}
	ctrllog.SetLogger(logr.Discard())
	setupRBAC(t)
	d := &sessions{m: map[string]*tunnel.ServerSession{}}
	hubSession, agentSession := handshake(t, "member-1", true)
	connectSession(t, d, "member-1", hubSession, agentSession, true, env.Config)
	work := startWorkFlow(t, hubSession, agentSession)
	// As the hub runs it (decisions kept for 10s), with its limits above
	// the load, so that what is measured is the path, not the 429s; and
	// quiet, as a log line per request would be measured too.
	f := startHub(t, d, Options{MaxInflightPerMember: 200, MaxInflightPerUser: 200, UserQPS: 1e6, UserBurst: 1e6,
		Logger: funcr.New(func(string, string) {}, funcr.Options{}), Authorizer: &CachingAuthorizer{Authorizer: SubjectAccessReviewer{Client: env.Client}}})
	const path = "/api/v1/namespaces/team-a/configmaps/cm-1"

	direct := rest.CopyConfig(env.Config)
	direct.Impersonate = rest.ImpersonationConfig{UserName: apiproxy.DefaultIdentityPrefix + "alice", Groups: []string{"system:authenticated"}}
	direct.QPS, direct.Burst = -1, -1
	directClient, err := rest.HTTPClientFor(direct)
	if err != nil {
		t.Fatal(err)
	}
	send := map[string]func() (int, error){
		"direct": func() (int, error) {
			resp, err := directClient.Get(strings.TrimSuffix(env.Config.Host, "/") + path)
			if err != nil {
				return 0, err
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
			return resp.StatusCode, nil
		},
		"proxied": func() (int, error) {
			req, err := http.NewRequest(http.MethodGet, f.url+apiproxy.PathPrefix("member-1")+path, nil)
			if err != nil {
				return 0, err
			}
			req.Header.Set("X-Remote-User", "alice")
			resp, err := f.proxied.Do(req)
			if err != nil {
				return 0, err
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
			return resp.StatusCode, nil
		},
	}

	// Work alone first: what the Work latency is without GETs.
	stop := work.flow()
	deadline := time.Now().Add(time.Minute)
	for work.count() < 100 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("work     alone:          %s", stop())

	const concurrency, perWorker = 100, 20
	for _, name := range []string{"direct", "proxied"} {
		var mu sync.Mutex
		var latencies []time.Duration
		var wg sync.WaitGroup
		stop := work.flow()
		start := time.Now()
		for range concurrency {
			wg.Go(func() {
				for range perWorker {
					t0 := time.Now()
					code, err := send[name]()
					d := time.Since(t0)
					if err != nil || code != http.StatusOK {
						t.Errorf("%s GET: %d %v", name, code, err)
						return
					}
					mu.Lock()
					latencies = append(latencies, d)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		workLatencies := stop()
		if len(latencies) == 0 {
			continue
		}
		t.Logf("%-8s %d GETs, %d at once: %s, %.0f/s", name, len(latencies), concurrency,
			summarize(latencies), float64(len(latencies))/elapsed.Seconds())
		t.Logf("work     during %-8s: %s", name, workLatencies)
	}
}

// summarize gives the p50 and p99 of latencies.
func summarize(latencies []time.Duration) string {
	if len(latencies) == 0 {
		return "none"
	}
	slices.Sort(latencies)
	p := func(q float64) time.Duration { return latencies[int(q*float64(len(latencies)-1))] }
	return fmt.Sprintf("n=%d p50 %s p99 %s", len(latencies), p(0.50).Round(100*time.Microsecond), p(0.99).Round(100*time.Microsecond))
}

// workFlow sends Work to an agent over a tunnel session, one version at a
// time, and times each from the hub sending its WorkUpsert to the agent's
// StatusReport of it applied.
type workFlow struct {
	t      *testing.T
	hub    *tunnel.ServerSession
	status chan tunnel.StatusReport
	// received is when the agent received each version (by hash).
	received sync.Map
	mu       sync.Mutex
	n        int
}

// startWorkFlow plays the agent's side of Work on agentSession as the agent
// does: it applies every WorkUpsert to env's API server with agent/apply and
// reports the status back.
func startWorkFlow(t *testing.T, hubSession *tunnel.ServerSession, agentSession *tunnel.ClientSession) *workFlow {
	t.Helper()
	applier, err := apply.New(env.Config, apply.Options{Namespace: "flotilla-bench"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(applier.Close)
	if err := agentSession.Work().Send(tunnel.WorkInventory{}); err != nil {
		t.Fatal(err)
	}
	wf := &workFlow{t: t, hub: hubSession, status: make(chan tunnel.StatusReport, 1)}
	go func() {
		for {
			m, err := agentSession.Work().Recv()
			if err != nil {
				return
			}
			up, ok := m.(tunnel.WorkUpsert)
			if !ok {
				continue
			}
			wf.received.Store(up.Hash, time.Now())
			var w placementv1beta1.Work
			if err := json.Unmarshal(up.Work, &w); err != nil {
				t.Errorf("work %s: %v", up.Name, err)
				return
			}
			st, err := applier.Apply(context.Background(), &w)
			if err != nil {
				t.Errorf("apply %s: %v", up.Name, err)
			}
			raw, _ := json.Marshal(st)
			if err := agentSession.Status().Send(tunnel.StatusReport{WorkName: up.Name, Hash: up.Hash, Status: raw}); err != nil {
				return
			}
		}
	}()
	go func() {
		for {
			m, err := hubSession.Status().Recv()
			if err != nil {
				return
			}
			if r, ok := m.(tunnel.StatusReport); ok {
				wf.status <- r
			}
		}
	}()
	go func() {
		for {
			if _, err := hubSession.Work().Recv(); err != nil {
				return
			}
		}
	}()
	if err := hubSession.Work().Send(tunnel.WorkSyncDone{}); err != nil {
		t.Fatal(err)
	}
	return wf
}

func (wf *workFlow) count() int {
	wf.mu.Lock()
	defer wf.mu.Unlock()
	return wf.n
}

// workLatencies are the latencies of the Work versions sent: to the agent
// receiving the WorkUpsert (the tunnel alone), and to the hub receiving the
// agent's StatusReport of it applied (the tunnel both ways and the apply).
type workLatencies struct{ delivered, applied []time.Duration }

func (l workLatencies) String() string {
	return "delivered " + summarize(l.delivered) + "; applied " + summarize(l.applied)
}

// flow sends Work, a new version of a ConfigMap each time, until stop is
// called; stop returns the latencies of every version sent.
func (wf *workFlow) flow() (stop func() workLatencies) {
	done := make(chan struct{})
	out := make(chan workLatencies)
	wf.mu.Lock()
	wf.n = 0
	wf.mu.Unlock()
	go func() {
		var latencies workLatencies
		defer func() { out <- latencies }()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			w := &placementv1beta1.Work{
				TypeMeta:   metav1.TypeMeta{APIVersion: placementv1beta1.GroupVersion.String(), Kind: "Work"},
				ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "flotilla-member-member-1"},
				Spec: placementv1beta1.WorkSpec{Workload: placementv1beta1.WorkloadTemplate{Manifests: []placementv1beta1.Manifest{{RawExtension: runtime.RawExtension{
					Raw: fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bench-work","namespace":"team-a"},"data":{"i":"%d-%d"}}`, time.Now().UnixNano(), i)}}}}},
			}
			raw, err := json.Marshal(w)
			if err != nil {
				wf.t.Error(err)
				return
			}
			hash := apply.SpecHash(w)
			t0 := time.Now()
			if err := wf.hub.Work().Send(tunnel.WorkUpsert{Name: w.Name, Hash: hash, Work: raw}); err != nil {
				wf.t.Errorf("send work: %v", err)
				return
			}
			for r := range wf.status {
				if r.Hash != hash {
					continue
				}
				var st placementv1beta1.WorkStatus
				if err := json.Unmarshal(r.Status, &st); err != nil || !meta.IsStatusConditionTrue(st.Conditions, placementv1beta1.ConditionApplied) {
					wf.t.Errorf("work version %d not applied: %s", i, r.Status)
					return
				}
				break
			}
			latencies.applied = append(latencies.applied, time.Since(t0))
			if at, ok := wf.received.LoadAndDelete(hash); ok {
				latencies.delivered = append(latencies.delivered, at.(time.Time).Sub(t0))
			}
			wf.mu.Lock()
			wf.n++
			wf.mu.Unlock()
		}
	}()
	return func() workLatencies {
		close(done)
		return <-out
	}
}

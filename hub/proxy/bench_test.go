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
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/pkg/apiproxy"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// TestMeasureProxiedAndDirectGET reports GET latency (p50, p99) and
// throughput through the hub, one tunnel session and the agent against the
// same GETs sent to the member API server directly, with 100 at once. It
// measures, it does not judge, and runs only when asked:
//
//	FLOTILLA_MEASURE_PROXY=1 go test ./hub/proxy -run TestMeasure -v
func TestMeasureProxiedAndDirectGET(t *testing.T) {
	if os.Getenv("FLOTILLA_MEASURE_PROXY") != "1" {
		t.Skip("a measurement: set FLOTILLA_MEASURE_PROXY=1 to run it")
	}
	setupRBAC(t)
	d := &sessions{m: map[string]*tunnel.ServerSession{}}
	connectAgent(t, d, "member-1", true)
	// As the hub runs it: decisions kept for 10s.
	f := startHub(t, d, Options{MaxInflightPerMember: 200, Authorizer: &CachingAuthorizer{Authorizer: SubjectAccessReviewer{Client: env.Client}}})
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
	const concurrency, perWorker = 100, 20
	for _, name := range []string{"direct", "proxied"} {
		var mu sync.Mutex
		var latencies []time.Duration
		var wg sync.WaitGroup
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
		sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
		if len(latencies) == 0 {
			continue
		}
		p := func(q float64) time.Duration { return latencies[int(q*float64(len(latencies)-1))] }
		t.Logf("%-8s %d GETs, %d at once: p50 %s p99 %s, %.0f/s", name, len(latencies), concurrency,
			p(0.50).Round(100*time.Microsecond), p(0.99).Round(100*time.Microsecond), float64(len(latencies))/elapsed.Seconds())
	}
}

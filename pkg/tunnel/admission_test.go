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

package tunnel

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/time/rate"

	"github.com/flotilla-io/flotilla/pkg/tunnel/internal/testpki"
)

// A connection the admission limiter does not allow is closed before its TLS
// handshake and counted; the limiter's burst is served.
func TestAdmissionClosesConnectionsOverTheRate(t *testing.T) {
	pki := testpki.New()
	metrics, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := startServer(t, &Server{
		TLSConfig: pki.ServerTLSConfig(),
		Tunnel:    ServerOptions{YamuxConfig: quietYamux(), Metrics: metrics},
		OnTunnel:  echoHeartbeats,
		// Two connections at once, then one an hour: the third is refused.
		Admission: rate.NewLimiter(rate.Every(time.Hour), 2),
	})

	for _, member := range []string{"member-1", "member-2"} {
		s, err := Dial(t.Context(), dialOptions(pki, addr, member, member))
		if err != nil {
			t.Fatalf("Dial %s within the burst: %v", member, err)
		}
		t.Cleanup(func() { s.Close() })
	}
	if s, err := Dial(t.Context(), dialOptions(pki, addr, "member-3", "member-3")); err == nil {
		s.Close()
		t.Fatal("Dial member-3 over the admission rate succeeded")
	}
	if got := testutil.ToFloat64(metrics.refusedConns.WithLabelValues(refusedOverRate)); got != 1 {
		t.Errorf("connections refused over the rate = %v, want 1", got)
	}
	if got := testutil.ToFloat64(metrics.refusedConns.WithLabelValues(refusedOverCap)); got != 0 {
		t.Errorf("connections refused over a cap = %v, want 0", got)
	}
}

// A fleet that redials at once (a hub restart) is admitted at the limiter's
// pace, and every agent ends up connected by its own backoff.
func TestAFleetRedialingAtOnceIsPacedAndEveryAgentConnects(t *testing.T) {
	const agents = 20
	pki := testpki.New()
	metrics, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	connected := make(chan string, agents)
	addr, _ := startServer(t, &Server{
		TLSConfig: pki.ServerTLSConfig(),
		Tunnel:    ServerOptions{YamuxConfig: quietYamux(), Metrics: metrics},
		OnTunnel: func(ctx context.Context, s *ServerSession) {
			connected <- s.PeerName()
			echoHeartbeats(ctx, s)
		},
		Admission: rate.NewLimiter(rate.Limit(20), 4),
	})

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for i := range agents {
		name := "member-" + string(rune('a'+i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = RunWithReconnect(ctx,
				func(ctx context.Context) (*ClientSession, error) {
					return Dial(ctx, dialOptions(pki, addr, name, name))
				},
				func(ctx context.Context, _ *ClientSession) error { <-ctx.Done(); return nil },
				ReconnectOptions{InitialInterval: 10 * time.Millisecond, MaxInterval: 100 * time.Millisecond})
		}()
	}
	seen := map[string]bool{}
	for len(seen) < agents {
		seen[receive(t, connected, "every agent to connect")] = true
	}
	// 20 agents dialing together, a burst of 4 and then one every 50 ms:
	// most were refused at first and got in on a later try.
	if got := testutil.ToFloat64(metrics.refusedConns.WithLabelValues(refusedOverRate)); got < agents/2 {
		t.Errorf("connections refused over the rate = %v, want at least %d", got, agents/2)
	}
}

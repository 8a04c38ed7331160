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

package join_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/flotilla-io/flotilla/agent/join"
	"github.com/flotilla-io/flotilla/agent/session/sessiontest"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// A hub pacing new connections closes the join's first one before its TLS
// handshake; join tries again after a backoff and joins, spending its token
// once.
func TestJoinRetriesAHubThatIsPacingConnections(t *testing.T) {
	ctx := testContext(t)
	forgetIdentity(t)
	reg := prometheus.NewRegistry()
	metrics, err := tunnel.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	// One connection every 2 s, and the bucket is empty: the first attempt
	// is refused.
	admission := rate.NewLimiter(rate.Every(2*time.Second), 1)
	admission.Allow()
	hub := sessiontest.Start(t, sessiontest.Options{Admission: admission, Metrics: metrics})

	if _, err := join.Join(ctx, joinOptions(hub)); err != nil {
		t.Fatalf("Join() failed: %v", err)
	}
	if n := len(hub.Joins()); n != 1 {
		t.Errorf("the hub received %d join requests, want 1", n)
	}
	if got := refusedOverRate(t, reg); got < 1 {
		t.Errorf("connections the hub refused over its admission rate = %v, want at least 1 (the join was not paced)", got)
	}
}

func refusedOverRate(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "flotilla_tunnel_connections_refused_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == "rate" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

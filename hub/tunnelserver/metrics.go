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

package tunnelserver

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics of the hub's tunnel server. No per-cluster labels: the fleet may be large.
type metrics struct {
	sessions         prometheus.Gauge
	heartbeats       prometheus.Counter
	statusWrites     *prometheus.CounterVec
	workSent         *prometheus.CounterVec
	statusReports    *prometheus.CounterVec
	sessionsRejected prometheus.Counter
	// sessionSeconds is flotilla_tunnel_session_duration_seconds (histograms.go).
	sessionSeconds prometheus.Histogram
	// certificateExpiry is when the tunnel's certificates expire.
	certificateExpiry *prometheus.GaugeVec
	// sessionsLost counts sessions this replica ended because another
	// replica holds the member's session now.
	sessionsLost prometheus.Counter
	// serving is 1 while this replica stands (its Lease renewed in time) and
	// 0 while it serves no agents (replica.Standing).
	serving prometheus.Gauge
}

// Values of flotilla_certificate_expiry_timestamp_seconds' certificate label.
const (
	certificateCA              = "tunnel-ca"
	certificateServing         = "tunnel-serving"
	certificateMembersEarliest = "member-earliest"
)

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "flotilla_tunnel_sessions", Help: "Agent tunnel sessions held by this hub replica.",
		}),
		heartbeats: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "flotilla_tunnel_heartbeats_received_total", Help: "Heartbeats received from agents.",
		}),
		statusWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_membercluster_status_writes_total", Help: "MemberCluster status writes by the tunnel server, by cause.",
		}, []string{"cause"}),
		workSent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_tunnel_work_sent_total", Help: "Work upserts and deletes sent to agents.",
		}, []string{"op"}),
		statusReports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_tunnel_status_reports_total", Help: "Work status reports and upsync messages (outcomes upsync-applied, upsync-error, upsync-dropped) received from agents, by outcome.",
		}, []string{"outcome"}),
		sessionsRejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "flotilla_tunnel_sessions_rejected_total", Help: "Tunnel sessions refused at hello.",
		}),
		certificateExpiry: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "flotilla_certificate_expiry_timestamp_seconds",
			Help: "When the hub's certificates expire (Unix seconds): the tunnel CA, the tunnel's serving certificate, and the earliest member certificate among the sessions this replica holds (0 without sessions). Members' own are in MemberCluster status.identity.notAfter.",
		}, []string{"certificate"}),
		sessionsLost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "flotilla_tunnel_sessions_superseded_total", Help: "Sessions this replica ended because the member's status names a newer session (on another replica, or after a re-join).",
		}),
		serving: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "flotilla_tunnel_replica_serving", Help: "1 while this hub replica serves agents; 0 while it does not, because it could not renew its Lease in time (its API server is unreachable).",
		}),
	}
	m.sessions = register(reg, m.sessions)
	m.heartbeats = register(reg, m.heartbeats)
	m.statusWrites = register(reg, m.statusWrites)
	m.workSent = register(reg, m.workSent)
	m.statusReports = register(reg, m.statusReports)
	m.sessionsRejected = register(reg, m.sessionsRejected)
	m.certificateExpiry = register(reg, m.certificateExpiry)
	m.sessionsLost = register(reg, m.sessionsLost)
	m.serving = register(reg, m.serving)
	m.sessionSeconds = register(reg, newSessionSeconds())
	return m, nil
}

// register registers c, or returns the collector already registered under its
// name (a second server in one process, as in tests, shares the counters).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) {
			if existing, ok := already.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(fmt.Sprintf("failed to register a tunnel server metric: %v", err))
	}
	return c
}

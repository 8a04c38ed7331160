package tunnelserver

import (
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
}

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
			Name: "flotilla_tunnel_status_reports_total", Help: "Work status reports received from agents, by outcome.",
		}, []string{"outcome"}),
		sessionsRejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "flotilla_tunnel_sessions_rejected_total", Help: "Tunnel sessions refused at hello.",
		}),
	}
	for _, c := range []prometheus.Collector{m.sessions, m.heartbeats, m.statusWrites, m.workSent, m.statusReports, m.sessionsRejected} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

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

package session

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics holds the session's Prometheus collectors. A nil *Metrics records
// nothing.
type Metrics struct {
	heartbeats    prometheus.Counter
	connected     prometheus.Gauge
	statusReports prometheus.Counter
	fenced        *prometheus.CounterVec
}

// NewMetrics creates the session's collectors and registers them on reg (nil:
// unregistered). Collectors already registered on reg are reused.
//
//	flotilla_agent_heartbeats_sent_total      heartbeats sent to the hub
//	flotilla_agent_connected                  1 while a session to the hub is up, else 0
//	flotilla_agent_status_reports_sent_total  Work status reports sent to the hub
//	flotilla_agent_fenced_total{action}       fenced Works the agent stopped, cut off from the hub
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		heartbeats: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "flotilla_agent_heartbeats_sent_total",
			Help: "Heartbeats the agent sent to the hub.",
		}),
		connected: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "flotilla_agent_connected",
			Help: "1 while the agent holds a tunnel session to the hub, 0 otherwise.",
		}),
		statusReports: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "flotilla_agent_status_reports_sent_total",
			Help: "Work status reports the agent sent to the hub.",
		}),
		fenced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_agent_fenced_total",
			Help: "Fenced Works whose workloads the agent stopped because it was cut off from the hub for longer than their lease, by action (ScaleToZero, Remove).",
		}, []string{"action"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.heartbeats, err = register(reg, m.heartbeats); err != nil {
		return nil, err
	}
	if m.connected, err = register(reg, m.connected); err != nil {
		return nil, err
	}
	if m.statusReports, err = register(reg, m.statusReports); err != nil {
		return nil, err
	}
	if m.fenced, err = register(reg, m.fenced); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c on reg, or returns the collector already registered
// in its place.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("failed to register the agent session metrics: %w", err)
}

func (m *Metrics) heartbeatSent() {
	if m != nil {
		m.heartbeats.Inc()
	}
}

func (m *Metrics) setConnected(up bool) {
	if m == nil {
		return
	}
	if up {
		m.connected.Set(1)
	} else {
		m.connected.Set(0)
	}
}

func (m *Metrics) statusReportSent() {
	if m != nil {
		m.statusReports.Inc()
	}
}

func (m *Metrics) workFenced(action string) {
	if m != nil {
		m.fenced.WithLabelValues(action).Inc()
	}
}

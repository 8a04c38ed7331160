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
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Every session that ends is timed, a replaced one included.
func TestEndedSessionsAreTimed(t *testing.T) {
	m, err := newMetrics(prometheus.NewPedanticRegistry())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	s := &Server{metrics: m, sessions: map[string]*memberSession{}, now: func() time.Time { return now }}
	first := &memberSession{name: "alpha", since: now}
	s.register(first)
	now = now.Add(90 * time.Second)
	if !s.unregister(first) {
		t.Fatal("unregister() = false for the member's session")
	}
	second := &memberSession{name: "alpha", since: now}
	s.sessions["alpha"] = &memberSession{name: "alpha", since: now} // a newer session took over
	now = now.Add(30 * time.Second)
	if s.unregister(second) {
		t.Fatal("unregister() = true for a replaced session")
	}
	h := &dto.Metric{}
	if err := m.sessionSeconds.Write(h); err != nil {
		t.Fatal(err)
	}
	if n, sum := h.GetHistogram().GetSampleCount(), h.GetHistogram().GetSampleSum(); n != 2 || sum != 120 {
		t.Errorf("sessions timed: %d lasting %vs in all, want 2 lasting 120s", n, sum)
	}
}

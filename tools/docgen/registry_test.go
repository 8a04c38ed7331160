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

package main

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/flotilla-io/flotilla/agent/apply"
	"github.com/flotilla-io/flotilla/agent/join"
	"github.com/flotilla-io/flotilla/agent/session"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// registered reports whether a collector of that name is on reg: a probe of the same
// name is refused then. A probe that is accepted is taken out again.
func registered(reg prometheus.Registerer, name string) bool {
	probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "docgen test probe"})
	if err := reg.Register(probe); err != nil {
		return true
	}
	reg.Unregister(probe)
	return false
}

// The metrics page reads collectors from the code; the agent's must be the ones the
// agent registers (agent/app/run.go does the same calls), so the page documents what
// an agent really serves.
func TestEveryAgentMetricReadFromTheCodeIsRegisteredByTheAgent(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := tunnel.NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := session.NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if err := apply.Register(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := join.NewRenewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	found, err := scanMetrics("../..", "agent", "agent")
	if err != nil {
		t.Fatal(err)
	}
	tunnelMetrics, err := scanMetrics("../..", "pkg", "hub and agent")
	if err != nil {
		t.Fatal(err)
	}
	found = append(found, tunnelMetrics...)
	if len(found) < 5 {
		t.Fatalf("found only %d agent metrics in the code: the scan is broken", len(found))
	}
	for _, m := range found {
		if !registered(reg, m.name) {
			t.Errorf("%s (%s) is not registered the way the agent registers its metrics", m.name, m.where)
		}
	}
}

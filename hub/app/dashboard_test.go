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

package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/flotilla-io/flotilla/agent/apply"
	"github.com/flotilla-io/flotilla/agent/join"
	"github.com/flotilla-io/flotilla/agent/session"
	"github.com/flotilla-io/flotilla/pkg/testenv"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID      int    `json:"id"`
		Title   string `json:"title"`
		Type    string `json:"type"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// metricName finds the metric names in a PromQL query: Flotilla's own and the
// controller-runtime ones the hub exports.
var metricName = regexp.MustCompile(`\b(flotilla|controller_runtime|workqueue)_[a-z0-9_]+\b`)

// registered reports whether a collector of that name is registered on reg: a
// probe of the same name is refused then (as a duplicate, or as a clash of help
// and labels). A probe that is accepted is taken out again.
func registered(reg prometheus.Registerer, name string) bool {
	probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "dashboard test probe"})
	if err := reg.Register(probe); err != nil {
		return true
	}
	reg.Unregister(probe)
	return false
}

// hubAndAgentRegistries registers the metrics the way the binaries do: the hub on
// controller-runtime's registry through setupHub (plus what its packages register
// when imported), the agent on a registry of its own (agent/app/run.go).
func hubAndAgentRegistries(t *testing.T) []prometheus.Registerer {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)}, // other tests set the hub up too
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := NewOptions()
	opts.ReplicaName = "dashboard-test"
	if err := setupHub(context.Background(), mgr, opts); err != nil {
		t.Fatal(err)
	}
	agent := prometheus.NewRegistry()
	if _, err := tunnel.NewMetrics(agent); err != nil {
		t.Fatal(err)
	}
	if _, err := session.NewMetrics(agent); err != nil {
		t.Fatal(err)
	}
	if err := apply.Register(agent); err != nil {
		t.Fatal(err)
	}
	if _, err := join.NewRenewMetrics(agent); err != nil {
		t.Fatal(err)
	}
	return []prometheus.Registerer{metrics.Registry, agent}
}

// Every query of the Grafana dashboard names metrics the hub or the agent
// exports, so that no panel stays empty because of a typo or a metric that was
// renamed or never added.
func TestDashboardQueriesNameExportedMetrics(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "manifests", "dashboards", "flotilla.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("the dashboard is not valid JSON: %v", err)
	}
	regs := hubAndAgentRegistries(t)
	exported := func(name string) bool {
		for _, reg := range regs {
			if registered(reg, name) {
				return true
			}
		}
		return false
	}
	if exported("flotilla_no_such_metric") {
		t.Fatal("the probe finds a metric that does not exist")
	}
	var queries []string
	for _, v := range d.Templating.List {
		if q, ok := v.Query.(string); ok && strings.Contains(q, "(") {
			queries = append(queries, q)
		}
	}
	ids := map[int]string{}
	for _, p := range d.Panels {
		if other, ok := ids[p.ID]; ok {
			t.Errorf("panels %q and %q share id %d", other, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			queries = append(queries, target.Expr)
		}
	}
	checked := map[string]bool{}
	for _, q := range queries {
		names := metricName.FindAllString(q, -1)
		if len(names) == 0 {
			t.Errorf("query names no metric: %s", q)
		}
		for _, name := range names {
			if checked[name] {
				continue
			}
			checked[name] = true
			// A histogram's series are <name>_bucket, _count and _sum.
			base := name
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				if trimmed, ok := strings.CutSuffix(name, suffix); ok && !exported(name) {
					base = trimmed
				}
			}
			if !exported(base) {
				t.Errorf("the dashboard queries %s, which neither the hub nor the agent exports (query: %s)", name, q)
			}
		}
	}
	t.Logf("%d queries checked, naming %d metrics", len(queries), len(checked))
}

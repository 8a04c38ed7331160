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

package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// With Options.Prometheus, a kwok fleet runs the prometheus binary on PATH
// (Debian's package: make prometheus) beside the hub, started before it so
// that the hub starts with --prometheus-url. It scrapes every
// PrometheusScrapeInterval:
//
//	job flotilla-hub    each hub replica's metrics endpoint, labelled replica=<name>
//	job flotilla-agent  each member's agent, labelled cluster=<member>
//
// The targets are file_sd files the fleet rewrites whenever it starts a hub
// replica or an agent (an agent started again listens on a new port), so a
// query such as flotilla_agent_drifts_total{cluster=~"{{clusters}}"} in a
// staged run's analysis reads the agents of the stage's clusters.

// PrometheusScrapeInterval is how often the fleet's Prometheus scrapes.
const PrometheusScrapeInterval = time.Second

// prometheusRole is the process role of the fleet's Prometheus.
const prometheusRole = "prometheus"

// Jobs of the fleet's Prometheus.
const (
	PrometheusHubJob   = "flotilla-hub"
	PrometheusAgentJob = "flotilla-agent"
)

func (f *Fleet) prometheusDir() string { return filepath.Join(f.opts.Dir, "prometheus") }

// startPrometheus starts Prometheus (when its binary is on PATH; otherwise it
// says so and the fleet runs without one) and records its URL in the state,
// which makes the hub start with --prometheus-url.
func (f *Fleet) startPrometheus(ctx context.Context, st *State) error {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		fmt.Fprintf(f.opts.Out, "    prometheus is not on PATH (make prometheus installs it): the fleet runs without one\n")
		return nil
	}
	dir := f.prometheusDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("failed to create %s: %w", dir, err)
	}
	config := fmt.Sprintf(`global:
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
  evaluation_interval: %[1]s
scrape_configs:
- job_name: %[2]s
  file_sd_configs:
  - files: [%[3]q]
    refresh_interval: %[1]s
- job_name: %[4]s
  file_sd_configs:
  - files: [%[5]q]
    refresh_interval: %[1]s
`, PrometheusScrapeInterval, PrometheusHubJob, f.targetsFile(PrometheusHubJob), PrometheusAgentJob, f.targetsFile(PrometheusAgentJob))
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		return fmt.Errorf("failed to write %s: %w", configFile, err)
	}
	addr, err := freeAddress()
	if err != nil {
		return err
	}
	st.PrometheusURL = "http://" + addr
	if err := f.writeScrapeTargets(st); err != nil {
		return err
	}
	p, err := startProcess(bin, []string{
		"--config.file=" + configFile,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
		"--log.level=warn",
	}, filepath.Join(f.LogDir(), "prometheus.log"), nil)
	if err != nil {
		return err
	}
	st.Processes[prometheusRole] = p
	if err := f.saveState(st); err != nil {
		return err
	}
	return waitFor(ctx, 60*time.Second, func() error {
		select {
		case <-p.exited:
			return fmt.Errorf("prometheus exited; see %s", p.LogFile)
		default:
		}
		resp, err := http.Get(st.PrometheusURL + "/-/ready")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("prometheus /-/ready answered %s", resp.Status)
		}
		return nil
	})
}

func (f *Fleet) targetsFile(job string) string {
	return filepath.Join(f.prometheusDir(), job+".json")
}

// targetGroup is one entry of a file_sd file.
type targetGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// scrapeTargets returns the file_sd groups of each job: every hub replica and
// every agent the state records, by the metrics address it was started with.
func scrapeTargets(st *State) map[string][]targetGroup {
	out := map[string][]targetGroup{PrometheusHubJob: {}, PrometheusAgentJob: {}}
	for _, r := range st.HubReplicas {
		out[PrometheusHubJob] = append(out[PrometheusHubJob], targetGroup{Targets: []string{r.MetricsAddress}, Labels: map[string]string{"replica": r.Name}})
	}
	roles := make([]string, 0, len(st.Processes))
	for role := range st.Processes {
		roles = append(roles, role)
	}
	sort.Strings(roles)
	for _, role := range roles {
		member, ok := strings.CutPrefix(role, agentRole(""))
		if !ok {
			continue
		}
		if addr := flagValue(st.Processes[role].Args, "--metrics-bind-address"); addr != "" {
			out[PrometheusAgentJob] = append(out[PrometheusAgentJob], targetGroup{Targets: []string{addr}, Labels: map[string]string{"cluster": member}})
		}
	}
	return out
}

// flagValue returns the value of a "--name value" flag in args.
func flagValue(args []string, name string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == name {
			return args[i+1]
		}
	}
	return ""
}

// writeScrapeTargets rewrites the file_sd files from the state (nothing
// without a Prometheus). Prometheus reads them again within a scrape interval.
func (f *Fleet) writeScrapeTargets(st *State) error {
	if st.PrometheusURL == "" {
		return nil
	}
	for job, groups := range scrapeTargets(st) {
		data, err := json.MarshalIndent(groups, "", "  ")
		if err != nil {
			return fmt.Errorf("failed to encode the %s targets: %w", job, err)
		}
		file := f.targetsFile(job)
		if err := os.WriteFile(file+".tmp", data, 0o644); err != nil {
			return fmt.Errorf("failed to write the %s targets: %w", job, err)
		}
		if err := os.Rename(file+".tmp", file); err != nil {
			return fmt.Errorf("failed to write the %s targets: %w", job, err)
		}
	}
	return nil
}

// PrometheusURL is the base URL of the fleet's Prometheus, which the hub
// queries (--prometheus-url); "" when the fleet runs none (Options.Prometheus
// unset, no prometheus on PATH, or a kind fleet).
func (f *Fleet) PrometheusURL() (string, error) {
	st, err := f.loadState()
	if err != nil {
		return "", err
	}
	return st.PrometheusURL, nil
}

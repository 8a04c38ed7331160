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
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// State records what Up made, so that Down (possibly in another process) removes
// exactly that.
type State struct {
	// Clusters are the kwok cluster names, hub first.
	Clusters []string `json:"clusters"`
	// Processes are the local processes started, keyed by role ("hub", "agent/member-1").
	Processes map[string]Process `json:"processes"`
	// HubTunnelAddress is where agents dial the hub.
	HubTunnelAddress string `json:"hubTunnelAddress,omitempty"`
	// HubMetricsAddress and HubHealthAddress are the hub's HTTP endpoints.
	HubMetricsAddress string `json:"hubMetricsAddress,omitempty"`
	HubHealthAddress  string `json:"hubHealthAddress,omitempty"`
	// Members are the member names in order, with the labels they joined with.
	// The hub joined as a member (HubAsMember) is not one of them.
	Members []Member `json:"members"`
	// HubAsMember is set while the hub cluster is joined as member HubMemberName
	// (hubmember.go); its agent is the process agent/hub.
	HubAsMember bool `json:"hubAsMember,omitempty"`
	// HubReplicas are the hub processes (replicas.go); the first one's
	// addresses are also HubMetricsAddress and HubHealthAddress.
	HubReplicas []HubReplica `json:"hubReplicas,omitempty"`
	// BalancerControlAddress is the tunnel balancer's control endpoint, when
	// agents reach the hub through it (HubTunnelAddress is then the
	// balancer's).
	BalancerControlAddress string `json:"balancerControlAddress,omitempty"`
	// PrometheusURL is the fleet's Prometheus (Options.Prometheus), which the
	// hub replicas query; "" when it runs none.
	PrometheusURL string `json:"prometheusURL,omitempty"`
	// Provider made the clusters (ProviderKwok when empty).
	Provider string `json:"provider,omitempty"`
	// ImageTag is the tag of the hub and agent images a kind fleet runs.
	ImageTag string `json:"imageTag,omitempty"`
}

// Member is one member cluster of the fleet.
type Member struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
}

// Process is a local process started by the fleet.
type Process struct {
	PID     int      `json:"pid"`
	Binary  string   `json:"binary"`
	Args    []string `json:"args"`
	LogFile string   `json:"logFile"`

	// exited closes when the process ends, in the process that started it. (Right
	// after start /proc still shows the starter's command line until the child
	// has exec'd, so running() cannot tell a fresh process from a dead one.)
	exited <-chan struct{}
}

func (f *Fleet) statePath() string { return filepath.Join(f.opts.Dir, "state.json") }

func (f *Fleet) loadState() (*State, error) {
	data, err := os.ReadFile(f.statePath())
	if errors.Is(err, os.ErrNotExist) {
		return &State{Processes: map[string]Process{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read the fleet state: %w", err)
	}
	st := &State{}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("failed to parse the fleet state %s: %w", f.statePath(), err)
	}
	if st.Processes == nil {
		st.Processes = map[string]Process{}
	}
	return st, nil
}

func (f *Fleet) saveState(st *State) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("failed to encode the fleet state: %w", err)
	}
	if err := os.MkdirAll(f.opts.Dir, 0o755); err != nil {
		return fmt.Errorf("failed to create %s: %w", f.opts.Dir, err)
	}
	tmp := f.statePath() + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("failed to write the fleet state: %w", err)
	}
	return os.Rename(tmp, f.statePath())
}

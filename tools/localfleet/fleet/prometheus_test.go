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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScrapeTargets(t *testing.T) {
	agent := func(member, metrics string) Process {
		return Process{PID: 1, Binary: "agent", Args: []string{"run", "--kubeconfig", member + ".kubeconfig", "--metrics-bind-address", metrics, "--health-probe-bind-address", "127.0.0.1:9"}}
	}
	for _, tc := range []struct {
		name  string
		state State
		want  map[string][]targetGroup
	}{
		{
			name:  "a fleet with no process yet has no targets",
			state: State{Processes: map[string]Process{}},
			want:  map[string][]targetGroup{PrometheusHubJob: {}, PrometheusAgentJob: {}},
		},
		{
			name: "each hub replica is a hub target and each agent an agent target labelled with its member",
			state: State{
				HubReplicas: []HubReplica{{Name: "localfleet-hub-0", MetricsAddress: "127.0.0.1:100"}, {Name: "localfleet-hub-1", MetricsAddress: "127.0.0.1:101"}},
				Processes: map[string]Process{
					"hub":             {PID: 2, Binary: "hub"},
					"agent/member-2":  agent("member-2", "127.0.0.1:202"),
					"agent/member-1":  agent("member-1", "127.0.0.1:201"),
					"agent/hub":       agent("hub", "127.0.0.1:200"),
					prometheusRole:    {PID: 3, Binary: "prometheus", Args: []string{"--web.listen-address=127.0.0.1:9090"}},
					balancerRole:      {PID: 4, Binary: "localfleet"},
					"agent/no-metric": {PID: 5, Binary: "agent", Args: []string{"run"}},
				},
			},
			want: map[string][]targetGroup{
				PrometheusHubJob: {
					{Targets: []string{"127.0.0.1:100"}, Labels: map[string]string{"replica": "localfleet-hub-0"}},
					{Targets: []string{"127.0.0.1:101"}, Labels: map[string]string{"replica": "localfleet-hub-1"}},
				},
				PrometheusAgentJob: {
					{Targets: []string{"127.0.0.1:200"}, Labels: map[string]string{"cluster": "hub"}},
					{Targets: []string{"127.0.0.1:201"}, Labels: map[string]string{"cluster": "member-1"}},
					{Targets: []string{"127.0.0.1:202"}, Labels: map[string]string{"cluster": "member-2"}},
				},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, scrapeTargets(&tc.state)); diff != "" {
				t.Errorf("scrapeTargets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewRefusesPrometheusOnKind(t *testing.T) {
	_, err := New(Options{Dir: t.TempDir(), RepoRoot: t.TempDir(), Provider: ProviderKind, Prometheus: true})
	if err == nil || !strings.Contains(err.Error(), "--prometheus needs --provider kwok") {
		t.Fatalf("err = %v, want one saying --prometheus needs --provider kwok", err)
	}
}

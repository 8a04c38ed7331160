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

// Package e2e holds Flotilla's end-to-end suites. TestMain brings up one fleet
// (hub + 3 members on kwok clusters) for the whole package and removes it after,
// checking that nothing is left behind.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/tools/localfleet/fleet"
	"github.com/flotilla-io/flotilla/tools/nodeimage/node"
	"github.com/flotilla-io/flotilla/tools/toolchain"
)

// provider is the fleet every test in the package uses.
var provider *framework.KwokProvider

// webImage is the image of the test workloads: one that runs on kind, where
// nothing can be pulled, and any name on kwok, where pods are fakes.
var webImage = "nginx:1.27"

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "flotilla-e2e-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	provider, err = framework.NewKwokProvider(fleet.Options{
		Dir:      dir,
		Members:  3,
		Out:      os.Stderr,
		Provider: framework.ProviderFromEnv(),
		MemberLabels: map[string]map[string]string{
			"member-1": {"env": "prod", "zone": "zone-a"},
			"member-2": {"env": "dev", "zone": "zone-b"},
			"member-3": {"env": "prod", "zone": "zone-b"},
		},
		// A placement that does not tolerate a lost cluster leaves it after 5s
		// (default 60s).
		HubArgs: []string{"--default-toleration", "5s", "--work-cleanup-timeout", "60s",
			// A replica that dies is noticed within 6s (faults_test.go).
			"--replica-lease-duration", "6s",
			// A fenced placement moves 5s after its lease (default 45s, which
			// covers pods' 30s termination grace; kwok's fake pods go at once):
			// partition_test.go.
			"--fencing-margin", "5s"},
		// Agents reach the hub through the tunnel balancer, which the fault
		// suite uses to cut and delay connections and to add a replica.
		TunnelBalancer: true,
		// Agents redial within 2s at most, so that a hundred cuts each find
		// sessions to cut.
		AgentArgs: []string{"--reconnect-max-interval", "2s"},
		// A Prometheus scraping the hub and the agents, which the hub queries
		// for PromQL analyses (promql_test.go); kwok only, and only when
		// prometheus is on PATH (make e2e installs it).
		Prometheus: framework.ProviderFromEnv() != fleet.ProviderKind,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	if framework.ProviderFromEnv() == fleet.ProviderKind {
		// Nothing can be pulled on kind here: workloads run the image every node has.
		root, err := toolchain.RepoRoot()
		if err == nil {
			webImage, err = node.PauseImage(root)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			return 1
		}
	}
	start := time.Now()
	if err := provider.Up(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: fleet up failed: %v\n", err)
		return 1
	}
	framework.Logf("fleet up in %s", time.Since(start).Round(time.Second))
	code := m.Run()
	if code != 0 {
		dumpLogs()
	}
	if os.Getenv("E2E_KEEP_FLEET") != "" {
		framework.Logf("E2E_KEEP_FLEET set: leaving the fleet in %s", dir)
		return code
	}
	if err := checkDownLeavesNothing(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	return code
}

// checkDownLeavesNothing removes the fleet and verifies that every process it ran
// is gone, its folder is gone, and that a second Down is harmless.
func checkDownLeavesNothing(ctx context.Context) error {
	if err := provider.Down(ctx); err != nil {
		return fmt.Errorf("fleet down failed: %w", err)
	}
	if left := provider.LeftoverProcesses(); len(left) > 0 {
		return fmt.Errorf("fleet down left processes running: %v", left)
	}
	if _, err := os.Stat(provider.Dir()); !os.IsNotExist(err) {
		return fmt.Errorf("fleet down left %s behind", provider.Dir())
	}
	if err := provider.Down(ctx); err != nil {
		return fmt.Errorf("a second fleet down failed: %w", err)
	}
	framework.Logf("fleet down left no process or file behind")
	return nil
}

// dumpLogs prints the end of the hub's log (errors and slow operations first), so
// that a failure in CI can be understood from its output alone.
func dumpLogs() {
	data, err := os.ReadFile(filepath.Join(provider.LogDir(), "hub.log"))
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	fmt.Fprintln(os.Stderr, "e2e: notable lines of the hub log:")
	for _, l := range lines {
		if strings.Contains(l, `"level":"error"`) || strings.Contains(l, "slow") || strings.Contains(l, "did not sync") || strings.Contains(l, "waited for") {
			fmt.Fprintln(os.Stderr, "  "+truncate(l, 600))
		}
	}
	if len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	fmt.Fprintln(os.Stderr, "e2e: last lines of the hub log:")
	for _, l := range lines {
		fmt.Fprintln(os.Stderr, "  "+truncate(l, 600))
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

//go:build skew

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

// Package skew runs Flotilla across versions (VERSIONING.md): a fleet of the
// previous version N-1 (the commit in hack/skew-base, built from git) whose
// hub and agents are upgraded in place to this tree's N — the hub while a
// rolling update and a staged run are in progress, then one agent at a time,
// then each agent restarted — with checks that placements stay Available, no
// Work is sent again and no member object is rewritten; a hub N with agents
// N-1 (update, status, join, failover), an agent N with a hub N-1, and an
// agent beyond the supported skew refused on both sides. One fleet serves
// every step. `make e2e-skew` (part of `make test`) runs it.
package skew

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/tools/localfleet/fleet"
	"github.com/flotilla-io/flotilla/tools/toolchain"
)

var (
	provider *framework.KwokProvider
	// base is N-1, current N, tooNew this tree stamped beyond N+1.
	base, current, tooNew binaries
)

var members = []string{"member-1", "member-2"}

// buildOnlyEnv, when set, makes the suite build its binaries and stop: `make
// skew-base` uses it to build the base beside the kwok e2e suite.
const buildOnlyEnv = "FLOTILLA_SKEW_BUILD_ONLY"

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	ctx := context.Background()
	fail := func(err error) int {
		framework.Logf("%v", err)
		return 1
	}
	root, err := toolchain.RepoRoot()
	if err != nil {
		return fail(err)
	}
	commit, err := readBase(root)
	if err != nil {
		return fail(err)
	}
	dir, err := os.MkdirTemp("", "flotilla-e2e-skew-")
	if err != nil {
		return fail(err)
	}
	start := time.Now()
	if base, err = buildBase(ctx, root, commit, framework.Logf); err != nil {
		return fail(fmt.Errorf("failed to build the base %s: %w", commit, err))
	}
	if os.Getenv(buildOnlyEnv) != "" {
		// make skew-base: build (and cache) the base only; no fleet, no tests.
		_ = os.RemoveAll(dir)
		return 0
	}
	if current, err = buildCurrent(ctx, root, filepath.Join(dir, "current"), currentVersion, "./hub", "./agent"); err != nil {
		return fail(err)
	}
	// Only an agent is ever run stamped too new.
	if tooNew, err = buildCurrent(ctx, root, filepath.Join(dir, "too-new"), tooNewVersion, "./agent"); err != nil {
		return fail(err)
	}
	framework.Logf("binaries ready in %s", time.Since(start).Round(time.Second))
	// The fleet starts all on N-1: its hub manifests, hub and agents.
	provider, err = framework.NewKwokProvider(fleet.Options{
		Dir:          filepath.Join(dir, "fleet"),
		Members:      len(members),
		Out:          os.Stderr,
		HubBinary:    base.Hub,
		AgentBinary:  base.Agent,
		HubManifests: base.Manifests,
		// A placement that does not tolerate a lost cluster leaves it after 5s
		// (default 60s): the failover step.
		HubArgs: []string{"--default-toleration", "5s"},
		// Agents redial within 2s of a hub restart.
		AgentArgs: []string{"--reconnect-max-interval", "2s"},
	})
	if err != nil {
		return fail(err)
	}
	start = time.Now()
	if err := provider.Up(ctx); err != nil {
		return fail(fmt.Errorf("fleet up failed: %w", err))
	}
	framework.Logf("fleet of %s up in %s", baseVersion, time.Since(start).Round(time.Second))
	code := m.Run()
	if code != 0 {
		kept := filepath.Join(dir, "logs")
		_ = command(ctx, dir, "cp", "-r", provider.LogDir(), kept)
		framework.Logf("kept the fleet's logs in %s", kept)
	}
	if err := provider.Down(ctx); err != nil {
		framework.Logf("fleet down failed: %v", err)
		return 1
	}
	if code == 0 {
		_ = os.RemoveAll(dir)
	}
	return code
}

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
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/tools/toolchain"
)

func TestDecideComponents(t *testing.T) {
	up := func(name string, age time.Duration) componentState {
		return componentState{Name: name, Running: true, Age: age}
	}
	down := func(name string) componentState { return componentState{Name: name} }
	for _, tc := range []struct {
		name     string
		states   []componentState
		restarts int
		want     componentAction
	}{
		{"all settled", []componentState{up("etcd", time.Minute), up("kube-controller-manager", 20*time.Second)}, 0, componentAction{}},
		{"youngest decides the wait", []componentState{up("etcd", 3*time.Second), up("kube-scheduler", 10*time.Second)}, 0,
			componentAction{Wait: componentSettle - 3*time.Second}},
		{"exited ones restart, sorted, no wait", []componentState{up("etcd", time.Second), down("kube-scheduler"), down("kube-controller-manager")}, 1,
			componentAction{Restart: []string{"kube-controller-manager", "kube-scheduler"}}},
		{"exited after the last restart fails", []componentState{up("etcd", time.Minute), down("kube-controller-manager")}, componentRestarts,
			componentAction{Restart: []string{"kube-controller-manager"}, Fail: true}},
		{"restarts used up but all running", []componentState{up("etcd", time.Minute)}, componentRestarts, componentAction{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decideComponents(tc.states, tc.restarts); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decideComponents = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestEnsureKwokComponentsRestartsAnExitedOne creates a real kwok cluster,
// kills its kube-controller-manager as a loaded machine does at start, and
// checks that the fleet's check brings it back (and lets a healthy cluster
// be).
func TestEnsureKwokComponentsRestartsAnExitedOne(t *testing.T) {
	root, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tools, err := toolchain.Find(root)
	if err != nil {
		t.Fatalf("the kwok cluster this test starts needs the pinned tools (make unit builds them): %v", err)
	}
	var out strings.Builder
	f, err := New(Options{RepoRoot: root, Dir: t.TempDir(), Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	f.tools = tools
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	st := &State{Processes: map[string]Process{}}
	name := fmt.Sprintf("%shealth-%d", clusterPrefix, os.Getpid())
	t.Cleanup(func() { _ = f.kwokctl(context.Background(), "delete", "cluster", "--name", name) })
	if err := f.createCluster(ctx, st, name, filepath.Join(f.opts.Dir, "kubeconfig"), nodeShape{count: 1, cpu: "1", memory: "1Gi"}); err != nil {
		t.Fatal(err)
	}
	pidOf := func() int {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(f.opts.Dir, "kwok", "clusters", name, "pids", "kube-controller-manager.pid"))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	old := pidOf()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, 30*time.Second, func() error {
		states, err := f.kwokComponentStates(name)
		if err != nil {
			return err
		}
		for _, s := range states {
			if s.Name == "kube-controller-manager" && s.Running {
				return fmt.Errorf("pid %d still runs", old)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.ensureKwokComponents(ctx, st); err != nil {
		t.Fatal(err)
	}
	if now := pidOf(); now == old || syscall.Kill(now, 0) != nil {
		t.Fatalf("kube-controller-manager was not restarted: pid %d before, %d after", old, now)
	}
	if !strings.Contains(out.String(), "kube-controller-manager exited; restarting it (1 of 3)") {
		t.Errorf("the check did not say what it restarted:\n%s", out.String())
	}
	// Settled and running: the check changes nothing.
	before := pidOf()
	out.Reset()
	if err := f.ensureKwokComponents(ctx, st); err != nil {
		t.Fatal(err)
	}
	if pidOf() != before || out.Len() != 0 {
		t.Fatalf("a healthy cluster was touched: pid %d → %d, output %q", before, pidOf(), out.String())
	}
}

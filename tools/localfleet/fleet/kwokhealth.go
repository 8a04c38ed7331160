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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A kwok cluster's components are processes kwokctl starts once and never
// watches. On a loaded machine kube-controller-manager exits at start when its
// API server is not healthy within its own 10 s wait, and nothing restarts it:
// the cluster then serves requests but no Deployment ever gets a status. So Up
// checks every component of every kwok cluster before it says the fleet is up,
// and restarts (`kwokctl start cluster` starts only what is not running) what
// has exited.

const (
	// componentSettle is how long a component must have been running to count
	// as started: kube-controller-manager gives up on its API server after
	// 10 s.
	componentSettle = 15 * time.Second
	// componentRestarts is how many times Up restarts a cluster's exited
	// components before it fails with their logs.
	componentRestarts = 3
)

// componentState is what is known of one kwok component process.
type componentState struct {
	Name    string
	Running bool
	// Age is how long it has been running (only when Running).
	Age time.Duration
}

// componentAction is what to do about a cluster's components now.
type componentAction struct {
	// Restart names the exited components (`kwokctl start cluster` restarts
	// them).
	Restart []string
	// Wait is how long to wait before looking again; zero when every
	// component has been running for componentSettle.
	Wait time.Duration
	// Fail is set when components exited again after componentRestarts
	// restarts: Up fails with their logs.
	Fail bool
}

// decideComponents returns what to do about a cluster's components, given
// what each is doing now and how many restarts were made:
//   - any exited: restart them, or fail after componentRestarts restarts;
//   - all running, some for less than componentSettle: wait until the
//     youngest has settled (it may still exit);
//   - all running and settled: nothing.
func decideComponents(states []componentState, restarts int) componentAction {
	var act componentAction
	for _, s := range states {
		if !s.Running {
			act.Restart = append(act.Restart, s.Name)
			continue
		}
		if w := componentSettle - s.Age; w > act.Wait {
			act.Wait = w
		}
	}
	sort.Strings(act.Restart)
	if len(act.Restart) > 0 {
		act.Wait = 0
		act.Fail = restarts >= componentRestarts
	}
	return act
}

// kwokComponentStates reads a kwok cluster's component pid files.
func (f *Fleet) kwokComponentStates(cluster string) ([]componentState, error) {
	dir := filepath.Join(f.opts.Dir, "kwok", "clusters", cluster, "pids")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("failed to read the pid files of %s: %w", cluster, err)
	}
	var out []componentState
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".pid")
		if !ok {
			continue
		}
		s := componentState{Name: name}
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err == nil && pid > 0 && !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			if st, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
				s.Running = !isZombie(pid)
				s.Age = time.Since(st.ModTime())
			}
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no pid files in %s", dir)
	}
	return out, nil
}

// isZombie reports whether pid has exited and waits for its parent to reap it.
func isZombie(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses.
	i := strings.LastIndexByte(string(raw), ')')
	return i < 0 || i+2 >= len(raw) || raw[i+2] == 'Z' || raw[i+2] == 'X'
}

// ensureKwokComponents makes sure every component of every kwok cluster of
// the fleet runs and has settled, restarting what exited.
func (f *Fleet) ensureKwokComponents(ctx context.Context, st *State) error {
	restarts := map[string]int{}
	for _, cluster := range st.Clusters {
		for {
			states, err := f.kwokComponentStates(cluster)
			if err != nil {
				return err
			}
			act := decideComponents(states, restarts[cluster])
			if act.Fail {
				return fmt.Errorf("kwok cluster %s: %s exited again after %d restarts:\n%s",
					cluster, strings.Join(act.Restart, ", "), restarts[cluster], f.kwokLogTails(cluster, act.Restart))
			}
			if len(act.Restart) > 0 {
				restarts[cluster]++
				fmt.Fprintf(f.opts.Out, "    %s: %s exited; restarting it (%d of %d):\n%s",
					cluster, strings.Join(act.Restart, ", "), restarts[cluster], componentRestarts, f.kwokLogTails(cluster, act.Restart))
				// kwokctl starts a component whose pid file names no live
				// process; an exited one nobody reaped (a zombie, where PID 1
				// does not reap) still looks alive to it, so its pid file goes.
				for _, c := range act.Restart {
					if err := os.Remove(filepath.Join(f.opts.Dir, "kwok", "clusters", cluster, "pids", c+".pid")); err != nil && !os.IsNotExist(err) {
						return err
					}
				}
				if err := f.kwokctl(ctx, "start", "cluster", "--name", cluster); err != nil {
					return fmt.Errorf("failed to restart the components of %s: %w", cluster, err)
				}
				continue
			}
			if act.Wait == 0 {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(act.Wait):
			}
		}
	}
	return nil
}

// kwokLogTails returns the last lines of the named components' logs.
func (f *Fleet) kwokLogTails(cluster string, components []string) string {
	var b strings.Builder
	for _, c := range components {
		path := filepath.Join(f.opts.Dir, "kwok", "clusters", cluster, "logs", c+".log")
		raw, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(&b, "      %s: no log: %v\n", c, err)
			continue
		}
		lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
		if len(lines) > 8 {
			lines = lines[len(lines)-8:]
		}
		fmt.Fprintf(&b, "      %s (%s):\n", c, path)
		for _, l := range lines {
			fmt.Fprintf(&b, "        %s\n", l)
		}
	}
	return b.String()
}

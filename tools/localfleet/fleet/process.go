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
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// startProcess starts a detached process in its own process group, logging to
// logFile, and returns it. It outlives the caller (localfleet up exits; the hub and
// agents keep running) until stopProcess.
func startProcess(binary string, args []string, logFile string, env []string) (Process, error) {
	if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
		return Process{}, fmt.Errorf("failed to create the log folder: %w", err)
	}
	out, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return Process{}, fmt.Errorf("failed to open %s: %w", logFile, err)
	}
	defer out.Close()
	cmd := exec.Command(binary, args...)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return Process{}, fmt.Errorf("failed to start %s: %w", binary, err)
	}
	// Reap the child if this process lives long enough (tests); otherwise init does.
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	return Process{PID: cmd.Process.Pid, Binary: binary, Args: args, LogFile: logFile, exited: exited}, nil
}

// running reports whether p is alive and still the program we started (a reused
// PID belongs to someone else and must not be signalled).
func (p Process) running() bool {
	if p.PID <= 0 {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID))
	if err != nil {
		return false
	}
	argv0 := strings.SplitN(string(cmdline), "\x00", 2)[0]
	if argv0 != p.Binary {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID))
	if err != nil {
		return false
	}
	// A zombie has exited; only its parent has not collected it yet.
	if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	return true
}

// stopProcess sends SIGTERM to p's process group, then SIGKILL after grace.
func stopProcess(ctx context.Context, p Process, grace time.Duration) error {
	if !p.running() {
		return nil
	}
	if err := syscall.Kill(-p.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("failed to stop pid %d: %w", p.PID, err)
	}
	deadline := time.Now().Add(grace)
	killed := false
	for p.running() {
		if time.Now().After(deadline) {
			if killed {
				return fmt.Errorf("pid %d (%s) did not exit after SIGKILL", p.PID, p.Binary)
			}
			_ = syscall.Kill(-p.PID, syscall.SIGKILL)
			killed = true
			deadline = time.Now().Add(5 * time.Second)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// LeftoverProcesses lists the live processes whose command line mentions the
// fleet's folder: the hub, agents and every kwok cluster component run from it.
func (f *Fleet) LeftoverProcesses() []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		if strings.Contains(string(cmdline), f.opts.Dir+"/") {
			out = append(out, pid+": "+strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " "))
		}
	}
	return out
}
